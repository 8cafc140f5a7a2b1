#include "config/schema.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "config/input_error.hpp"
#include "config/json_text.hpp"
#include "config/suggest.hpp"
#include "uringsim_data.hpp"

namespace uringsim::config {

const Field* Spec::field(std::string_view name) const {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

const UnionVariant* Spec::variant(std::string_view tag_value) const {
  for (const auto& v : variants)
    if (v.tag_value == tag_value) return &v;
  return nullptr;
}

namespace {

const char* const kUnitSuffixes[] = {"_ns", "_us", "_ms", "_bytes", "_cycles"};

// Every cost table entry: no kernel operation takes a billion cycles (a third of a second at
// 3 GHz) or a billion ns, and a bounded cost keeps every simulated duration finite.
constexpr std::int64_t kMaxCost = 1'000'000'000;

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + ojson(s).dump();
  return out;
}

// ---- extra checks named by `check` -------------------------------------------------------------

using FailFn = std::function<void(const std::string& pointer, const std::string& message)>;
using CheckFn = void (*)(const ojson& value, const std::string& pointer, const FailFn& fail);

// Points [value, cdf] of an empirical distribution: a valid inverse CDF needs values that never
// decrease and a cdf that strictly increases to exactly 1.
void check_cdf_points(const ojson& points, const std::string& pointer, const FailFn& fail) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ojson& value = points[i][0];
    const ojson& cdf = points[i][1];
    std::string at = pointer_append(pointer, std::to_string(i));
    if (cdf.get<double>() > 1.0)
      fail(pointer_append(at, "1"), fmt::format("expected cdf <= 1, got {}", show_value(cdf)));
    if (i == 0) continue;
    const ojson& prev_value = points[i - 1][0];
    const ojson& prev_cdf = points[i - 1][1];
    if (value.get<double>() < prev_value.get<double>())
      fail(pointer_append(at, "0"), fmt::format("expected value >= {} (values must not decrease), got {}",
                                                show_value(prev_value), show_value(value)));
    if (cdf.get<double>() <= prev_cdf.get<double>())
      fail(pointer_append(at, "1"), fmt::format("expected cdf > {} (cdf must increase), got {}",
                                                show_value(prev_cdf), show_value(cdf)));
  }
  const ojson& last = points.back()[1];
  if (last.get<double>() != 1.0)
    fail(pointer_append(pointer_append(pointer, std::to_string(points.size() - 1)), "1"),
         fmt::format("expected 1.0 (the last cdf), got {}", show_value(last)));
}

// Points [x, y] of a piecewise-linear curve (machine.idle_exit_curve): x strictly increasing, so
// that every x has one value.
void check_curve_points(const ojson& points, const std::string& pointer, const FailFn& fail) {
  for (std::size_t i = 1; i < points.size(); ++i)
    if (points[i][0].get<double>() <= points[i - 1][0].get<double>())
      fail(pointer_append(pointer_append(pointer, std::to_string(i)), "0"),
           fmt::format("expected more than {} (the points' first values must increase), got {}",
                       show_value(points[i - 1][0]), show_value(points[i][0])));
}

// Stall lengths [ns, per_s] (machine.stall_lengths): each length once, increasing, and the stalls
// leaving the CPU most of its time (their arrivals are drawn in the time between them).
void check_stall_lengths(const ojson& items, const std::string& pointer, const FailFn& fail) {
  check_curve_points(items, pointer, fail);
  constexpr double kMinNs = 1000;  // a stall is a gap over 1 us, as calibrate counts them
  double share = 0, rate = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const ojson& l = items[i];
    if (l[0].get<double>() < kMinNs)
      fail(pointer_append(pointer_append(pointer, std::to_string(i)), "0"),
           fmt::format("expected a stall of at least {} ns, got {}", kMinNs, show_value(l[0])));
    share += l[0].get<double>() * l[1].get<double>() / 1e9;
    rate += l[1].get<double>();
  }
  if (rate > kStallMaxRate)  // one every 10 us: more would only slow the run to a halt
    fail(pointer,
         fmt::format("expected at most {} stalls per second in all, got {:.6g}", kStallMaxRate, rate));
  if (share >= kStallMaxShare)
    fail(pointer, fmt::format("expected stalls taking less than {} of a busy CPU's time (the sum of ns x "
                              "per_s over 1e9), got {:.3g}",
                              kStallMaxShare, share));
}

