#pragma once
// Pieces of `uringsim twin` that are pure functions, exposed for unit tests: joining a host sweep
// and a simulated sweep of the same grid, point by point.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace uringsim::app::twin {

// The metrics every twin compares (JSON pointers into results.json); CPU by each thread class
// that either side reports is added per point.
const std::vector<std::string>& fixed_metrics();
// "/latency_us/p50" -> "latency_us.p50"
std::string metric_name(const std::string& pointer);

// {"n", "mean", "ci95" (Student-t half width, null below 2 values), "values"}
nlohmann::json compare_side(const std::vector<double>& xs);

// Groups both sweeps' finished points (sweep.json) by grid values and variant and compares every
// metric: {"rows": [{grid, variant, metrics: {name: {host, sim, abs_error, rel_error_pct}}}],
// "summary": {name: {points, median_abs_error, worst_abs_error (in the metric's unit; CPU in
// points), median_abs_rel_error_pct, worst_abs_rel_error_pct}}}.
// Results files are read relative to each sweep's directory.
nlohmann::json join(const nlohmann::json& host_sweep, const nlohmann::json& sim_sweep,
                    const std::filesystem::path& host_dir, const std::filesystem::path& sim_dir);

// Orderings the host shows clearly for one metric: every pair of rows whose host means differ by
// more than min_gap (relative to the smaller) with non-overlapping 95 % intervals. Returns
// {"metric", "min_gap", "clear", "held", "broken": [{"a", "b", "host": [a, b], "sim": [a, b]}]},
// "held" counting the pairs the simulation orders the same way.
nlohmann::json orderings(const nlohmann::json& joined, const std::string& metric, double min_gap = 0.15);

// twin.csv: one line per (point, metric).
std::string csv(const nlohmann::json& joined, const std::vector<std::string>& grid_paths);

}  // namespace uringsim::app::twin
