// Scenario loading: defaults, --set, variants, seed and the cost table.
#include <catch2/catch.hpp>

#include <string>

#include "config/scenario.hpp"
#include "uringsim_data.hpp"

using namespace uringsim::config;

namespace {

const char* const kMinimal = R"({
  "name": "mini",
  "workload": {
    "type": "queue",
    "servers": 2,
    "arrival": {"kind": "exponential", "mean_us": 10},
    "service": {"kind": "constant", "value_us": 5}
  }
})";

const char* const kWithVariants = R"({
  "name": "with-variants",
  "machine": {"cores": 8},
  "workload": {
    "type": "queue",
    "servers": 2,
    "arrival": {"kind": "exponential", "mean_us": 10},
    "service": {"kind": "constant", "value_us": 5}
  },
  "variants": {
    "big": {"machine.cores": 64, "workload.servers": 32},
    "slow": {"machine.ghz": 1.5, "costs.wake_cycles": 1200, "kernel.era": "5.15"}
  }
})";

// The message of the InputError that loading throws ("" if it loads).
std::string load_error(const std::string& text, const LoadOptions& opts = {}) {
  try {
    load_scenario_text(text, "t.json", opts);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

LoadOptions with_sets(std::vector<std::string> sets, std::string variant = "") {
  LoadOptions o;
  o.sets = std::move(sets);
  o.variant = std::move(variant);
  return o;
}

}  // namespace

TEST_CASE("config: minimal scenario loads with defaults filled") {
  Scenario s = load_scenario_text(kMinimal, "mini.json");
  CHECK(s.source == "mini.json");
  CHECK(s.variant.empty());
  CHECK(s.at("/name") == "mini");
  CHECK(s.at("/description") == "");
  CHECK(s.at("/seed") == 1);
  CHECK(s.at("/duration_ms") == 1000);
  CHECK(s.at("/warmup_ms") == 100);
  CHECK(s.at("/machine/cores") == 4);
  CHECK(s.at("/machine/ghz").get<double>() == 3.0);
  CHECK(s.at("/kernel/era") == "6.x");
  CHECK(s.at("/measure/percentiles") == nlohmann::json::parse("[50, 90, 99, 99.9]"));
  CHECK(s.at("/measure/interval_ms") == 10);
  CHECK(s.at("/variants") == nlohmann::json::object());
  CHECK(s.at("/workload/servers") == 2);
  CHECK(s.at("/workload/arrival/kind") == "exponential");
  CHECK(s.at("/workload/arrival/mean_us") == 10);
  // The filled document lists every cost entry at its value.
  CHECK(s.at("/costs") == CostTable::defaults().values());
  CHECK(s.costs.values() == CostTable::defaults().values());

  CHECK_THROWS_AS(s.at("/machine/sockets"), std::logic_error);
  CHECK_THROWS_AS(s.at("machine"), std::logic_error);  // not a JSON pointer
}

TEST_CASE("config: explicit values are kept and every distribution kind loads") {
  Scenario s = load_scenario_text(R"({
    "name": "full", "description": "all set", "seed": 7, "duration_ms": 2.5, "warmup_ms": 0,
    "machine": {"cores": 4096, "ghz": 2},
    "kernel": {"era": "5.18"},
    "measure": {"percentiles": [100, 0.5], "interval_ms": 0.25},
    "workload": {
      "type": "queue", "servers": 1,
      "arrival": {"kind": "lognormal", "mean_us": 3, "sigma": 0},
      "service": {"kind": "empirical", "points_us": [[1, 0], [1, 0.5], [4.5, 1.0]]}
    }
  })",
                                  "full.json");
  CHECK(s.at("/seed") == 7);
  CHECK(s.at("/duration_ms").get<double>() == 2.5);
  CHECK(s.at("/warmup_ms") == 0);
  CHECK(s.at("/machine/cores") == 4096);
  CHECK(s.at("/kernel/era") == "5.18");
  CHECK(s.at("/measure/percentiles") == nlohmann::json::parse("[100, 0.5]"));
  CHECK(s.at("/workload/service/points_us/2/0").get<double>() == 4.5);
}

