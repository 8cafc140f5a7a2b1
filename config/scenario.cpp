#include "config/scenario.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

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
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": cannot read: is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read: I/O error");
  return load_scenario_text(text.str(), path, opts);
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

  for (const auto& item : opts.sets) apply_set(schema, doc, item);
  // Each --set value passed its own field's check; this catches combinations, e.g. a changed tag.
  if (!opts.sets.empty()) {
    std::string label = opts.variant.empty()
                            ? fmt::format("{} (with --set)", source)
                            : fmt::format("{} (variant {}, with --set)", source, opts.variant);
    validate(schema, root, doc, "", label);
  }
  fill_defaults(schema, root, doc);
  if (opts.seed) doc["seed"] = *opts.seed;

  Scenario s;
  s.source = source;
  s.variant = opts.variant;
  // Through text: the ordered document was only needed for document-order checking.
  s.doc = nlohmann::json::parse(doc.dump());
  for (const auto& [key, value] : s.doc.at("costs").items()) s.costs.set(key, value.get<double>());
  return s;
}

}  // namespace uringsim::config
