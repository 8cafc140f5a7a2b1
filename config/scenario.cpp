#include "config/scenario.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/json_text.hpp"
#include "config/overrides.hpp"
#include "config/schema.hpp"

namespace uringsim::config {

namespace {

// Rules between fields, on a document with its defaults filled: the measured window must end after
// the warm-up once both are converted to ns dates (as the run converts them), and hold at most
// kMaxTimeSeriesIntervals intervals.
void check_window(const ojson& doc, const std::string& label) {
  const double duration_ms = doc.at("duration_ms").get<double>();
  const double warmup_ns = doc.at("warmup_ms").get<double>() * 1e6;
  const double end_ns = warmup_ns + duration_ms * 1e6;
  if (!(end_ns > warmup_ns))
    throw InputError(fmt::format(
        "{}: /duration_ms: expected a window that ends after the warm-up, got {} ms, too short to count "
        "after warmup_ms = {}",
        label, show_value(doc.at("duration_ms")), show_value(doc.at("warmup_ms"))));
  const ojson& interval = doc.at("measure").at("interval_ms");
  const double n = std::ceil((end_ns - warmup_ns) / (interval.get<double>() * 1e6));
  if (n > static_cast<double>(kMaxTimeSeriesIntervals))
    throw InputError(fmt::format(
        "{}: /measure/interval_ms: expected at most {} intervals in the measured window (duration_ms = {}), "
        "got {:.0f} of {} ms",
        label, kMaxTimeSeriesIntervals, show_value(doc.at("duration_ms")), n, show_value(interval)));
}

// A machine property given one way: as a list (an idle-exit curve, measured stall lengths), or as
// the scalar fields the list replaces, which must then be 0.
void check_one_way(const ojson& doc, const std::string& label, const char* list,
                   std::initializer_list<const char*> replaced) {
  const ojson& m = doc.at("machine");
  if (m.at(list).empty()) return;
  for (const char* field : replaced)
    if (m.at(field).get<double>() != 0)
      throw InputError(fmt::format(
          "{}: /machine/{}: expected 0 with machine.{} (it says it all; give one or the other), got {}",
          label, field, list, show_value(m.at(field))));
}

// A measured list (idle-exit curve, stall lengths) given to the machine in place of the scalar
// fields it replaces, which are zeroed so check_one_way accepts the result.
void set_list(ojson& machine, const char* list, const std::vector<std::pair<double, double>>& points,
              std::initializer_list<const char*> replaced) {
  ojson array = ojson::array();
  for (const auto& [x, y] : points) array.push_back({x, y});
  machine[list] = array;
  for (const char* field : replaced) machine[field] = 0;
}

// check_window on a copy with the defaults filled, for documents not yet filled.
void check_window_unfilled(const Schema& schema, ojson doc, const std::string& label) {
  fill_defaults(schema, schema.root(), doc);
  check_window(doc, label);
}

}  // namespace

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
  check_window_unfilled(schema, file, source);

  // Every variant is applied and checked, selected or not, so a broken one cannot lurk unused.
  ojson doc = file;
  std::vector<std::string> names;
  bool found = opts.variant.empty();
  if (auto variants = file.find("variants"); variants != file.end()) {
    for (const auto& [name, overrides] : variants->items()) {
      ojson applied = file;
      apply_variant(schema, applied, overrides, source, pointer_append("/variants", name));
      const std::string label = fmt::format("{} (variant {})", source, name);
      validate(schema, root, applied, "", label);
      check_window_unfilled(schema, applied, label);
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
    const auto& cm = opts.calibration->machine;
    if (cm.idle_exit_ns) doc["machine"]["idle_exit_ns"] = *cm.idle_exit_ns;
    if (cm.halt_poll_ns) doc["machine"]["halt_poll_ns"] = *cm.halt_poll_ns;
    if (cm.idle_exit_curve)  // it replaces the step
      set_list(doc["machine"], "idle_exit_curve", *cm.idle_exit_curve, {"idle_exit_ns", "halt_poll_ns"});
    if (cm.preempt) doc["machine"]["preempt"] = *cm.preempt;
    if (cm.wake_pack_util) doc["machine"]["wake_pack_util"] = *cm.wake_pack_util;
    if (cm.stall_lengths)  // they replace the period
      set_list(doc["machine"], "stall_lengths", *cm.stall_lengths, {"stall_every_ns", "stall_ns"});
    else if (cm.stall_every_ns && cm.stall_ns) {
      doc["machine"]["stall_every_ns"] = *cm.stall_every_ns;
      doc["machine"]["stall_ns"] = *cm.stall_ns;
    }
  }
  for (const auto& item : opts.sets) apply_set(schema, doc, item);
  // Each --set value passed its own field's check; this catches combinations, e.g. a changed tag.
  std::string with = opts.calibration ? "with --calibration " + opts.calibration->source : "";
  if (!opts.sets.empty()) with += with.empty() ? "with --set" : " and --set";
  const std::string label = with.empty() ? source
                            : opts.variant.empty()
                                ? fmt::format("{} ({})", source, with)
                                : fmt::format("{} (variant {}, {})", source, opts.variant, with);
  if (!with.empty()) validate(schema, root, doc, "", label);
  // Calibrated costs fill what the scenario (and --set) left to the defaults.
  if (opts.calibration) {
    if (!doc.contains("costs")) doc["costs"] = ojson::object();
    for (const auto& [key, c] : opts.calibration->costs)
      if (!doc["costs"].contains(key)) doc["costs"][key] = c.value;
    // A calibration made before wake_preempt_cycles existed neither measured nor kept it: the
    // wake-up with an IPI (wake_cycles) is what every version before charged there.
    const auto& cal = *opts.calibration;
    const bool kept = std::any_of(cal.defaults_kept.begin(), cal.defaults_kept.end(),
                                  [](const auto& k) { return k.first == "wake_preempt_cycles"; });
    if (!cal.costs.count("wake_preempt_cycles") && !kept && doc["costs"].contains("wake_cycles") &&
        !doc["costs"].contains("wake_preempt_cycles"))
      doc["costs"]["wake_preempt_cycles"] = doc["costs"]["wake_cycles"];
  }
  fill_defaults(schema, root, doc);
  check_window(doc, label);
  check_one_way(doc, label, "idle_exit_curve", {"idle_exit_ns", "halt_poll_ns"});
  check_one_way(doc, label, "stall_lengths", {"stall_every_ns", "stall_ns"});
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