TEST_CASE("config: --set overrides numbers and strings and checks their types") {
  Scenario s = load_scenario_text(
      kMinimal, "mini.json",
      with_sets({"machine.cores=16", "machine.ghz=2.5", "duration_ms=20", "name=renamed-run",
                 "kernel.era=5.15", "description=\"quoted\"", "measure.percentiles=[50, 99.99]",
                 "workload.arrival.mean_us=4", "workload.service={\"kind\":\"exponential\",\"mean_us\":3}",
                 "costs.wake_cycles=900"}));
  CHECK(s.at("/machine/cores") == 16);
  CHECK(s.at("/machine/ghz").get<double>() == 2.5);
  CHECK(s.at("/duration_ms") == 20);
  CHECK(s.at("/name") == "renamed-run");
  // A string field takes the text as written: 5.15 is a kernel version, not a number.
  CHECK(s.at("/kernel/era") == "5.15");
  CHECK(s.at("/description") == "quoted");
  CHECK(s.at("/measure/percentiles") == nlohmann::json::parse("[50, 99.99]"));
  CHECK(s.at("/workload/arrival/mean_us") == 4);
  CHECK(s.at("/workload/service") == nlohmann::json::parse(R"({"kind":"exponential","mean_us":3})"));
  CHECK(s.costs.get("wake_cycles") == 900);

  CHECK(load_error(kMinimal, with_sets({"machine.cores=abc"})) ==
        "--set machine.cores=abc: /machine/cores: expected integer in [1, 4096], got \"abc\"");
  CHECK(load_error(kMinimal, with_sets({"machine.cores=2.5"})) ==
        "--set machine.cores=2.5: /machine/cores: expected integer in [1, 4096], got 2.5");
  CHECK(load_error(kMinimal, with_sets({"machine.ghz=0"})) ==
        "--set machine.ghz=0: /machine/ghz: expected number in [0.01, 100], got 0");
  CHECK(load_error(kMinimal, with_sets({"kernel.era=4.19"})) ==
        "--set kernel.era=4.19: /kernel/era: expected one of \"5.15\", \"5.16\", \"5.18\", \"6.x\", got "
        "\"4.19\"");
  CHECK(load_error(kMinimal, with_sets({"costs.wake_cycles=-1"})) ==
        "--set costs.wake_cycles=-1: /costs/wake_cycles: expected number in [0, 1000000000], got -1");
  CHECK(load_error(kMinimal, with_sets({"workload.arrival={\"kind\":\"exponential\",\"mean_us\":0}"})) ==
        "--set workload.arrival={\"kind\":\"exponential\",\"mean_us\":0}: /workload/arrival/mean_us: "
        "expected number in (0, 1000000000], got 0");
}

TEST_CASE("config: --set path errors") {
  CHECK(load_error(kMinimal, with_sets({"machine.corez=4"})) ==
        "--set machine.corez=4: unknown field (did you mean \"machine.cores\"?)");
  // The suggestion keeps the rest of the path.
  CHECK(load_error(kMinimal, with_sets({"mashine.cores=4"})) ==
        "--set mashine.cores=4: unknown field (did you mean \"machine.cores\"?)");
  CHECK(load_error(kMinimal, with_sets({"sockets=2"})) == "--set sockets=2: unknown field");
  CHECK(load_error(kMinimal, with_sets({"workload.server=4"})) ==
        "--set workload.server=4: unknown field (did you mean \"workload.servers\"?)");
  CHECK(load_error(kMinimal, with_sets({"costs.wake_cycle=4"})) ==
        "--set costs.wake_cycle=4: unknown field (did you mean \"costs.wake_cycles\"?)");
  // Fields of the distribution kind the document selects, not of other kinds.
  CHECK(load_error(kMinimal, with_sets({"workload.arrival.sigma=1"})) ==
        "--set workload.arrival.sigma=1: unknown field");
  CHECK(load_error(kMinimal, with_sets({"machine.cores.x=4"})) ==
        "--set machine.cores.x=4: \"machine.cores\" is not an object (expected integer in [1, 4096]): set it "
        "as a whole");
  CHECK(load_error(kMinimal, with_sets({"variants.x={}"})) ==
        "--set variants.x={}: \"variants\" cannot be overridden");
  CHECK(load_error(kMinimal, with_sets({"machine..cores=4"})) ==
        "--set machine..cores=4: invalid path (expected field names joined by dots, e.g. machine.cores)");
  CHECK(load_error(kMinimal, with_sets({"machine.cores"})) ==
        "--set machine.cores: expected dotted.path=value");
  CHECK(load_error(kMinimal, with_sets({"=4"})) == "--set =4: expected dotted.path=value");
}

