// Generates docs/scenario-format.md from the schema: the docs cannot drift from what the loader
// accepts (a unit test compares the committed file with this output).
#include <fmt/format.h>

#include "config/scenario.hpp"
#include "config/schema.hpp"

namespace uringsim::config {

namespace {

std::string cell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string length_text(const Spec& s) {
  auto items = [](std::size_t n) { return fmt::format("{} item{}", n, n == 1 ? "" : "s"); };
  if (s.min_items && s.max_items)
    return *s.min_items == *s.max_items ? fmt::format(" of exactly {}", items(*s.min_items))
                                        : fmt::format(" of {} to {}", *s.min_items, items(*s.max_items));
  if (s.min_items) return " of at least " + items(*s.min_items);
  if (s.max_items) return " of at most " + items(*s.max_items);
  return "";
}

std::string type_text(const Spec& s, const std::string& path) {
  if (!s.ref.empty()) return fmt::format("{} (see `{}` below)", s.ref, s.ref);
  switch (s.type) {
    case SpecType::Object:
    case SpecType::Costs:
      return fmt::format("object (see `{}` below)", path);
    case SpecType::Union:
      return fmt::format("object selected by `{}` (see `{}` below)", s.tag, path);
    case SpecType::Array:
      return fmt::format("array{}, each {}", length_text(s), type_text(*s.items, path + "[]"));
    case SpecType::Map:
      return fmt::format("object {{NAME: {}}}", type_text(*s.values, path + ".NAME"));
    case SpecType::Overrides:
      return "overrides {\"dotted.path\": value}";
    default:
      return expected_text(s);
  }
}

class Writer {
 public:
  std::string out;

  void line(const std::string& s = "") { out += s + "\n"; }

  void object_section(const std::string& path, const std::string& doc, const std::vector<Field>& fields) {
    line(path.empty() ? std::string("### Top level") : fmt::format("### `{}`", path));
    line();
    line(doc);
    line();
    table(path, fields, nullptr);
    nested_of(path, fields);
  }

  void union_section(const std::string& path, const Spec& s) {
    line(fmt::format("### `{}`", path));
    line();
    std::vector<std::string> values;
    for (const auto& v : s.variants) values.push_back(fmt::format("`\"{}\"`", v.tag_value));
    line(fmt::format("{} The field `{}` selects one of: {}.", s.doc, s.tag, join(values)));
    line();
    for (const auto& v : s.variants) {
      line(fmt::format("#### `{}` with `\"{}\": \"{}\"`", path, s.tag, v.tag_value));
      line();
      line(v.doc);
      line();
      std::string tag_row =
          fmt::format("| `{}` | `\"{}\"` |  | required | Selects this variant. |", s.tag, v.tag_value);
      table(path, v.fields, &tag_row);
    }
    for (const auto& v : s.variants) nested_of(path, v.fields);
  }

  void costs_section(const std::string& path, const Spec& s, const CostTable& costs) {
    line(fmt::format("### `{}`", path));
    line();
    line(s.doc + " Each value is a " + expected_text(*s.values) + ". Entries:");
    line();
    line("| Key | Unit | Default | Description |");
    line("|---|---|---|---|");
    const nlohmann::json described = costs.describe();  // the loop must not iterate a temporary
    for (const auto& [key, e] : described.items())
      line(fmt::format("| `{}` | {} | {} | {} |", key, cell(e["unit"].get<std::string>()),
                       e["default"].get<double>(), cell(e["doc"].get<std::string>())));
    line();
  }

  // Sections for a field's inner structure; $ref'd specs are documented once, as definitions.
  void nested(const std::string& path, const Spec& s, const CostTable& costs) {
    if (!s.ref.empty()) return;
    switch (s.type) {
      case SpecType::Object:
        object_section(path, s.doc, s.fields);
        break;
      case SpecType::Union:
        union_section(path, s);
        break;
      case SpecType::Array:
        nested(path + "[]", *s.items, costs);
        break;
      case SpecType::Map:
        nested(path + ".NAME", *s.values, costs);
        break;
      case SpecType::Costs:
        costs_section(path, s, costs);
        break;
      default:
        break;
    }
  }

  const CostTable* costs = nullptr;

 private:
  static std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
    return out;
  }

