#include "config/scenario.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/json_text.hpp"
#include "config/overrides.hpp"
#include "config/schema.hpp"

namespace uringsim::config {

const nlohmann::json& Scenario::at(const std::string& json_pointer) const {
  try {
    return doc.at(nlohmann::json::json_pointer(json_pointer));
  } catch (const nlohmann::json::exception& e) {
    throw std::logic_error(
        fmt::format("scenario {}: no value at \"{}\" ({})", source, json_pointer, e.what()));
  }
}

Scenario load_scenario_file(const std::string& path, const LoadOptions& opts) {
  return load_scenario_text(read_input_file(path), path, opts);
}

Scenario load_scenario_text(std::string_view text, const std::string& source, const LoadOptions& opts) {
  const Schema& schema = Schema::get();
  const Spec& root = schema.root();
  ojson file = parse_json_text(text, source);
  validate(schema, root, file, "", source);

  // Every variant is applied and checked, selected or not, so a broken one cannot lurk unused.
  ojson doc = file;
  std::vector<std::string> names;
  bool found = opts.variant.empty();
  if (auto variants = file.find("variants"); variants != file.end()) {
    for (const auto& [name, overrides] : variants->items()) {
      ojson applied = file;
      apply_variant(schema, applied, overrides, source, pointer_append("/variants", name));
      validate(schema, root, applied, "", fmt::format("{} (variant {})", source, name));
      if (name == opts.variant) {
        doc = std::move(applied);
        found = true;
      }
      names.push_back(ojson(name).dump());
    }
  }
  if (!found)
    throw InputError(fmt::format("{}: unknown variant {} ({})", source, ojson(opts.variant).dump(),
                                 names.empty() ? "the file defines no variants"
                                               : fmt::format("variants: {}", fmt::join(names, ", "))));

  // The machine measured replaces the machine described; --set may still change it.
  if (opts.calibration) {
    if (!doc.contains("machine")) doc["machine"] = ojson::object();
    doc["machine"]["cores"] = opts.calibration->machine.cores;
    doc["machine"]["ghz"] = opts.calibration->machine.ghz;
  }
  for (const auto& item : opts.sets) apply_set(schema, doc, item);
  // Each --set value passed its own field's check; this catches combinations, e.g. a changed tag.
  if (!opts.sets.empty() || opts.calibration) {
    std::string with = opts.calibration ? "with --calibration " + opts.calibration->source : "";
    if (!opts.sets.empty()) with += with.empty() ? "with --set" : " and --set";
    std::string label = opts.variant.empty() ? fmt::format("{} ({})", source, with)
                                             : fmt::format("{} (variant {}, {})", source, opts.variant, with);
    validate(schema, root, doc, "", label);
  }
  // Calibrated costs fill what the scenario (and --set) left to the defaults.
  if (opts.calibration) {
    if (!doc.contains("costs")) doc["costs"] = ojson::object();
    for (const auto& [key, c] : opts.calibration->costs)
      if (!doc["costs"].contains(key)) doc["costs"][key] = c.value;
  }
  fill_defaults(schema, root, doc);
  if (opts.seed) doc["seed"] = *opts.seed;

  Scenario s;
  s.source = source;
  s.variant = opts.variant;
  // Through text: the ordered document was only needed for document-order checking.
  s.doc = nlohmann::json::parse(doc.dump());
  for (const auto& [key, value] : s.doc.at("costs").items()) s.costs.set(key, value.get<double>());
  if (opts.calibration) s.calibration = opts.calibration->provenance();
  return s;
}

}  // namespace uringsim::config
