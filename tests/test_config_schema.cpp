// Schema mechanics on a small schema of its own: every spec type, bounds, $ref, maps, and the
// checks that keep scenarios/schema.json itself well-formed.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "config/input_error.hpp"
#include "config/overrides.hpp"
#include "config/schema.hpp"
#include "config/suggest.hpp"

using namespace uringsim::config;

namespace {

const char* const kSchema = R"({
  "about": "test schema",
  "definitions": {
    "shape": {"type": "union", "tag": "kind", "doc": "A shape.", "variants": {
      "dot": {"doc": "A dot.", "fields": {}},
      "circle": {"doc": "A circle.", "fields": {
        "radius_us": {"type": "number", "min": 0, "required": true, "doc": "Radius."}}}}}
  },
  "root": {"type": "object", "doc": "Test root.", "fields": {
    "flag": {"type": "boolean", "default": false, "doc": "A switch."},
    "ratio": {"type": "number", "min_exclusive": 0, "max_exclusive": 1, "unit": "dimensionless",
              "default": 0.5, "doc": "A ratio."},
    "limit_bytes": {"type": "integer", "max": 10, "default": 1, "doc": "A limit."},
    "below_ns": {"type": "integer", "max_exclusive": 10, "default": 1, "doc": "Strictly below."},
    "label": {"type": "string", "default": "x", "doc": "A label."},
    "pair_us": {"type": "array", "min_items": 2, "max_items": 2, "items": {"type": "number"},
                "default": [1, 2], "doc": "A pair."},
    "few_us": {"type": "array", "max_items": 2, "items": {"type": "number"}, "default": [], "doc": "Few."},
    "shape": {"$ref": "shape", "default": {"kind": "dot"}, "doc": "The shape."},
    "tags": {"type": "map", "values": {"type": "string"}, "default": {}, "doc": "Free-form tags."},
    "inner": {"type": "object", "default": {}, "doc": "Nested.", "fields": {
      "deep": {"type": "object", "default": {}, "doc": "Deeper.", "fields": {
        "n_cycles": {"type": "integer", "min": 0, "default": 3, "doc": "A count."}}}}}
  }}
})";

Schema test_schema() {
  return Schema(ojson::parse(kSchema), CostTable::defaults());
}

