#pragma once
// A simulated kernel or user thread, run as a SimGrid actor pinned to one CPU.
//
// CPU work is *charged* lazily: charge() only accumulates cycles per symbol, and the accumulated
// work is executed as one activity at the thread's next interaction with the rest of the system
// (lock, unlock, wake, park, sleep, reading the clock). Nothing observable happens in between, so
// the timing is the same as executing every piece at once, with far fewer simulation events.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/label.hpp"
#include "sim/types.hpp"

namespace uringsim::sim {

class Engine;

struct ThreadOptions {
  double weight = 1.0;  // CPU share when threads share a CPU (CFS weight / 1024; nice -15 = 29154/1024)
  bool daemon = false;  // daemons do not keep the simulation alive (timers, samplers)
  // false for simulator helpers and remote peers: they model no CPU of the machine, and CPU work
  // charged to them is dropped (takes no time, is not counted).
  bool accounted = true;
};

class Thread {
 public:
  enum class State { Running, Parked, Sleeping, Spinning, Done };

  const std::string& name() const { return name_; }
  const std::string& comm() const { return comm_; }  // thread class, as `perf` shows the command
  int cpu() const { return cpu_; }
  int id() const { return id_; }
  double weight() const { return opts_.weight; }
  State state() const { return state_; }
  bool accounted() const { return opts_.accounted; }

  // --- only from this thread ---
  void charge(Cycles c, Label symbol);  // CPU work, executed lazily (see above)
  void flush();                         // execute pending work now
  void compute(Cycles c, Label symbol) {
    charge(c, symbol);
    flush();
  }
  void sleep_ns(TimeNs ns);  // off CPU for ns, after the pending work
  // When this thread's pending work will be done: exact on a CPU it has to itself, an estimate
  // (as if alone) otherwise. For timestamps nothing waits on; it executes nothing.
  TimeNs local_now_ns() const;
  void park();                  // block until unpark(); returns at once if a permit is pending
  bool park_for_ns(TimeNs ns);  // false on timeout
  // Busy-wait (a polling loop whose passes find nothing) until unpark() or for at most ns (infinity:
  // no timeout). The thread keeps its CPU busy meanwhile, accounted to `symbol`. False on timeout.
  bool spin_for_ns(TimeNs ns, Label symbol);
  // Wait for a lock hand-off (grant()). Wake-ups (unpark) that arrive meanwhile do not end this
  // wait; they leave a permit for the next park, as a wake-up of a running task does. With `spin`
  // the thread burns its CPU while waiting, accounted to `symbol`. Returns the cycles spun.
  Cycles await_grant(bool spin, Label symbol);

  // --- from any thread ---
  void unpark();  // wake a parked thread, or leave a permit
  // Wake-up that takes effect at `t_ns` (>= now): the woken thread resumes no earlier. Lets a waker
  // on an exclusive CPU wake others without first simulating its own pending work.
  void unpark_at(TimeNs t_ns);
  TimeNs wake_not_before_ns() const { return wake_not_before_ns_; }
  void grant();  // hand a lock to this thread (ends await_grant)

  // CPU accounting: cycles by symbol, whole run and since the window start.
  const std::vector<Cycles>& cycles_by_symbol() const { return cycles_; }
  std::vector<Cycles> window_cycles_by_symbol() const;
  Cycles window_cycles() const;
  void mark_window_start() { base_ = cycles_; }

  ~Thread();

 private:
  friend class Engine;
  Thread(Engine& e, int id, std::string name, std::string comm, int cpu, ThreadOptions opts);
  void account(Cycles c, Label symbol);
  void release_park();
  void wait_released(bool forever);

  struct Impl;
  Engine& engine_;
  int id_;
  std::string name_, comm_;
  int cpu_;
  ThreadOptions opts_;
  State state_ = State::Running;
  Cycles pending_ = 0;
  bool permit_ = false;
  bool granted_ = false;  // a grant() arrived before await_grant() started
  TimeNs wake_not_before_ns_ = 0;
  std::vector<std::pair<Label, Cycles>> pending_parts_;  // only while a trace is recorded
  void trace_compute(TimeNs t0, TimeNs t1);
  void trace_wait(const char* what, TimeNs t0);
  std::vector<Cycles> cycles_, base_;
  std::unique_ptr<Impl> impl_;
};

// The thread running now (the caller). Throws std::logic_error outside a simulated thread.
Thread& current();
// Current simulated time in ns, after executing the caller's pending work.
TimeNs now_ns();

}  // namespace uringsim::sim