// A stall period (machine.stall_every_ns): 0 (none), or long enough that the stalls do not swamp
// the run with events.
void check_stall_period(const ojson& every, const std::string& pointer, const FailFn& fail) {
  constexpr double kMinNs = 10e3;
  const double e = every.get<double>();
  if (e != 0 && e < kMinNs)
    fail(pointer, fmt::format("expected 0 (none) or at least {} ns, got {}", kMinNs, show_value(every)));
}

// A name used as a directory name (out/NAME): one safe path component.
void check_path_component(const ojson& name, const std::string& pointer, const FailFn& fail) {
  const auto& s = name.get_ref<const std::string&>();
  constexpr std::size_t kMaxLength = 100;
  const bool chars_ok = std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
  if (s.empty() || s.size() > kMaxLength || !chars_ok || s == "." || s == "..")
    fail(pointer, fmt::format("expected a name of 1 to {} characters from A-Z, a-z, 0-9, '.', '_' and '-', "
                              "other than \".\" and \"..\" (it names the output directory), got {}",
                              kMaxLength, show_value(name)));
}

// A rate where 0 means "off": any other value must be large enough that its period is finite.
void check_off_or_rate(const ojson& rate, const std::string& pointer, const FailFn& fail) {
  constexpr double kMinRate = 0.001;  // one per 1000 s, the longest run
  const double r = rate.get<double>();
  if (r != 0 && r < kMinRate)
    fail(pointer,
         fmt::format("expected 0 (off) or a rate of at least {}, got {}", kMinRate, show_value(rate)));
}

