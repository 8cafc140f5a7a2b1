#pragma once
// Overrides {"dotted.path": value}: from a scenario's variants and from --set.
#include <string>
#include <string_view>

#include "config/schema.hpp"

namespace uringsim::config {

// Where a dotted path points: the field's spec and its JSON pointer in the document.
struct OverrideTarget {
  const Spec* spec = nullptr;
  std::string pointer;
};

// Resolves path against the schema. A field inside a union is looked up in the variant that doc
// selects at that place (or in any variant when doc selects none yet). Throws InputError whose
// message is only the problem, e.g. `unknown field (did you mean "machine.cores"?)`: callers add
// where the path came from.
OverrideTarget resolve_override_path(const Schema& schema, std::string_view path, const ojson& doc);

// Applies every override of one variant to doc, in document order, checking each path and value.
// variant_pointer locates the variant in the file ("/variants/fast") for messages.
void apply_variant(const Schema& schema, ojson& doc, const ojson& overrides, const std::string& source,
                   const std::string& variant_pointer);

// Applies one --set item "dotted.path=value"; messages start with "--set <item>".
void apply_set(const Schema& schema, ojson& doc, const std::string& item);

}  // namespace uringsim::config
