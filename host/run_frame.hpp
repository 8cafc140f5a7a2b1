#pragma once
// The course of every host run, whatever the workload: wait for quiet if asked, start the
// workload's threads, give them a common t0, run the window on the coordinating thread (sampling),
// stop everyone, join, merge what the threads recorded, and turn what went wrong into the right
// exception (Interrupted, a time-limit or runner failure).
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "analysis/metrics.hpp"
#include "config/scenario.hpp"
#include "host/guard.hpp"
#include "host/host_run.hpp"
#include "host/kick_probe.hpp"
#include "host/quiet.hpp"
#include "host/speed_probe.hpp"
#include "host/startup.hpp"
#include "host/syscall_probe.hpp"
#include "host/wake_probe.hpp"
#include "host/window.hpp"

namespace uringsim::host {

struct FrameResult {
  std::optional<analysis::RunMetrics> metrics;
  WindowOutcome window;
  WindowCpu cpu;
  QuietOutcome quiet;
  double wall_s = 0;                     // t0 to the end of the window
  SpeedProbe speed_before, speed_after;  // the CPU's speed just before and after (host/speed_probe.hpp)
  // An idle CPU's wake-up just before (host/wake_probe.hpp); not after: by then the run's stop is
  // requested, which ends any bounded wait, the probe's too.
  std::optional<WakeProbe> wake_before;
  SyscallProbe syscall_before;           // a system call's price just before (host/syscall_probe.hpp)
  std::optional<KickProbe> kick_before;  // a task_work kick's delivery just before (host/kick_probe.hpp)
};

// The hard time limit of a run: the quiet wait, warm-up and window, plus this margin for setup and
// teardown.
constexpr double kRunMarginS = 10;
double run_limit_s(const config::Scenario& scenario, const HostOptions& options);

analysis::MetricsConfig host_metrics_config(const config::Scenario& scenario);

// spawn: starts the workload's threads with startup.spawn (each calls ready() then wait_go()) and
// adds them to `running`, so that they are joined even if starting a later one fails; `threads` is
// how many. recorded: each thread's own metrics (made with host_metrics_config), where it records
// its requests; the frame merges them once the threads have stopped. A runner that handed its
// records to the coordinator during the run lost 10-30 % of its speed to it (docs/host.md).
using SpawnThreads = std::function<void(Startup& startup, std::vector<std::thread>& running)>;
FrameResult run_frame(const config::Scenario& scenario, const HostOptions& options, RunGuard& guard,
                      int threads, const SpawnThreads& spawn,
                      const std::vector<const analysis::RunMetrics*>& recorded);

}  // namespace uringsim::host