std::string error_of(const Schema& schema, const char* doc) {
  try {
    validate(schema, schema.root(), ojson::parse(doc), "", "s");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The logic_error message for a malformed schema whose root has one field `f` with spec `field`.
std::string schema_error(const std::string& field) {
  try {
    Schema(ojson::parse(R"({"root": {"type": "object", "doc": "r", "fields": {"f": )" + field + "}}}"),
           CostTable::defaults());
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("config: schema checks every type and bound") {
  Schema s = test_schema();
  CHECK(error_of(s, "{}") == "");
  CHECK(error_of(s, R"({"flag": 1})") == "s: /flag: expected true or false, got 1");
  CHECK(error_of(s, R"({"ratio": 1})") == "s: /ratio: expected number in (0, 1), got 1");
  CHECK(error_of(s, R"({"ratio": 0})") == "s: /ratio: expected number in (0, 1), got 0");
  CHECK(error_of(s, R"({"ratio": true})") == "s: /ratio: expected number in (0, 1), got true");
  CHECK(error_of(s, R"({"limit_bytes": 11})") == "s: /limit_bytes: expected integer <= 10, got 11");
  CHECK(error_of(s, R"({"limit_bytes": -3})") == "");
  CHECK(error_of(s, R"({"below_ns": 10})") == "s: /below_ns: expected integer < 10, got 10");
  CHECK(error_of(s, R"({"label": null})") == "s: /label: expected string, got null");
  CHECK(error_of(s, R"({"pair_us": [1]})") == "s: /pair_us: expected array of exactly 2 items, got [1]");
  CHECK(error_of(s, R"({"pair_us": {}})") == "s: /pair_us: expected array, got {}");
  CHECK(error_of(s, R"({"pair_us": [1, "2"]})") == "s: /pair_us/1: expected number, got \"2\"");
  CHECK(error_of(s, R"({"few_us": [1, 2, 3]})") ==
        "s: /few_us: expected array of at most 2 items, got [1,2,3]");
  CHECK(error_of(s, R"({"shape": {"kind": "circle"}})") == "s: /shape/radius_us: missing required field");
  CHECK(error_of(s, R"({"shape": {"radius_us": 1}})") == "s: /shape/kind: missing required field");
  CHECK(error_of(s, R"({"shape": {"kind": 3}})") ==
        "s: /shape/kind: expected one of \"dot\", \"circle\", got 3");
  CHECK(error_of(s, R"({"shape": {"kind": "dot", "radius_us": 1}})") == "s: /shape/radius_us: unknown key");
  CHECK(error_of(s, R"({"shape": {"kind": "circle", "radios_us": 1}})") ==
        "s: /shape/radios_us: unknown key (did you mean \"radius_us\"?)");
  CHECK(error_of(s, R"({"shape": []})") == "s: /shape: expected object, got []");
  CHECK(error_of(s, R"({"tags": {"a/b": "x", "c": 1}})") == "s: /tags/c: expected string, got 1");
  CHECK(error_of(s, R"({"tags": {"a/b~": 2}})") == "s: /tags/a~1b~0: expected string, got 2");
  CHECK(error_of(s, R"({"inner": {"deep": {"n_cycles": -1}}})") ==
        "s: /inner/deep/n_cycles: expected integer >= 0, got -1");
  CHECK(error_of(s, "[]") == "s: (top level): expected object, got []");
  // Long values are shortened in messages.
  std::string long_label = "{\"label\": \"" + std::string(200, 'a') + "\", \"flag\": 0}";
  CHECK(error_of(s, long_label.c_str()) == "s: /flag: expected true or false, got 0");
  CHECK(error_of(s, ("{\"flag\": \"" + std::string(200, 'a') + "\"}").c_str()) ==
        "s: /flag: expected true or false, got \"" + std::string(76, 'a') + "...");
}

TEST_CASE("config: first error in document order") {
  Schema s = test_schema();
  CHECK(error_of(s, R"({"label": 1, "flag": 1})") == "s: /label: expected string, got 1");
  CHECK(error_of(s, R"({"flag": 1, "label": 1})") == "s: /flag: expected true or false, got 1");
  // Unknown and wrong keys come before missing ones.
  CHECK(error_of(s, R"({"shape": {"kind": "circle", "x": 1}})") == "s: /shape/x: unknown key");
}

TEST_CASE("config: defaults fill nested objects and referenced unions") {
  Schema s = test_schema();
  ojson doc = ojson::object();
  fill_defaults(s, s.root(), doc);
  CHECK(doc["flag"] == false);
  CHECK(doc["ratio"] == 0.5);
  CHECK(doc["shape"] == ojson::parse(R"({"kind": "dot"})"));
  CHECK(doc["inner"]["deep"]["n_cycles"] == 3);
  CHECK(doc["tags"] == ojson::object());
}

TEST_CASE("config: overrides of booleans and other types on any schema") {
  Schema s = test_schema();
  ojson doc = ojson::object();
  apply_set(s, doc, "flag=true");
  apply_set(s, doc, "ratio=0.25");
  apply_set(s, doc, "limit_bytes=7");
  apply_set(s, doc, "label=12");  // a string field takes the text
  apply_set(s, doc, "tags.owner=me");
  apply_set(s, doc, "inner.deep.n_cycles=9");
  apply_set(s, doc, "shape={\"kind\":\"circle\",\"radius_us\":1}");
  apply_set(s, doc, "shape.radius_us=2");
  CHECK(doc == ojson::parse(R"({"flag": true, "ratio": 0.25, "limit_bytes": 7, "label": "12",
                                "tags": {"owner": "me"}, "inner": {"deep": {"n_cycles": 9}},
                                "shape": {"kind": "circle", "radius_us": 2}})"));
  CHECK_THROWS_WITH(apply_set(s, doc, "flag=yes"),
                    "--set flag=yes: /flag: expected true or false, got \"yes\"");
  CHECK_NOTHROW(apply_set(s, doc, "tags.owner=1"));  // text for a string field
  CHECK_THROWS_WITH(apply_set(s, doc, "shape.radios_us=1"),
                    "--set shape.radios_us=1: unknown field (did you mean \"shape.radius_us\"?)");
  CHECK_THROWS_WITH(apply_set(s, doc, "pair_us.0=1"),
                    "--set pair_us.0=1: \"pair_us\" is not an object (expected array): set it as a whole");

  // Free map keys that look like indexes still make objects.
  ojson fresh = ojson::object();
  apply_set(s, fresh, "tags.0=zero");
  CHECK(fresh == ojson::parse(R"({"tags": {"0": "zero"}})"));

  // With no tag in the document yet, a union field is looked up in every variant.
  ojson empty = ojson::object();
  OverrideTarget t = resolve_override_path(s, "shape.radius_us", empty);
  CHECK(t.pointer == "/shape/radius_us");
  CHECK(t.spec->type == SpecType::Number);
  CHECK(resolve_override_path(s, "shape.kind", empty).spec->enum_values ==
        std::vector<std::string>{"dot", "circle"});
}

TEST_CASE("config: malformed schemas are refused") {
  CHECK(schema_error(R"({"type": "integer", "default": 1, "doc": "d", "unit": "x"})") == "");
  CHECK_THAT(schema_error(R"({"type": "integer", "default": 1, "doc": "d"})"),
             Catch::Contains("needs a unit"));
  CHECK_THAT(schema_error(R"({"type": "string", "default": "a"})"), Catch::Contains("missing `doc`"));
  CHECK_THAT(schema_error(R"({"type": "string", "doc": "d"})"), Catch::Contains("exactly one of"));
  CHECK_THAT(schema_error(R"({"type": "string", "doc": "d", "required": true, "default": "a"})"),
             Catch::Contains("exactly one of"));
  CHECK_THAT(schema_error(R"({"type": "string", "doc": "d", "required": false})"),
             Catch::Contains("can only be true"));
  CHECK_THAT(schema_error(R"({"type": "text", "doc": "d", "default": ""})"),
             Catch::Contains("unknown type \"text\""));
  CHECK_THAT(schema_error(R"({"type": "string", "doc": "d", "default": "", "min": 1})"),
             Catch::Contains("key \"min\" is not allowed for type string"));
  CHECK_THAT(
      schema_error(R"({"type": "string", "enum": ["a"], "doc": "d", "default": "b"})"),
      Catch::Contains(
          "default does not pass its own spec: default: (top level): expected one of \"a\", got \"b\""));
  CHECK_THAT(schema_error(R"({"type": "object", "doc": "d", "default": {}, "fields": {
                             "g": {"type": "string", "doc": "d", "required": true}}})"),
             Catch::Contains("default does not pass its own spec"));
  CHECK_THAT(schema_error(R"({"$ref": "nothing", "doc": "d", "default": {}})"),
             Catch::Contains("unknown $ref"));
  CHECK_THAT(
      schema_error(
          R"({"type": "number", "min": 0, "min_exclusive": 0, "unit": "x", "doc": "d", "default": 1})"),
      Catch::Contains("at most one lower"));
  CHECK_THAT(
      schema_error(
          R"({"type": "array", "items": {"type": "string"}, "check": "magic", "doc": "d", "default": []})"),
      Catch::Contains("unknown check"));
  CHECK_THAT(schema_error(R"({"type": "union", "tag": "t", "doc": "d", "required": true, "variants": {
                             "a": {"doc": "a", "fields": {"t": {"type": "string", "doc": "d", "required": true}}}}})"),
             Catch::Contains("cannot redefine the tag"));
}

