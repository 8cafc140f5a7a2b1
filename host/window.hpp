#pragma once
// The measured window of a host run, as the coordinating (main) thread runs it: the warm-up, then
// duration_ms during which it samples the io-wq workers and, at both ends, every thread's CPU time
// and context switches; then the CPU by thread class as results.json reports it.
//
// CPU attribution: each live thread's CPU-time delta goes to its class (thread_class of its
// comm). A thread that exits during the window is not in the end snapshot; its CPU is the
// process's CPU delta (which includes exited threads) minus the live threads' deltas, and is
// attributed to iou-wrk: the only threads of ours that come and go are io-wq workers. The runner's
// own threads (the coordinator and the guard's watchdog) are left out of cpu.* and reported as
// runner_cpu_pct. Other processes' CPU = the machine's busy-time delta minus ours. Context
// switches follow the same rule: an exited thread's are the process's (getrusage) less the live
// threads', attributed to iou-wrk.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/metrics.hpp"
#include "host/guard.hpp"
#include "host/proc_stats.hpp"

namespace uringsim::host {

struct CpuSnapshot {
  RunGuard::Clock::time_point t;
  std::vector<TaskStats> tasks;
  std::int64_t process_ns = 0;                               // this process, exited threads included
  std::int64_t children_ns = 0;                              // its waited-for children (fio)
  std::int64_t machine_busy_ns = 0;                          // all CPUs
  ProcessSwitches process_switches;                          // this process, exited threads included
  std::optional<std::map<std::string, std::uint64_t>> ipis;  // the machine's, by kind (machine_ipis)
};
CpuSnapshot take_cpu_snapshot();

struct WindowCpu {
  double seconds = 0;               // between the two snapshots
  nlohmann::json cpu;               // {total_pct, by_thread: {<class>_pct}, exited_threads_pct}
  nlohmann::json context_switches;  // see docs/results-format.md
  double runner_cpu_pct = 0;        // the runner's own threads
  double other_cpu_pct = 0;         // other processes (% of one CPU), clamped at 0
  std::uint64_t requests = 0;       // completions in the window
  // Runner threads left out: switches by class (exited threads' in iou-wrk), the machine's IPIs
  // (every process's), the live threads' migrations and run_delay.
  SchedCounts sched;
};

// requests: completions in the window, for the per-request context switches. exited: a thread
// was seen to exit during the window (only then is the residual CPU attributed to iou-wrk).
WindowCpu window_cpu(const CpuSnapshot& start, const CpuSnapshot& end, const std::set<pid_t>& runner_tids,
                     bool exited, std::uint64_t requests);

// The coordinator wakes this often to count the io-wq workers (reading /proc) and to feed the
// runners' events into the metrics. Its own CPU disturbs what it measures on a small machine: it
// was 7.8 % of a CPU at a 1 ms step, 2.5 % at 10 ms, 1.0 % at 100 ms, and the pinned async-1
// echo at 100 connections ran 11-20 % faster with a 10-50 ms step than with 1 ms (docs/validation.md,
// session 19).
// The time series do not need it: throughput per interval comes from the events' own dates, and a
// gauge holds its last sample.
inline constexpr double kHostSampleStepNs = 50e6;

struct WindowPlan {
  double warmup_ns = 0, end_ns = 0;           // from t0
  double sample_step_ns = kHostSampleStepNs;  // io-wq worker sampling and event draining
};

struct WindowOutcome {
  bool completed = false;  // false: a stop (signal, time limit, a runner failure) came first
  CpuSnapshot start, end;
  bool threads_exited = false;  // a thread seen in the window was gone later
  double workers_peak = 0;      // io-wq workers (iou-wrk threads), whole run
};

// Runs on the coordinating thread from t0 until the window's end or a stop. Every step it counts
// the iou-wrk threads into metrics' gauge "iowq.workers"; it snapshots CPU at the window's start
// and end.
WindowOutcome run_window(const RunGuard& guard, RunGuard::Clock::time_point t0, const WindowPlan& plan,
                         analysis::RunMetrics& metrics);

}  // namespace uringsim::host