TEST_CASE("config: --set that breaks the document as a whole is reported") {
  // Each value passes its own field's check, but lognormal needs sigma.
  CHECK(load_error(kMinimal, with_sets({"workload.arrival.kind=lognormal"})) ==
        "t.json (with --set): /workload/arrival/sigma: missing required field");
  CHECK(load_error(kWithVariants, with_sets({"workload.arrival.kind=constant"}, "big")) ==
        "t.json (variant big, with --set): /workload/arrival/mean_us: unknown key");
}

TEST_CASE("config: variants apply and --set wins over the variant") {
  Scenario base = load_scenario_text(kWithVariants, "v.json");
  CHECK(base.variant.empty());
  CHECK(base.at("/machine/cores") == 8);

  LoadOptions big;
  big.variant = "big";
  Scenario s = load_scenario_text(kWithVariants, "v.json", big);
  CHECK(s.variant == "big");
  CHECK(s.at("/machine/cores") == 64);
  CHECK(s.at("/workload/servers") == 32);

  LoadOptions slow;
  slow.variant = "slow";
  Scenario t = load_scenario_text(kWithVariants, "v.json", slow);
  CHECK(t.at("/machine/cores") == 8);
  CHECK(t.at("/machine/ghz").get<double>() == 1.5);
  CHECK(t.at("/kernel/era") == "5.15");
  CHECK(t.costs.get("wake_cycles") == 1200);

  Scenario u =
      load_scenario_text(kWithVariants, "v.json", with_sets({"machine.cores=128", "machine.ghz=2"}, "big"));
  CHECK(u.at("/machine/cores") == 128);
  CHECK(u.at("/workload/servers") == 32);
  CHECK(u.at("/machine/ghz") == 2);
}

TEST_CASE("config: variant errors") {
  LoadOptions bad;
  bad.variant = "huge";
  CHECK(load_error(kWithVariants, bad) == "t.json: unknown variant \"huge\" (variants: \"big\", \"slow\")");
  CHECK(load_error(kMinimal, bad) == "t.json: unknown variant \"huge\" (the file defines no variants)");

  // Every variant is checked at load, whether selected or not.
  const char* broken = R"({
    "name": "x",
    "workload": {"type": "queue", "servers": 1,
                 "arrival": {"kind": "constant", "value_us": 1}, "service": {"kind": "constant", "value_us": 1}},
    "variants": {"ok": {"machine.cores": 2}, "broken": {"machine.cores": "many"}}
  })";
  CHECK(load_error(broken) ==
        "t.json: /variants/broken/machine.cores: expected integer in [1, 4096], got \"many\"");
  LoadOptions ok;
  ok.variant = "ok";
  CHECK(load_error(broken, ok) == load_error(broken));

  const char* bad_path = R"({
    "name": "x",
    "workload": {"type": "queue", "servers": 1,
                 "arrival": {"kind": "constant", "value_us": 1}, "service": {"kind": "constant", "value_us": 1}},
    "variants": {"a/b": {"workload.arival.value_us": 2}}
  })";
  CHECK(load_error(bad_path) ==
        "t.json: /variants/a~1b/workload.arival.value_us: unknown field "
        "(did you mean \"workload.arrival.value_us\"?)");

  // A nested value inside an override is located below the override's path.
  const char* nested = R"({
    "name": "x",
    "workload": {"type": "queue", "servers": 1,
                 "arrival": {"kind": "constant", "value_us": 1}, "service": {"kind": "constant", "value_us": 1}},
    "variants": {"v": {"workload.service": {"kind": "exponential", "mean_us": -3}}}
  })";
  CHECK(load_error(nested) ==
        "t.json: /variants/v/workload.service/mean_us: expected number in (0, 1000000000], got -3");

  // Overrides apply in document order, so a variant may switch a tag and then set the new fields.
  const char* switch_kind = R"({
    "name": "x",
    "workload": {"type": "queue", "servers": 1,
                 "arrival": {"kind": "constant", "value_us": 1}, "service": {"kind": "constant", "value_us": 1}},
    "variants": {"v": {"workload.arrival": {"kind": "lognormal", "mean_us": 2, "sigma": 1},
                       "workload.arrival.sigma": 0.5}}
  })";
  LoadOptions v;
  v.variant = "v";
  CHECK(load_scenario_text(switch_kind, "t.json", v).at("/workload/arrival/sigma").get<double>() == 0.5);
}

