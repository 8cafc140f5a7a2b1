#pragma once
// results.json and run_info.json of a host run, in the simulator's schema where a key applies
// (docs/results-format.md), with "source": "host"; and the summary lines `uringsim host` prints.
#include <cstdint>
#include <map>
#include <optional>
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
// iowq.workers_peak, and per_request / per_request_totals: the context switches of ring_classes
// (the thread classes that own a ring, e.g. io_uring_echo_s) and of the io-wq workers, and the
// machine's IPIs, per window completion. The runner adds its own section.
nlohmann::json host_results(const config::Scenario& scenario, const HostOptions& options,
                            const FrameResult& run, const std::vector<std::string>& ring_classes);

// per_request and per_request_totals from the window's counts (also the fio runner's, with its
// own classes): context switches of `classes`, IPIs, migrations, and the wait for a CPU of every
// class (not only `classes`); an unknown count is null.
void add_per_request(nlohmann::json& results, const SchedCounts& sched, std::uint64_t requests,
                     const std::vector<std::string>& classes);

nlohmann::json host_run_info(const config::Scenario& scenario, const MachineInfo& machine,
                             const FrameResult& run, const nlohmann::json& ignored_fields);

// throughput, latency, cpu by class, requests, other processes' CPU.
std::vector<std::pair<std::string, std::string>> host_summary(const nlohmann::json& results,
                                                              const nlohmann::json& run_info);

}  // namespace uringsim::host