// A set written as a list (setup flags): naming an item twice is a mistake, not a no-op.
void check_unique_items(const ojson& items, const std::string& pointer, const FailFn& fail) {
  for (std::size_t i = 1; i < items.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (items[i] == items[j])
        fail(pointer_append(pointer, std::to_string(i)),
             fmt::format("expected each item once, got {} again (item {})", show_value(items[i]), j));
}

// Ring sizes the kernel rounds or refuses unless they are powers of two (buffer rings).
void check_power_of_two(const ojson& n, const std::string& pointer, const FailFn& fail) {
  const auto v = n.get<std::int64_t>();
  if (v <= 0 || (v & (v - 1)) != 0)
    fail(pointer, fmt::format("expected a power of two, got {}", show_value(n)));
}

const std::map<std::string, CheckFn>& checks() {
  static const std::map<std::string, CheckFn> table{
      {"cdf_points", &check_cdf_points},       {"curve_points", &check_curve_points},
      {"stall_lengths", &check_stall_lengths}, {"path_component", &check_path_component},
      {"off_or_rate", &check_off_or_rate},     {"unique_items", &check_unique_items},
      {"power_of_two", &check_power_of_two},   {"stall_period", &check_stall_period}};
  return table;
}

// ---- reading the schema ------------------------------------------------------------------------

// The nearest named field above a spec: its name and explicit unit cover array items too.
struct UnitContext {
  std::string name;
  std::string unit;
};

class SpecParser {
 public:
  explicit SpecParser(const ojson& definitions) : definitions_json_(definitions) {}

  [[noreturn]] static void bad(const std::string& where, const std::string& what) {
    throw std::logic_error(fmt::format("scenarios/schema.json: {}: {}", where, what));
  }

  SpecPtr definition(const std::string& name, const std::string& where) {
    if (auto it = parsed_.find(name); it != parsed_.end()) return it->second;
    if (!definitions_json_.contains(name)) bad(where, fmt::format("unknown $ref \"{}\"", name));
    if (!in_progress_.insert(name).second) bad(where, fmt::format("$ref \"{}\" refers to itself", name));
    SpecPtr spec = parse(definitions_json_[name], "definitions." + name, {name, ""}, false);
    in_progress_.erase(name);
    return parsed_[name] = spec;
  }

  // is_field: the spec is a field of an object or variant, so it needs `doc` and a presence rule.
  SpecPtr parse(const ojson& j, const std::string& where, const UnitContext& ctx, bool is_field) {
    if (!j.is_object()) bad(where, "a spec must be an object");
    if (j.contains("$ref")) return parse_ref(j, where, ctx, is_field);
    auto spec = std::make_shared<Spec>();
    std::string type = string_key(j, "type", where, true);
    static const std::map<std::string, std::pair<SpecType, std::set<std::string>>> kTypes{
        {"integer", {SpecType::Integer, {"min", "max", "min_exclusive", "max_exclusive", "unit"}}},
        {"number", {SpecType::Number, {"min", "max", "min_exclusive", "max_exclusive", "unit"}}},
        {"string", {SpecType::String, {"enum"}}},
        {"boolean", {SpecType::Boolean, {}}},
        {"object", {SpecType::Object, {"fields"}}},
        {"union", {SpecType::Union, {"tag", "variants"}}},
        {"array", {SpecType::Array, {"items", "min_items", "max_items", "unit"}}},
        {"map", {SpecType::Map, {"values"}}},
        {"costs", {SpecType::Costs, {}}},
        {"overrides", {SpecType::Overrides, {}}},
    };
    auto t = kTypes.find(type);
    if (t == kTypes.end()) bad(where, fmt::format("unknown type \"{}\"", type));
    spec->type = t->second.first;
    for (const auto& [key, value] : j.items()) {
      static const std::set<std::string> kCommon{"type", "doc", "required", "default", "check"};
      if (!kCommon.count(key) && !t->second.second.count(key))
        bad(where, fmt::format("key \"{}\" is not allowed for type {}", key, type));
    }
    spec->doc = string_key(j, "doc", where, is_field);
    spec->unit = string_key(j, "unit", where, false);
    presence(j, *spec, where, is_field);
    if (j.contains("check")) {
      spec->check = string_key(j, "check", where, true);
      if (!checks().count(spec->check)) bad(where, fmt::format("unknown check \"{}\"", spec->check));
    }

    switch (spec->type) {
      case SpecType::Integer:
      case SpecType::Number:
        parse_bounds(j, *spec, where);
        if (unit_of(ctx.name, *spec).empty() && ctx.unit.empty())
          bad(where, "a number needs a unit: a suffix (_ns, _us, _ms, _bytes, _cycles) or `unit`");
        break;
      case SpecType::String:
        if (j.contains("enum")) {
          if (!j["enum"].is_array() || j["enum"].empty()) bad(where, "enum must be a non-empty array");
          for (const auto& e : j["enum"]) {
            if (!e.is_string()) bad(where, "enum values must be strings");
            spec->enum_values.push_back(e.get<std::string>());
          }
        }
        break;
      case SpecType::Object:
        spec->fields = parse_fields(j, where);
        break;
      case SpecType::Union:
        parse_union(j, *spec, where);
        break;
      case SpecType::Array:
        if (!j.contains("items")) bad(where, "an array needs `items`");
        spec->items = parse(j["items"], where + ".items",
                            {ctx.name, spec->unit.empty() ? ctx.unit : spec->unit}, false);
        spec->min_items = count_key(j, "min_items", where);
        spec->max_items = count_key(j, "max_items", where);
        break;
      case SpecType::Map:
        if (!j.contains("values")) bad(where, "a map needs `values`");
        spec->values = parse(j["values"], where + ".values", ctx, false);
        break;
      case SpecType::Costs: {
        // Each entry's unit is its key's suffix in the cost table.
        auto entry = std::make_shared<Spec>();
        entry->type = SpecType::Number;
        entry->min = ojson(0);
        entry->max = ojson(kMaxCost);
        entry->doc = "Cost table entry.";
        spec->values = entry;
        break;
      }
      case SpecType::Boolean:
      case SpecType::Overrides:
        break;
    }
    return spec;
  }

 private:
  const ojson& definitions_json_;
  std::map<std::string, SpecPtr> parsed_;
  std::set<std::string> in_progress_;

  static std::string string_key(const ojson& j, const char* key, const std::string& where, bool required) {
    if (!j.contains(key)) {
      if (required) bad(where, fmt::format("missing `{}`", key));
      return {};
    }
    if (!j[key].is_string()) bad(where, fmt::format("`{}` must be a string", key));
    return j[key].get<std::string>();
  }

  static std::optional<std::size_t> count_key(const ojson& j, const char* key, const std::string& where) {
    if (!j.contains(key)) return std::nullopt;
    if (!j[key].is_number_unsigned()) bad(where, fmt::format("`{}` must be an integer >= 0", key));
    return j[key].get<std::size_t>();
  }

  static void presence(const ojson& j, Spec& spec, const std::string& where, bool is_field) {
    bool has_required = j.contains("required"), has_default = j.contains("default");
    if (!is_field) {
      if (has_required || has_default) bad(where, "only fields take `required` or `default`");
      return;
    }
    if (has_required == has_default)
      bad(where, "a field needs exactly one of \"required\": true or `default`");
    if (has_required && j["required"] != true) bad(where, "`required` can only be true");
    spec.required = has_required;
    if (has_default) spec.default_value = j["default"];
  }

  static void parse_bounds(const ojson& j, Spec& spec, const std::string& where) {
    auto bound = [&](const char* key, std::optional<ojson>& out) {
      if (!j.contains(key)) return;
      if (!j[key].is_number()) bad(where, fmt::format("`{}` must be a number", key));
      out = j[key];
    };
    bound("min", spec.min);
    bound("max", spec.max);
    bound("min_exclusive", spec.min_exclusive);
    bound("max_exclusive", spec.max_exclusive);
    if ((spec.min && spec.min_exclusive) || (spec.max && spec.max_exclusive))
      bad(where, "at most one lower and one upper bound");
  }

  std::vector<Field> parse_fields(const ojson& j, const std::string& where) {
    if (!j.contains("fields") || !j["fields"].is_object()) bad(where, "needs a `fields` object");
    std::vector<Field> fields;
    for (const auto& [name, sub] : j["fields"].items())
      fields.push_back({name, parse(sub, where + "." + name, {name, ""}, true)});
    return fields;
  }

  void parse_union(const ojson& j, Spec& spec, const std::string& where) {
    spec.tag = string_key(j, "tag", where, true);
    if (!j.contains("variants") || !j["variants"].is_object() || j["variants"].empty())
      bad(where, "a union needs a non-empty `variants` object");
    auto tag = std::make_shared<Spec>();
    tag->type = SpecType::String;
    tag->required = true;
    for (const auto& [value, variant] : j["variants"].items()) {
      std::string at = fmt::format("{}.variants.{}", where, value);
      if (!variant.is_object()) bad(at, "a variant must be an object");
      for (const auto& [key, unused] : variant.items())
        if (key != "doc" && key != "fields")
          bad(at, fmt::format("key \"{}\" is not allowed in a variant", key));
      UnionVariant v{value, string_key(variant, "doc", at, true), parse_fields(variant, at)};
      for (const auto& f : v.fields)
        if (f.name == spec.tag) bad(at, "a variant cannot redefine the tag field");
      spec.variants.push_back(std::move(v));
      tag->enum_values.push_back(value);
    }
    tag->doc = "Selects one of: " + quoted_list(tag->enum_values) + ".";
    spec.tag_spec = tag;
  }

  SpecPtr parse_ref(const ojson& j, const std::string& where, const UnitContext&, bool is_field) {
    for (const auto& [key, unused] : j.items())
      if (key != "$ref" && key != "doc" && key != "required" && key != "default")
        bad(where, fmt::format("key \"{}\" is not allowed beside $ref", key));
    std::string name = string_key(j, "$ref", where, true);
    // A copy: the referring field brings its own doc and presence.
    auto spec = std::make_shared<Spec>(*definition(name, where));
    spec->ref = name;
    spec->doc = string_key(j, "doc", where, is_field);
    spec->required = false;
    spec->default_value.reset();
    presence(j, *spec, where, is_field);
    return spec;
  }
};

// Every default must itself pass its spec, or a file that omits the field would load invalid.
void check_defaults(const Schema& schema, const Spec& spec, const std::string& where) {
  auto fields = [&](const std::vector<Field>& fs, const std::string& at) {
    for (const auto& f : fs) {
      std::string sub = at + "." + f.name;
      if (f.spec->default_value) {
        try {
          validate(schema, *f.spec, *f.spec->default_value, "", "default");
        } catch (const InputError& e) {
          SpecParser::bad(sub, fmt::format("default does not pass its own spec: {}", e.what()));
        }
      }
      check_defaults(schema, *f.spec, sub);
    }
  };
  fields(spec.fields, where);
  for (const auto& v : spec.variants) fields(v.fields, where + ".variants." + v.tag_value);
  if (spec.items) check_defaults(schema, *spec.items, where + ".items");
  if (spec.values) check_defaults(schema, *spec.values, where + ".values");
}

// ---- checking documents ------------------------------------------------------------------------

bool in_bounds(const Spec& spec, const ojson& v) {
  double x = v.get<double>();
  if (spec.min && x < spec.min->get<double>()) return false;
  if (spec.min_exclusive && x <= spec.min_exclusive->get<double>()) return false;
  if (spec.max && x > spec.max->get<double>()) return false;
  if (spec.max_exclusive && x >= spec.max_exclusive->get<double>()) return false;
  return true;
}

std::string items_text(std::size_t n) {
  return fmt::format("{} item{}", n, n == 1 ? "" : "s");
}

class Validator {
 public:
  Validator(const Schema& schema, const std::string& label) : schema_(schema), label_(label) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
    throw InputError(fmt::format("{}: {}: {}", label_, show_pointer(pointer), message));
  }
  [[noreturn]] void expected(const std::string& what, const ojson& v, const std::string& pointer) const {
    fail(pointer, fmt::format("expected {}, got {}", what, show_value(v)));
  }

  void check(const Spec& spec, const ojson& v, const std::string& pointer) const {
    switch (spec.type) {
      case SpecType::Integer:
        if (!v.is_number_integer() || !in_bounds(spec, v)) expected(expected_text(spec), v, pointer);
        break;
      case SpecType::Number:
        if (!v.is_number() || !in_bounds(spec, v)) expected(expected_text(spec), v, pointer);
        break;
      case SpecType::String:
        if (!v.is_string() ||
            (!spec.enum_values.empty() && std::find(spec.enum_values.begin(), spec.enum_values.end(),
                                                    v.get<std::string>()) == spec.enum_values.end()))
          expected(expected_text(spec), v, pointer);
        break;
      case SpecType::Boolean:
        if (!v.is_boolean()) expected(expected_text(spec), v, pointer);
        break;
      case SpecType::Object:
        require_object(v, pointer);
        check_fields(spec.fields, v, pointer, nullptr);
        break;
      case SpecType::Union:
        check_union(spec, v, pointer);
        break;
      case SpecType::Array:
        check_array(spec, v, pointer);
        break;
      case SpecType::Map:
        require_object(v, pointer);
        for (const auto& [key, value] : v.items()) check(*spec.values, value, pointer_append(pointer, key));
        break;
      case SpecType::Costs: {
        require_object(v, pointer);
        std::vector<std::string> keys = schema_.costs().keys();
        for (const auto& [key, value] : v.items()) {
          if (std::find(keys.begin(), keys.end(), key) == keys.end()) unknown_key(key, keys, pointer);
          check(*spec.values, value, pointer_append(pointer, key));
        }
        break;
      }
      case SpecType::Overrides:
        // Paths and values are checked by the loader against the whole schema (overrides.cpp).
        require_object(v, pointer);
        break;
    }
    if (!spec.check.empty())
      checks().at(spec.check)(v, pointer, [this](const std::string& p, const std::string& m) { fail(p, m); });
  }

 private:
  const Schema& schema_;
  std::string label_;

  void require_object(const ojson& v, const std::string& pointer) const {
    if (!v.is_object()) expected("object", v, pointer);
  }

  [[noreturn]] void unknown_key(const std::string& key, const std::vector<std::string>& known,
                                const std::string& pointer) const {
    auto guess = closest(key, known);
    fail(pointer_append(pointer, key),
         guess ? fmt::format("unknown key (did you mean {}?)", ojson(*guess).dump()) : "unknown key");
  }

  // Keys in document order first, then missing fields in schema order: the first error is stable.
  void check_fields(const std::vector<Field>& fields, const ojson& v, const std::string& pointer,
                    const std::string* tag) const {
    for (const auto& [key, value] : v.items()) {
      if (tag && key == *tag) continue;
      auto it = std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == key; });
      if (it == fields.end()) {
        std::vector<std::string> known;
        if (tag) known.push_back(*tag);
        for (const auto& f : fields) known.push_back(f.name);
        unknown_key(key, known, pointer);
      }
      check(*it->spec, value, pointer_append(pointer, key));
    }
    for (const auto& f : fields)
      if (f.spec->required && !v.contains(f.name))
        fail(pointer_append(pointer, f.name), "missing required field");
  }

  void check_union(const Spec& spec, const ojson& v, const std::string& pointer) const {
    require_object(v, pointer);
    std::string tag_pointer = pointer_append(pointer, spec.tag);
    if (!v.contains(spec.tag)) fail(tag_pointer, "missing required field");
    check(*spec.tag_spec, v[spec.tag], tag_pointer);
    check_fields(spec.variant(v[spec.tag].get<std::string>())->fields, v, pointer, &spec.tag);
  }

  void check_array(const Spec& spec, const ojson& v, const std::string& pointer) const {
    if (!v.is_array()) expected("array", v, pointer);
    std::size_t n = v.size();
    if (spec.min_items && spec.max_items && *spec.min_items == *spec.max_items && n != *spec.min_items)
      expected("array of exactly " + items_text(*spec.min_items), v, pointer);
    if (spec.min_items && n < *spec.min_items)
      expected("array of at least " + items_text(*spec.min_items), v, pointer);
    if (spec.max_items && n > *spec.max_items)
      expected("array of at most " + items_text(*spec.max_items), v, pointer);
    for (std::size_t i = 0; i < n; ++i) check(*spec.items, v[i], pointer_append(pointer, std::to_string(i)));
  }
};