TEST_CASE("config: --seed replaces the seed of the scenario") {
  LoadOptions o;
  o.seed = 42;
  CHECK(load_scenario_text(kMinimal, "mini.json", o).at("/seed") == 42);
  o.sets = {"seed=5"};
  CHECK(load_scenario_text(kMinimal, "mini.json", o).at("/seed") == 42);
  CHECK(load_error(kMinimal, with_sets({"seed=-1"})) ==
        "--set seed=-1: /seed: expected integer >= 0, got -1");
}

TEST_CASE("config: cost table defaults and overrides and errors") {
  CostTable d = CostTable::defaults();
  auto file = nlohmann::json::parse(uringsim::data::costs());
  std::vector<std::string> expected_keys;
  for (const auto& [key, entry] : file["entries"].items()) {
    expected_keys.push_back(key);
    CHECK(d.get(key) == entry["default"].get<double>());
    CHECK(d.describe()[key]["unit"] == entry["unit"]);
    CHECK(d.describe()[key]["source"] == entry["source"]);
  }
  CHECK(d.keys() == expected_keys);  // both sorted
  CHECK(CostTable().values() == d.values());
  CHECK_THROWS_AS(d.get("no_such_cycles"), std::logic_error);
  CHECK_THROWS_AS(d.set("no_such_cycles", 1), std::logic_error);

  Scenario s = load_scenario_text(R"({
    "name": "c", "costs": {"wake_cycles": 0, "wakeup_latency_ns": 2500.5},
    "workload": {"type": "queue", "servers": 1,
                 "arrival": {"kind": "constant", "value_us": 1}, "service": {"kind": "constant", "value_us": 1}}
  })",
                                  "c.json");
  CHECK(s.costs.get("wake_cycles") == 0);
  CHECK(s.costs.get("wakeup_latency_ns") == 2500.5);
  CHECK(s.costs.get("context_switch_cycles") == d.get("context_switch_cycles"));
  CHECK(s.costs.describe()["wake_cycles"]["value"] == 0.0);
  CHECK(s.costs.describe()["wake_cycles"]["default"] == d.get("wake_cycles"));
  CHECK(s.at("/costs/wakeup_latency_ns").get<double>() == 2500.5);

  CHECK(load_error(R"({"name": "c", "costs": {"wake_cycles": "fast"}})") ==
        "t.json: /costs/wake_cycles: expected number in [0, 1000000000], got \"fast\"");
  CHECK(load_error(R"({"name": "c", "costs": {"wakeup_cycles": 1}})") ==
        "t.json: /costs/wakeup_cycles: unknown key (did you mean \"wake_cycles\"?)");
}

TEST_CASE("config: parse_set_value reads JSON or else bare text") {
  CHECK(parse_set_value("20") == 20);
  CHECK(parse_set_value("1.5") == 1.5);
  CHECK(parse_set_value("true") == true);
  CHECK(parse_set_value("\"x\"") == "x");
  CHECK(parse_set_value("[1, 2]") == nlohmann::json::parse("[1, 2]"));
  CHECK(parse_set_value("{\"a\": 1}") == nlohmann::json::parse("{\"a\": 1}"));
  CHECK(parse_set_value("abc") == "abc");
  CHECK(parse_set_value("6.x") == "6.x");
  CHECK(parse_set_value("") == "");
  CHECK(parse_set_value("[1,") == "[1,");
}

TEST_CASE("config: JSON syntax errors name line and column and duplicate keys are refused") {
  CHECK(load_error("{\n  \"name\": \"x\",\n  \"seed\": 1,,\n}") ==
        "t.json:3:13: invalid JSON: syntax error while parsing object key - unexpected ','; expected string "
        "literal");
  CHECK(load_error("") ==
        "t.json:1:1: invalid JSON: syntax error while parsing value - unexpected end of input; "
        "expected '[', '{', or a literal");
  CHECK(
      load_error("{\"name\": \"x\"} x") ==
      "t.json:1:15: invalid JSON: syntax error while parsing value - invalid literal; expected end of input");
  CHECK(load_error(R"({"name": "x", "measure": {"percentiles": [{"a": 1, "a": 2}]}})") ==
        "t.json: /measure/percentiles/0/a: duplicate key");
}

TEST_CASE("config: load_scenario_file reports unreadable files") {
  std::string missing = std::string(URINGSIM_SOURCE_DIR) + "/tests/bad_scenarios/no_such_file.json";
  try {
    load_scenario_file(missing);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == missing + ": cannot read: No such file or directory");
  }
  CHECK_THROWS_AS(load_scenario_file(URINGSIM_SOURCE_DIR), InputError);
}
