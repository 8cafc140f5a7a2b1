// End-to-end tests of the command-line tool: results, exit codes, overrides, determinism.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace testing;
namespace fs = std::filesystem;

namespace {
const std::string kMm1 = source_path("scenarios/validation/mm1.json");
const std::string kShort = " --set duration_ms=100 --set warmup_ms=10";
}  // namespace

TEST_CASE("cli: run writes results.json with the stable keys and conserves requests") {
  const auto dir = fresh_dir("run-keys");
  const auto r = run_cli("run " + kMm1 + kShort + " --out " + dir.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("throughput") != std::string::npos);
  const auto j = nlohmann::json::parse(slurp(dir / "results.json"));
  for (const char* ptr : {"/throughput/ops_per_s", "/latency_us/mean", "/latency_us/p50", "/latency_us/p90",
                          "/latency_us/p99", "/latency_us/p999", "/latency_us/max", "/cpu/total_pct",
                          "/requests/submitted", "/requests/completed", "/requests/in_flight_at_end", "/seed",
                          "/tool/version", "/scenario/machine/cores", "/locks/queue.list_lock/acquisitions",
                          "/locks/queue.list_lock/contended", "/locks/queue.list_lock/wait_ns_total",
                          "/locks/queue.list_lock/hold_ns_total", "/cpu/by_thread/worker_pct"})
    CHECK(j.contains(nlohmann::json::json_pointer(ptr)));
  const auto& rq = j["requests"];
  CHECK(rq["submitted"].get<long>() == rq["completed"].get<long>() + rq["in_flight_at_end"].get<long>());
  // rho = 0.5 with 10 us service: ~50 000 jobs/s and the worker about half busy.
  CHECK(j["throughput"]["ops_per_s"].get<double>() == Approx(50000).epsilon(0.1));
  CHECK(j["cpu"]["by_thread"]["worker_pct"].get<double>() == Approx(50).epsilon(0.1));
  const auto info = nlohmann::json::parse(slurp(dir / "run_info.json"));
  for (const char* k :
       {"wall_s", "events", "events_per_s", "events_per_request", "real_time_factor", "peak_rss_bytes"})
    CHECK(info.contains(k));
  CHECK(info["events_per_request"].get<double>() ==
        Approx(info["events"].get<double>() / rq["completed"].get<double>()));
}

TEST_CASE("cli: the same scenario and seed give byte-identical results, another seed does not") {
  const auto dir = fresh_dir("determinism");
  REQUIRE(run_cli("run " + kMm1 + kShort + " --quiet --out " + (dir / "a").string()).exit_code == 0);
  REQUIRE(run_cli("run " + kMm1 + kShort + " --quiet --out " + (dir / "b").string()).exit_code == 0);
  REQUIRE(run_cli("run " + kMm1 + kShort + " --quiet --seed 7 --out " + (dir / "c").string()).exit_code == 0);
  const auto a = slurp(dir / "a" / "results.json"), b = slurp(dir / "b" / "results.json"),
             c = slurp(dir / "c" / "results.json");
  REQUIRE(!a.empty());
  CHECK(a == b);
  CHECK(a != c);
  CHECK(nlohmann::json::parse(c)["seed"] == 7);
}

TEST_CASE("cli: --set overrides are type-checked and land in the results") {
  const auto dir = fresh_dir("set");
  auto ok =
      run_cli("run " + kMm1 + kShort + " --quiet --set workload.service.mean_us=5 --out " + dir.string());
  INFO(ok.output);
  REQUIRE(ok.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(dir / "results.json"));
  CHECK(j["scenario"]["workload"]["service"]["mean_us"] == 5);
  // Half the service time at the same arrival rate: the worker is about a quarter busy.
  CHECK(j["cpu"]["by_thread"]["worker_pct"].get<double>() == Approx(25).epsilon(0.15));

  const auto bad = run_cli("run " + kMm1 + " --set machine.cores=many --out " + (dir / "bad").string());
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("/machine/cores") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "bad" / "results.json"));
}

TEST_CASE("cli: a variant applies its overrides") {
  const auto dir = fresh_dir("variant");
  const auto r =
      run_cli("run " + kMm1 + " --variant rho08 --quiet --set duration_ms=100 --out " + dir.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(dir / "results.json"));
  CHECK(j["variant"] == "rho08");
  CHECK(j["scenario"]["workload"]["arrival"]["mean_us"] == 12.5);
  CHECK(j["scenario"]["duration_ms"] == 100);  // --set wins over the variant
  CHECK(run_cli("run " + kMm1 + " --variant nope --out " + (dir / "x").string()).exit_code == 2);
}

TEST_CASE("cli: bad input exits 2 with the field named and writes no result file") {
  const auto dir = fresh_dir("bad-input");
  const auto scen = dir / "bad.json";
  std::ofstream(scen) << R"({"name": "x", "machine": {"cores": "4"}, "workload": {"type": "queue"}})";
  const auto r = run_cli("run " + scen.string() + " --out " + (dir / "out").string());
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("/machine/cores") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
  const auto missing = run_cli("run " + (dir / "nope.json").string() + " --out " + (dir / "out").string());
  CHECK(missing.exit_code == 2);
  CHECK_FALSE(fs::exists(dir / "out"));
  CHECK(run_cli("run").exit_code == 2);         // missing argument
  CHECK(run_cli("frobnicate").exit_code == 2);  // unknown subcommand
  CHECK(run_cli("run " + kMm1 + " --seed -3").exit_code == 2);
}

TEST_CASE("cli: --version and --help") {
  const auto v = run_cli("--version");
  CHECK(v.exit_code == 0);
  CHECK(v.output.find("uringsim") != std::string::npos);
  for (const char* sub : {"run", "validate"}) {
    const auto h = run_cli(std::string(sub) + " --help");
    CHECK(h.exit_code == 0);
    CHECK(h.output.find("--") != std::string::npos);
  }
}

TEST_CASE("cli: validate --quick passes every check against queueing theory") {
  const auto r = run_cli("validate --quick --json");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.output);
  REQUIRE(j.size() >= 10);
  for (const auto& row : j) CHECK(row["pass"].get<bool>());
}

TEST_CASE("cli: compare replicates variants and marks a real difference significant") {
  const auto dir = fresh_dir("compare");
  const auto r = run_cli("compare " + kMm1 + " --variants rho08,rho09 --reps 3 --set duration_ms=100 --out " +
                         dir.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(dir / "compare.json"));
  CHECK(j["reps"] == 3);
  CHECK(j["seeds"] == nlohmann::json::array({1, 2, 3}));
  const auto& tp = j["metrics"]["/throughput/ops_per_s"]["by_variant"];
  CHECK(tp["rho08"]["values"].size() == 3);
  // Arrival rates 80 000/s and 90 000/s: the difference is real and must be found.
  CHECK(tp["rho08"]["mean"].get<double>() == Approx(80000).epsilon(0.05));
  CHECK(tp["rho09"]["diff_vs_baseline"]["significant"].get<bool>());
  CHECK(tp["rho09"]["diff_vs_baseline"]["diff"].get<double>() == Approx(10000).epsilon(0.3));
  const auto csv = slurp(dir / "compare.csv");
  CHECK(csv.rfind("row,variant,rep,seed,throughput_ops_per_s", 0) == 0);  // layout: tests/test_outputs.cpp
  CHECK(run_cli("compare " + kMm1 + " --variants nope --reps 2").exit_code == 2);
}
