#pragma once
// The simulation engine: one per process (a SimGrid engine cannot be reset). It builds the
// machine (one single-core SimGrid host per CPU, so CPUs are independent constraints and pinning
// is natural), owns every thread and lock, and runs the simulation up to a date.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/checks.hpp"
#include "sim/cpu_sched.hpp"
#include "sim/horizon.hpp"
#include "sim/thread.hpp"
#include "sim/trace_sink.hpp"
#include "sim/types.hpp"

namespace uringsim::sim {

class AtomicLine;
class LockClass;
class WaitQueue;

// Spawning one more thread than the machine running the simulation can hold (see
// ThreadCapacity). Thrown while a model builds, it is a scenario asking for too much (the caller
// reports it as bad input); during the run it fails the run.
class ThreadLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How many simulated threads can live at once. Each is a SimGrid actor with its own stack, which
// takes two memory maps (the stack and its guard page) of the vm.max_map_count the kernel allows a
// process, and stack_bytes of address space.
struct ThreadCapacity {
  std::uint64_t max_map_count = 0;                // /proc/sys/vm/max_map_count
  std::uint64_t maps_in_use = 0;                  // lines of /proc/self/maps before any thread exists
  std::uint64_t stack_bytes = 0;                  // SimGrid's contexts/stack-size
  std::uint64_t address_space_left = UINT64_MAX;  // RLIMIT_AS less what is mapped; UINT64_MAX = no limit
  static constexpr std::uint64_t kMapsPerThread = 2;
  static constexpr std::uint64_t kSpareMaps = 2000;  // for the heap, libraries and SimGrid itself

  static ThreadCapacity of_this_process(std::uint64_t stack_bytes);
  std::uint64_t max_threads() const;
  std::string explain() const;  // what bounds max_threads(), for the error message
};

// The environment variable with extra SimGrid options for the engine, "NAME:VALUE" items separated
// by ';' or white space, e.g. "contexts/factory:thread" for sanitizer runs (docs/architecture.md).
inline constexpr const char* kSimgridCfgEnv = "URINGSIM_SIMGRID_CFG";
// Its items, checked (NAME:VALUE, a known context factory); std::invalid_argument otherwise.
std::vector<std::string> simgrid_cfg_from_env();

// The environment variable that turns the lookahead off ("off") for a whole run; "on" or unset:
// on. For checking that a model's results do not depend on it (docs/architecture.md).
inline constexpr const char* kLookaheadEnv = "URINGSIM_LOOKAHEAD";

class Engine {
 public:
  Engine(const MachineSpec& machine, const PrimitiveCosts& costs);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  static Engine& get();     // the process's engine; std::logic_error if none
  static Engine* get_if();  // nullptr if none

  const MachineSpec& machine() const { return machine_; }
  const PrimitiveCosts& costs() const { return costs_; }
  TimeNs cycles_to_ns(Cycles c) const { return c / machine_.ghz; }
  Cycles ns_to_cycles(TimeNs ns) const { return ns * machine_.ghz; }
  // Raw clock, without flushing anyone's pending work. Read from a copy of SimGrid's clock that a
  // time-advance callback keeps up to date: the clock is read millions of times per run, and
  // SimGrid's getter costs a library call each time (same value, bit for bit).
  TimeNs clock_ns() const { return sg_clock_s_ * 1e9; }

  // Create a thread pinned to `cpu` (0-based) running `body`. It starts at the current date.
  Thread& spawn(const std::string& name, const std::string& comm, int cpu, std::function<void()> body,
                ThreadOptions opts = {});
  // At most capacity().max_threads() threads live at once; one more is a ThreadLimitError.
  const ThreadCapacity& capacity() const { return capacity_; }
  // Run `fn` at date `t_ns` in a helper daemon thread (not accounted).
  void at_ns(TimeNs t_ns, std::function<void()> fn);

  // Optional timeline: set before threads are spawned so every track is named.
  void set_trace(TraceSink* t) { trace_ = t; }
  TraceSink* trace() const { return trace_; }

