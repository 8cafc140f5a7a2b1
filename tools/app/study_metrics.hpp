#pragma once
// The metrics that studies (compare, sweep, report) tabulate, in one place: where each is in
// results.json, its sweep.csv column, and its label in tables.
#include <vector>

namespace uringsim::app {

struct StudyMetric {
  const char* pointer;  // JSON pointer into results.json
  const char* column;   // sweep.csv column
  const char* label;    // human label
};

inline const std::vector<StudyMetric>& study_metrics() {
  static const std::vector<StudyMetric> m = {
      {"/throughput/ops_per_s", "throughput_ops_per_s", "throughput (ops/s)"},
      {"/latency_us/mean", "latency_mean_us", "latency mean (us)"},
      {"/latency_us/p50", "latency_p50_us", "latency p50 (us)"},
      {"/latency_us/p99", "latency_p99_us", "latency p99 (us)"},
      {"/cpu/total_pct", "cpu_total_pct", "cpu (%)"},
      {"/profile/spin_slowpath_pct", "spin_slowpath_pct", "spin slow path (% of busy)"},
  };
  return m;
}

}  // namespace uringsim::app