  void table(const std::string& path, const std::vector<Field>& fields, const std::string* first_row) {
    line("| Field | Type | Unit | Default | Description |");
    line("|---|---|---|---|---|");
    if (first_row) line(*first_row);
    for (const auto& f : fields) {
      const Spec& s = *f.spec;
      std::string sub = path.empty() ? f.name : path + "." + f.name;
      std::string def = s.required ? "required" : fmt::format("`{}`", s.default_value->dump());
      line(fmt::format("| `{}` | {} | {} | {} | {} |", f.name, cell(type_text(s, sub)),
                       cell(unit_of(f.name, s)), cell(def), cell(s.doc)));
    }
    line();
  }

  void nested_of(const std::string& path, const std::vector<Field>& fields) {
    for (const auto& f : fields) nested(path.empty() ? f.name : path + "." + f.name, *f.spec, *costs);
  }
};

const char* const kIntro = R"(# Scenario file format

<!-- Generated by config::schema_markdown() from scenarios/schema.json and models/costs.json.
     Do not edit by hand; see "Regenerating" at the end. -->

A scenario is one JSON file: a simulated machine, kernel and workload, and how the run is
measured. The loader checks it strictly against `scenarios/schema.json`: every key must be known
and every value must have the right type and range. Absent fields take the defaults listed below.

A minimal scenario:

```json
{
  "name": "mmc-example",
  "workload": {
    "type": "queue",
    "servers": 2,
    "arrival": {"kind": "exponential", "mean_us": 10},
    "service": {"kind": "exponential", "mean_us": 15}
  }
}
```

## Loading

1. Parse the JSON text. Duplicate keys are errors.
2. Check the file against the schema. Then apply and check every variant in `variants`, selected
   or not, so that a broken variant is reported at once.
3. With `--variant NAME`, start from the file with that variant's overrides applied in order.
4. Apply each `--set dotted.path=value` in order, then check the whole document again.
5. Fill in defaults; `--seed N` replaces `seed`.

## Overrides

A variant's overrides and `--set` name a field by its dotted path (`machine.cores`,
`workload.arrival.mean_us`, `costs.wake_cycles`) and replace its value whole: an object value
replaces the whole object, whose absent fields then take their defaults. A path inside a tagged
object (`workload`, a distribution) is looked up in the variant the document selects there; to
switch a distribution's `kind`, set the whole distribution. `variants` itself cannot be overridden.

A `--set` value is read as JSON when it parses (`20`, `1.5`, `true`, `"x"`, `[50, 99]`,
`{"kind": "constant", "value_us": 5}`), otherwise as the bare text. A string field always takes the
text as written, so `--set kernel.era=5.15` gives the string `"5.15"`.

## Errors

The loader reports the first problem, in document order, and the command exits with status 2.
Locations are JSON pointers into the file (a variant's override adds its dotted path as one step):

```
FILE: /kernel/era: expected one of "5.15", "5.16", "5.18", "6.x", got "6.1"
FILE: /machine/corez: unknown key (did you mean "cores"?)
FILE: /workload: missing required field
FILE:3:26: invalid JSON: syntax error while parsing object key - unexpected '}'; expected string literal
FILE: /variants/fast/machine.cores: expected integer in [1, 4096], got 0
FILE (variant fast): /workload/arrival/sigma: missing required field
--set machine.cores=abc: /machine/cores: expected integer in [1, 4096], got "abc"
--set machine.corez=4: unknown field (did you mean "machine.cores"?)
```

FILE is the path as given on the command line. `FILE (variant NAME)` and `FILE (with --set)` name
a problem in the document that the variant or the `--set` items produce as a whole.

## Fields

Every number carries its unit in its name (`_ns`, `_us`, `_ms`, `_bytes`, `_cycles`) or in the
Unit column. Integers are written without a fraction or exponent. Object-valued fields with a
default of `{}` may be omitted entirely.

)";

const char* const kOutro = R"(## Regenerating

The tables above come from `scenarios/schema.json` (and the cost table, `models/costs.json`). After
changing either, regenerate this file with

```
URINGSIM_UPDATE_DOCS=1 build/tests/unit_tests "config: docs/scenario-format.md matches the schema"
```

and commit it; that test fails while the two differ.
)";

}  // namespace

std::string schema_markdown() {
  const Schema& schema = Schema::get();
  Writer w;
  w.costs = &schema.costs();
  w.out = kIntro;
  w.object_section("", schema.root().doc, schema.root().fields);
  for (const auto& [name, spec] : schema.definitions()) {
    if (spec->type == SpecType::Union)
      w.union_section(name, *spec);
    else
      w.nested(name, *spec, schema.costs());
  }
  w.out += kOutro;
  return w.out;
}

}  // namespace uringsim::config
