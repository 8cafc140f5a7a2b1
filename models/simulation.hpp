#pragma once
// One simulation, end to end: checked scenario -> engine + model -> run -> results.
// One per process (a SimGrid engine cannot be reset).
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/scenario.hpp"
#include "sim/checks.hpp"

namespace uringsim::models {

struct RunOutput {
  nlohmann::json results;   // deterministic: same scenario + seed => same bytes
  nlohmann::json run_info;  // what varies from run to run: wall time, events/s, memory
  std::vector<std::pair<std::string, std::string>> summary;  // human summary lines
  std::string text;  // the model's free-form report (Model::text_report), printed after the summary
  std::vector<std::string> reports;  // longer texts to print after the summary (lockdep-style cycles)
  // Design-review checks (docs/models/checks.md): false if a rule was broken, a lock-order cycle
  // was found or the run deadlocked. The results are complete either way.
  bool checks_ok = true;
  std::size_t trace_events = 0;  // events in the timeline's window, when one was recorded
  std::vector<sim::LockOrderEdge> lock_order;
  sim::WaitSnapshot wait_for;  // at the deadlock, or at the end of the run
};

// A timeline to record: Chrome/Perfetto trace-event JSON written to `path` for [start_ms, end_ms].
struct TraceRequest {
  std::string path;
  double start_ms = 0, end_ms = 0;
};

RunOutput simulate(const config::Scenario& scenario, const std::string& tool_version,
                   const TraceRequest* trace = nullptr);

// The scenario's components as the model builds them, without running the simulation.
sim::Topology build_topology(const config::Scenario& scenario);

}  // namespace uringsim::models
