#pragma once
// Running a scenario's workload on the real kernel (uringsim host). host/ is the only code that
// talks to the kernel's io_uring (liburing); what it measures goes into results.json in the
// simulator's own schema, with "source": "host", so compare, sweep, report and twin read it like a
// simulated run.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/scenario.hpp"
#include "host/quiet.hpp"

namespace uringsim::host {

struct HostOptions {
  bool ignore_model_fields = false;  // list model-only fields in run_info instead of refusing them
  std::string target;                // fio: file or device to run on; "" = a file in a temporary dir
  double quiet_wait_s = 0;           // wait up to this long for other processes' CPU to settle
  double quiet_other_cpu_pct = kQuietOtherCpuPct;  // "quiet" = other processes use less (% of one CPU)
  double quiet_max_ns_per_add = 0;  // and the CPU speed probe reads at most this (0: not asked)
  bool quiet = false;               // print no progress
  std::string tool_version;         // results.json tool.version (the command passes its own)
};

struct HostRun {
  nlohmann::json results;   // results.json (source "host")
  nlohmann::json run_info;  // kernel release, CPU model, nproc, other processes' CPU, window, ignored
  std::vector<std::pair<std::string, std::string>> summary;  // lines of the human summary
  std::string text;                                          // free-form report (fio's), or ""
};

// The host cannot run this: io_uring disabled or missing, a feature too old, an unreachable target.
// Tools report it as bad input (exit 2) and write nothing.
struct Unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs the scenario's workload for real. Throws config::InputError for a field the host cannot
// honour (unless ignore_model_fields), Unavailable as above, std::runtime_error for a failed run.
HostRun run_scenario(const config::Scenario& scenario, const HostOptions& options);

}  // namespace uringsim::host
