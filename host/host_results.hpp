#pragma once
// results.json and run_info.json of a host run, in the simulator's schema where a key applies
// (docs/results-format.md), with "source": "host"; and the summary lines `uringsim host` prints.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/scenario.hpp"
#include "host/host_run.hpp"
#include "host/machine_info.hpp"
#include "host/run_frame.hpp"

namespace uringsim::host {

// The workload-independent part: RunMetrics' sections (throughput, latency_us, requests, window,
// timeseries, gauges), source, tool, scenario, variant, seed, cpu, context_switches,
// iowq.workers_peak. The runner adds its own section.
nlohmann::json host_results(const config::Scenario& scenario, const HostOptions& options,
                            const FrameResult& run);

nlohmann::json host_run_info(const config::Scenario& scenario, const MachineInfo& machine,
                             const FrameResult& run, const nlohmann::json& ignored_fields);

// throughput, latency, cpu by class, requests, other processes' CPU.
std::vector<std::pair<std::string, std::string>> host_summary(const nlohmann::json& results,
                                                              const nlohmann::json& run_info);

}  // namespace uringsim::host
