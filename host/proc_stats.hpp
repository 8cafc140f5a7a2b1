#pragma once
// CPU time and context switches of a process's threads, from /proc, and the machine's busy time
// from /proc/stat: what `uringsim host` reports as cpu.by_thread, context switches and the CPU
// other processes used. Linux only.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace uringsim::host {

struct TaskStats {
  pid_t tid = 0;
  std::string comm;  // /proc/PID/task/TID/comm, e.g. "iou-wrk-1234"
  // CPU time (user + system), ns. For this process's threads from their CPU clocks
  // (clock_gettime); for another process's from schedstat's sum_exec_runtime when the kernel has it
  // (CONFIG_SCHED_INFO), else utime + stime in clock ticks.
  std::int64_t cpu_ns = 0;
  std::uint64_t voluntary_ctxt_switches = 0;
  std::uint64_t nonvoluntary_ctxt_switches = 0;
  // se.nr_migrations of /proc/PID/task/TID/sched: moves to another CPU; unset if the kernel has no
  // such file (built without the scheduler's debug interface before 6.13).
  std::optional<std::uint64_t> nr_migrations;
  // run_delay of /proc/PID/task/TID/schedstat (its second field): ns spent runnable, waiting for a
  // CPU; unset without CONFIG_SCHED_INFO.
  std::optional<std::int64_t> run_delay_ns;
};

// The live threads of pid (0 = this process), sorted by tid. A thread that exits while the list is
// read is left out. Throws std::runtime_error if /proc/PID/task cannot be read at all.
std::vector<TaskStats> list_tasks(pid_t pid = 0);

// Only tid and comm of each live thread: cheap enough to sample every millisecond.
std::vector<std::pair<pid_t, std::string>> list_task_names(pid_t pid = 0);

// The simulator's thread class for a command name: a trailing "-<digits>" is dropped
// ("iou-wrk-1234" -> "iou-wrk", "client-3" -> "client"), anything else is kept as it is.
std::string thread_class(const std::string& comm);

// CPU time of the whole process, exited threads included. For this process from getrusage
// (microseconds); for another from /proc/PID/stat utime + stime (clock ticks).
std::int64_t process_cpu_ns(pid_t pid = 0);

// Context switches of the whole process, exited threads included (getrusage RUSAGE_SELF:
// ru_nvcsw, ru_nivcsw).
struct ProcessSwitches {
  std::uint64_t voluntary = 0, involuntary = 0;
};
ProcessSwitches process_switches();

// CPU time used by the children this process has waited for (getrusage RUSAGE_CHILDREN).
std::int64_t children_cpu_ns();

// Busy time of all CPUs since boot: /proc/stat "cpu" line, everything but idle and iowait
// (guest time is already inside user, so it is not added twice). Clock ticks converted to ns.
std::int64_t machine_busy_ns();

// The parsed fields behind machine_busy_ns, for tests: the text of a /proc/stat "cpu" line.
std::int64_t busy_ticks_from_stat_line(const std::string& line);

// The machine's inter-processor interrupts since boot, summed over CPUs, by kind: "reschedule"
// (x86 RES, arm64 IPI0: a wake-up or a task_work notification kicking another CPU) and
// "function_call" (x86 CAL, arm64 IPI1: smp_call_function, e.g. a remote wake-up queued on an
// idle CPU's wake list). Read from /proc/interrupts, which any user may read; nullopt when it
// cannot be read or has neither line.
std::optional<std::map<std::string, std::uint64_t>> machine_ipis();
using IpiCounts = std::map<std::string, std::uint64_t>;
// What each kind grew by from `start` to `end` (two machine_ipis readings); nullopt unless both are
// there.
std::optional<IpiCounts> ipis_between(const std::optional<IpiCounts>& start,
                                      const std::optional<IpiCounts>& end);
// The parsing behind machine_ipis, for tests: the text of /proc/interrupts.
std::optional<std::map<std::string, std::uint64_t>> ipis_from_interrupts(const std::string& text);

// What the scheduler did over a window, for results' per_request (the echo and NOP runners' window
// and fio's). An unknown count (nullopt) is one that some thread's or the machine's /proc entry
// could not give.
struct SchedCounts {
  std::map<std::string, std::uint64_t> switches_by_class;  // voluntary + involuntary, by class
  std::optional<IpiCounts> ipis;                           // the machine's, by kind
  std::optional<std::uint64_t> migrations = 0;             // moves to another CPU
  std::optional<std::map<std::string, double>> run_delay_ns_by_class = std::map<std::string, double>{};
  // Adds one thread's moves and run_delay since `before` (nullptr: born in the window, all of
  // them), its run_delay under `cls`. An unknown value on either side makes that sum unknown.
  void add_thread(const std::string& cls, const TaskStats& now, const TaskStats* before);
};

// Nanoseconds per clock tick (sysconf(_SC_CLK_TCK)).
std::int64_t ns_per_clock_tick();

}  // namespace uringsim::host