void fill_fields(const Schema& schema, const std::vector<Field>& fields, ojson& v) {
  for (const auto& f : fields) {
    if (!v.contains(f.name) && f.spec->default_value) v[f.name] = *f.spec->default_value;
    if (v.contains(f.name)) fill_defaults(schema, *f.spec, v[f.name]);
  }
}

}  // namespace

// ---- public ------------------------------------------------------------------------------------

Schema::Schema(const ojson& text, CostTable costs) : costs_(std::move(costs)) {
  if (!text.is_object() || !text.contains("root")) SpecParser::bad("(top level)", "missing `root`");
  for (const auto& [key, unused] : text.items())
    if (key != "about" && key != "definitions" && key != "root")
      SpecParser::bad("(top level)", fmt::format("unknown key \"{}\"", key));
  static const ojson kNone = ojson::object();
  const ojson& defs = text.contains("definitions") ? text["definitions"] : kNone;
  if (!defs.is_object()) SpecParser::bad("definitions", "must be an object");
  SpecParser parser(defs);
  for (const auto& [name, unused] : defs.items())
    definitions_.emplace_back(name, parser.definition(name, name));
  root_ = parser.parse(text["root"], "root", {"", ""}, false);
  if (root_->type != SpecType::Object) SpecParser::bad("root", "must be an object spec");
  for (const auto& [name, spec] : definitions_) check_defaults(*this, *spec, "definitions." + name);
  check_defaults(*this, *root_, "root");
}