TEST_CASE("config: the real schema is well-formed and every number has a unit") {
  const Schema& s = Schema::get();
  REQUIRE(s.root().field("workload") != nullptr);
  CHECK(s.root().field("workload")->spec->required);
  // Walks every field: a doc string, and a unit for every number.
  std::function<void(const Spec&, const std::string&, const std::string&)> walk =
      [&](const Spec& spec, const std::string& name, const std::string& unit) {
        if (spec.type == SpecType::Integer || spec.type == SpecType::Number) {
          INFO(name);
          CHECK((!unit_of(name, spec).empty() || !unit.empty()));
        }
        auto fields = [&](const std::vector<Field>& fs) {
          for (const auto& f : fs) {
            INFO(f.name);
            CHECK(!f.spec->doc.empty());
            walk(*f.spec, f.name, "");
          }
        };
        fields(spec.fields);
        for (const auto& v : spec.variants) fields(v.fields);
        if (spec.items) walk(*spec.items, name, spec.unit.empty() ? unit : spec.unit);
      };
  walk(s.root(), "", "");
  for (const auto& [name, spec] : s.definitions()) walk(*spec, name, "");
}

TEST_CASE("config: did-you-mean suggestions") {
  CHECK(edit_distance("cores", "corez") == 1);
  CHECK(edit_distance("servers", "sevrers") == 1);  // a transposition counts once
  CHECK(edit_distance("", "abc") == 3);
  CHECK(closest("corez", {"ghz", "cores"}) == std::optional<std::string>("cores"));
  CHECK(closest("duraton_ms", {"warmup_ms", "duration_ms"}) == std::optional<std::string>("duration_ms"));
  CHECK(closest("threads", {"name", "seed", "machine", "workload"}) == std::nullopt);
  CHECK(closest("x", {"ghz"}) == std::nullopt);
}
