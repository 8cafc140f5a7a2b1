#pragma once
// Loading scenario files: parse, check strictly against scenarios/schema.json, apply the selected
// variant and --set overrides, fill defaults. See docs/scenario-format.md (generated).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/calibration.hpp"
#include "config/cost_table.hpp"
#include "config/input_error.hpp"

namespace uringsim::config {

// Most intervals of the time series in the measured window (measure.interval_ms); the loader
// refuses a scenario with more (analysis::RunMetrics holds one counter per interval).
constexpr std::size_t kMaxTimeSeriesIntervals = 10'000'000;

struct LoadOptions {
  std::string variant;            // "" = none; an unknown name is an InputError listing the variants
  std::vector<std::string> sets;  // --set items "dotted.path=value", applied in order after the variant
  std::optional<uint64_t> seed;   // --seed: replaces the scenario's seed
  // --calibration: its machine.cores/ghz replace the scenario's (after the variant, before --set)
  // and its costs the cost table's defaults; the scenario's own costs and --set win over it.
  std::optional<Calibration> calibration;
};

struct Scenario {
  std::string source;          // path or label used in messages
  std::string variant;         // applied variant ("" if none)
  nlohmann::json doc;          // validated, defaults filled, variant + --set + seed applied
  CostTable costs;             // defaults overridden by doc["costs"]
  nlohmann::json calibration;  // null, or the applied calibration's provenance (Calibration::provenance)

  // e.g. at("/machine/cores"); std::logic_error if absent (the schema guarantees what is there).
  const nlohmann::json& at(const std::string& json_pointer) const;
};

// Messages name the file as `path` is written; throws InputError for any problem in the input.
Scenario load_scenario_file(const std::string& path, const LoadOptions& opts = {});
// source: how messages name the text (a path or a label).
Scenario load_scenario_text(std::string_view text, const std::string& source, const LoadOptions& opts = {});

// docs/scenario-format.md, generated from the schema and the cost table.
std::string schema_markdown();

// A --set value: JSON if it parses (20, 1.5, true, "x", [..]), else the bare text as a string.
nlohmann::json parse_set_value(std::string_view text);

}  // namespace uringsim::config
