#pragma once
// fio's report of a run (fio --output-format=normal,json) in the simulator's results schema
// (docs/results-format.md): what fio itself measured, over its window (after ramp_time). Pure
// functions; the runner adds the CPU it sampled and run_info (host/fio_runner.cpp).
#include <string>

#include <nlohmann/json.hpp>

#include "config/scenario.hpp"

namespace uringsim::host {

struct FioOutput {
  nlohmann::json json;  // fio's JSON document
  std::string text;     // the rest: fio's normal report
};

// fio writes both formats to one file: the JSON document runs from a line "{" to a line "}" (its
// nested lines are indented). std::runtime_error if there is none or it does not parse.
FioOutput split_fio_output(const std::string& output);

// The sections fio's JSON gives, for a scenario with a fio workload:
//   window {start_ms, end_ms, seconds, completions, submitted}, throughput.ops_per_s (total IOPS),
//   latency_us (fio's lat, with measure.percentiles), requests,
//   fio {jobs, version, read, write: {ios, iops, bw_bytes_per_s, slat_us, clat_us, lat_us}, cpu, ctx}.
// Latencies are in microseconds; a percentile fio did not report is null. std::runtime_error when
// the job reports an error or the JSON lacks what is needed.
nlohmann::json fio_results(const nlohmann::json& fio_json, const config::Scenario& scenario);

}  // namespace uringsim::host
