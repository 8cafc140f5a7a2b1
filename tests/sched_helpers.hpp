#pragma once
// Hand-built scheduler cases with known answers: a 2-CPU machine at 1 GHz, EEVDF, PREEMPT_NONE,
// HZ 250 (a tick every 4 ms); built with zero primitive costs, the dates follow from the
// scheduler's rules alone.
#include "sim/engine.hpp"
#include "sim/label.hpp"
#include "sim/sched.hpp"
#include "sim/thread.hpp"

namespace sched_case {

constexpr uringsim::sim::TimeNs kMs = 1e6;

// Where and when a thread first ran after its wake-up.
struct Landing {
  int cpu = -1;
  uringsim::sim::TimeNs at = -1;
};

inline uringsim::sim::MachineSpec two_cpus() {
  uringsim::sim::MachineSpec m;
  m.cores = 2;
  m.ghz = 1.0;
  m.sched.policy = uringsim::sim::SchedPolicy::Eevdf;
  m.sched.preempt = uringsim::sim::PreemptModel::None;
  m.sched.hz = 250;
  return m;
}

// On `cpu`, a kernel thread that first sleeps `sleep_ns` if > 0 (a thread spawned there runs
// first), then keeps its CPU for `busy_ns`: under PREEMPT_NONE it has no preemption point.
inline void spawn_hog(uringsim::sim::Engine& e, const char* name, int cpu, uringsim::sim::TimeNs sleep_ns,
                      uringsim::sim::TimeNs busy_ns) {
  using namespace uringsim::sim;
  ThreadOptions kthread;
  kthread.kernel = true;
  e.spawn(
      name, "kthread", cpu,
      [sleep_ns, busy_ns] {
        if (sleep_ns > 0) current().sleep_ns(sleep_ns);
        current().compute(busy_ns, intern("work"));
      },
      kthread);
}

// On CPU 0, an unpinned thread that runs `run_ns`, sleeps `sleep_ns`, and on waking records in
// `got` the CPU and the date at which it first runs again.
inline uringsim::sim::Thread& spawn_mover(uringsim::sim::Engine& e, uringsim::sim::TimeNs run_ns,
                                          uringsim::sim::TimeNs sleep_ns, Landing& got) {
  using namespace uringsim::sim;
  ThreadOptions unpinned;
  unpinned.pinned = false;
  return e.spawn(
      "mover", "app", 0,
      [run_ns, sleep_ns, &got] {
        current().compute(run_ns, intern("work"));
        current().sleep_ns(sleep_ns);
        current().compute(1, intern("work"));  // runs once it has a CPU
        got.cpu = current().cpu();
        got.at = now_ns();
      },
      unpinned);
}

}  // namespace sched_case