  // Measurement window: counters (CPU, locks) are snapshot at `start_ns`.
  void set_window(TimeNs start_ns, TimeNs end_ns);
  TimeNs window_start_ns() const { return window_start_; }
  TimeNs window_end_ns() const { return window_end_; }

  // Run until `t_ns` (or until every non-daemon thread has finished).
  void run_until_ns(TimeNs t_ns);
  // Deadlock: every thread is blocked with nothing that could wake it (no timer, no runner).
  // The run stops at that date instead of idling to the end.
  // A thread waiting for a lock whose chain of owners leads back to it also stops the run (spinning
  // waiters never count as blocked, so the rule above alone would miss a spinlock deadlock).
  bool deadlocked() const { return deadlocked_; }
  TimeNs deadlock_ns() const { return deadlock_ns_; }
  // From the current thread: record what every thread waits for, stop the run. Does not return.
  [[noreturn]] void stop_on_deadlock();
  // What every live, non-daemon thread waits for now (the wait-for graph's data); the one taken at
  // the deadlock, if the run deadlocked.
  WaitSnapshot wait_snapshot() const;
  const std::optional<WaitSnapshot>& deadlock_snapshot() const { return deadlock_snapshot_; }

  // Design-review checks: violations and the lock-order graph (sim/checks.hpp).
  Checks& checks() { return checks_; }
  const Checks& checks() const { return checks_; }

  // Topology of the scenario (components and how they connect), for `uringsim graph --kind
  // topology`. Threads (non-daemon), locks and named wait queues are nodes already; models declare
  // the rest (queues, devices, rings) and the edges. An edge's ends must be nodes by then.
  void declare(const std::string& kind, const std::string& name);
  void declare_edge(const std::string& from, const std::string& to, const std::string& label);
  Topology topology() const;  // std::logic_error if an edge names an unknown node
  void register_waitqueue(const WaitQueue* q) { waitqueues_.push_back(q); }
  void unregister_waitqueue(const WaitQueue* q);

  const std::vector<std::unique_ptr<Thread>>& threads() const { return threads_; }
  // Every lock reports through its class (sim/lock.hpp): a lock of its own, or many sharing one.
  const std::vector<LockClass*>& lock_classes() const { return lock_classes_; }
  void register_lock_class(LockClass* c) { lock_classes_.push_back(c); }
  void unregister_lock_class(LockClass* c);
  const std::vector<AtomicLine*>& atomics() const { return atomics_; }
  void register_atomic(AtomicLine* a) { atomics_.push_back(a); }
  void unregister_atomic(AtomicLine* a);

  // Who runs on each CPU (sim/cpu_sched.hpp).
  CpuScheduler& scheduler() { return *sched_; }
  const CpuScheduler& scheduler() const { return *sched_; }

  // Simulation activities started (executions, sleeps, parks): the "events" of run_info.json.
  enum class EventKind { Compute, Sleep, Park, ParkTimeout, LockWait, Count };
  std::uint64_t events() const { return events_; }
  std::uint64_t events(EventKind k) const { return events_by_kind_[static_cast<int>(k)]; }
  void count_event(EventKind k) {
    ++events_;
    ++events_by_kind_[static_cast<int>(k)];
  }
  // A compute event's cause; for OtherThreadFirst, the thread with the earliest horizon (-1: none).
  void count_sync(SyncCause c, int first_thread) {
    ++syncs_by_cause_[static_cast<int>(c)];
    if (c != SyncCause::OtherThreadFirst || first_thread < 0) return;
    if (syncs_first_.size() <= static_cast<std::size_t>(first_thread))
      syncs_first_.resize(static_cast<std::size_t>(first_thread) + 1, 0);
    ++syncs_first_[static_cast<std::size_t>(first_thread)];
  }
  std::uint64_t syncs(SyncCause c) const { return syncs_by_cause_[static_cast<int>(c)]; }
  // OtherThreadFirst by the thread class (comm) of the thread that could act first.
  std::map<std::string, std::uint64_t> syncs_other_first_by_comm() const;

