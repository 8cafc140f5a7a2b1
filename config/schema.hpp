#pragma once
// The scenario schema (scenarios/schema.json) as a tree of specs, and the checks and defaults it
// drives. The format is described in the "about" key of that file.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/cost_table.hpp"

namespace uringsim::config {

using ojson = nlohmann::ordered_json;

// machine.stall_lengths' bounds (check_stall_lengths): stalls taking under this share of a busy
// CPU's time, at most this many per second in all. `calibrate` leaves out what it measures beyond
// them (other processes' time on a shared machine, not the CPU's stalls).
inline constexpr double kStallMaxShare = 0.5;
inline constexpr double kStallMaxRate = 100e3;

enum class SpecType { Integer, Number, String, Boolean, Object, Union, Array, Map, Costs, Overrides };

struct Spec;
using SpecPtr = std::shared_ptr<const Spec>;

struct Field {
  std::string name;
  SpecPtr spec;
};

// One alternative of a union, selected by the tag value.
struct UnionVariant {
  std::string tag_value;
  std::string doc;
  std::vector<Field> fields;
};

struct Spec {
  SpecType type = SpecType::Object;
  std::string doc;
  std::string unit;  // explicit `unit`; empty when the field name's suffix carries it
  std::string ref;   // definition name when used through $ref (the docs link to it)
  bool required = false;
  std::optional<ojson> default_value;
  // Bounds kept as JSON so messages show them as written in the schema.
  std::optional<ojson> min, max, min_exclusive, max_exclusive;
  std::vector<std::string> enum_values;             // String
  std::vector<Field> fields;                        // Object
  std::string tag;                                  // Union
  std::vector<UnionVariant> variants;               // Union
  SpecPtr tag_spec;                                 // Union: a string enum of the tag values
  SpecPtr items;                                    // Array
  std::optional<std::size_t> min_items, max_items;  // Array
  SpecPtr values;                                   // Map; Costs: the spec of every entry
  std::string check;                                // extra named check, see schema.cpp

  const Field* field(std::string_view name) const;
  const UnionVariant* variant(std::string_view tag_value) const;
};

class Schema {
 public:
  // The embedded scenarios/schema.json with the embedded cost table, parsed once.
  static const Schema& get();
  // std::logic_error when the schema itself is malformed (a bug in the repository).
  Schema(const ojson& text, CostTable costs);

  const Spec& root() const { return *root_; }
  const std::vector<std::pair<std::string, SpecPtr>>& definitions() const { return definitions_; }
  const CostTable& costs() const { return costs_; }

 private:
  SpecPtr root_;
  std::vector<std::pair<std::string, SpecPtr>> definitions_;
  CostTable costs_;
};

// What a value must be, as used after "expected": "integer in [1, 4096]", "one of \"a\", \"b\"".
std::string expected_text(const Spec& spec);
// Unit of a number field: the explicit `unit`, else the suffix of its name ("" if neither).
std::string unit_of(const std::string& name, const Spec& spec);

// Throws InputError "<label>: <pointer>: <problem>" for the first problem, in document order.
void validate(const Schema& schema, const Spec& spec, const ojson& value, const std::string& pointer,
              const std::string& label);

// Adds every absent field that has a default; value must already be valid.
void fill_defaults(const Schema& schema, const Spec& spec, ojson& value);

}  // namespace uringsim::config