const Schema& Schema::get() {
  static const Schema schema = [] {
    try {
      return Schema(parse_json_text(data::schema(), "scenarios/schema.json"), CostTable::defaults());
    } catch (const InputError& e) {
      throw std::logic_error(e.what());
    }
  }();
  return schema;
}

std::string unit_of(const std::string& name, const Spec& spec) {
  if (!spec.unit.empty()) return spec.unit;
  for (const char* suffix : kUnitSuffixes) {
    std::string_view s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
      return std::string(s.substr(1));
  }
  return {};
}

std::string expected_text(const Spec& spec) {
  switch (spec.type) {
    case SpecType::Integer:
    case SpecType::Number: {
      std::string base = spec.type == SpecType::Integer ? "integer" : "number";
      const std::optional<ojson>& lo = spec.min ? spec.min : spec.min_exclusive;
      const std::optional<ojson>& hi = spec.max ? spec.max : spec.max_exclusive;
      if (lo && hi)
        return fmt::format("{} in {}{}, {}{}", base, spec.min ? "[" : "(", lo->dump(), hi->dump(),
                           spec.max ? "]" : ")");
      if (lo) return fmt::format("{} {} {}", base, spec.min ? ">=" : ">", lo->dump());
      if (hi) return fmt::format("{} {} {}", base, spec.max ? "<=" : "<", hi->dump());
      return base;
    }
    case SpecType::String:
      return spec.enum_values.empty() ? "string" : "one of " + quoted_list(spec.enum_values);
    case SpecType::Boolean:
      return "true or false";
    case SpecType::Array:
      return "array";
    case SpecType::Object:
    case SpecType::Union:
    case SpecType::Map:
    case SpecType::Costs:
    case SpecType::Overrides:
      return "object";
  }
  return "?";
}

void validate(const Schema& schema, const Spec& spec, const ojson& value, const std::string& pointer,
              const std::string& label) {
  Validator(schema, label).check(spec, value, pointer);
}

void fill_defaults(const Schema& schema, const Spec& spec, ojson& v) {
  switch (spec.type) {
    case SpecType::Object:
      fill_fields(schema, spec.fields, v);
      break;
    case SpecType::Union:
      if (const auto* variant = spec.variant(v.at(spec.tag).get<std::string>()))
        fill_fields(schema, variant->fields, v);
      break;
    case SpecType::Array:
      for (auto& item : v) fill_defaults(schema, *spec.items, item);
      break;
    case SpecType::Map:
      for (auto& [key, value] : v.items()) fill_defaults(schema, *spec.values, value);
      break;
    case SpecType::Costs:
      for (const auto& key : schema.costs().keys())
        if (!v.contains(key)) v[key] = schema.costs().get(key);
      break;
    default:
      break;
  }
}

}  // namespace uringsim::config