  // Called by a thread at each of its interactions with the simulation (Thread::flush). A run
  // whose clock stays at one date for kMaxStepsAtOneDate of them makes no progress (e.g. a loop
  // whose costs are all 0): it fails, naming the threads that ran at that date.
  static constexpr std::uint64_t kMaxStepsAtOneDate = 10'000'000;
  // `date_ns`: the thread's local date (its pending work done), which a thread running ahead of
  // SimGrid's clock advances without the clock (sim/horizon.hpp).
  void step(const Thread& t, TimeNs date_ns) {
    if (date_ns != step_date_ns_) {
      step_date_ns_ = date_ns;
      steps_at_date_ = 0;
      if (!stuck_threads_.empty()) stuck_threads_.clear();
    } else if (++steps_at_date_ >= kMaxStepsAtOneDate - kStuckWatchSteps) {
      stuck_step(t);
    }
  }

  struct Impl;
  Impl& impl() { return *impl_; }

  // Lookahead (sim/horizon.hpp): the earliest date at which a thread other than `self_id` could
  // act, bounded by the end of the run.
  Horizons& horizons() { return horizons_; }
  // Off: every lock operation executes the caller's pending work first, as without lookahead (for
  // tests that check the lookahead changes nothing).
  void set_lookahead(bool on) { lookahead_ = on; }
  bool lookahead() const { return lookahead_; }
  // Some thread is an interrupt handler: it can stretch the CPU work of any thread on its CPU.
  bool has_interrupts() const { return interrupt_threads_ > 0; }
  TimeNs lookahead_ns(int self_id) const { return std::min(horizons_.min_excluding(self_id), run_end_ns_); }

 private:
  friend class Thread;
  // Threads that may still run: spawned, not finished, not parked without a timeout.
  void thread_became_active(bool was_parked = false) {
    ++active_threads_;
    if (was_parked) --parked_threads_;
  }
  void thread_became_blocked(bool parked);
  // The last kStuckWatchSteps steps at a stuck date record who runs; the last one fails the run.
  static constexpr std::uint64_t kStuckWatchSteps = 100'000;
  void stuck_step(const Thread& t);

 private:
  static double sg_clock_s_;  // SimGrid's clock (s) as of its last advance; see clock_ns()
  MachineSpec machine_;
  PrimitiveCosts costs_;
  std::unique_ptr<Impl> impl_;
  std::vector<std::unique_ptr<Thread>> threads_;
  std::vector<LockClass*> lock_classes_;
  std::vector<AtomicLine*> atomics_;
  TimeNs window_start_ = 0, window_end_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t events_by_kind_[static_cast<int>(EventKind::Count)] = {};
  std::uint64_t syncs_by_cause_[static_cast<int>(SyncCause::Count)] = {};
  std::vector<std::uint64_t> syncs_first_;  // by thread id
  std::int64_t active_threads_ = 0, parked_threads_ = 0;
  std::unique_ptr<CpuScheduler> sched_;
  Horizons horizons_;
  TimeNs run_end_ns_ = Horizons::kNever;
  bool lookahead_ = true;
  int interrupt_threads_ = 0;  // spawned with ThreadOptions::interrupt
  bool running_ = false;       // run_until_ns has started: threads spawned from now on are new
  void start_cpu_stalls();     // MachineSpec::stall_every_ns: one interrupt-like thread per CPU
  ThreadCapacity capacity_;
  std::uint64_t live_threads_ = 0;  // spawned and not finished (their actors hold a stack)
  TimeNs step_date_ns_ = -1;
  std::uint64_t steps_at_date_ = 0;
  std::set<std::string> stuck_threads_;
  bool stuck_ = false;
  TraceSink* trace_ = nullptr;
  bool deadlocked_ = false;
  TimeNs deadlock_ns_ = 0;
  std::optional<WaitSnapshot> deadlock_snapshot_;
  Checks checks_;
  std::vector<const WaitQueue*> waitqueues_;
  std::vector<TopologyNode> declared_;
  std::vector<TopologyEdge> declared_edges_;
};

}  // namespace uringsim::sim
