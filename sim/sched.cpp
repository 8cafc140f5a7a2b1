#include "sim/sched.hpp"

#include "sim/engine.hpp"

namespace uringsim::sim {

Cycles wake_cost(const Thread& waker, Thread& target) {
  const Engine& e = Engine::get();
  // A thread woken onto the waker's own CPU needs no IPI.
  if (waker.scheduled() && target.scheduled() &&
      e.scheduler().wake_target(target, waker.cpu()) == waker.cpu())
    return e.costs().wake_local_cycles;
  return e.costs().wake_cycles;
}

void wake_up_process(Thread& target) {
  Thread& self = current();
  self.charge(wake_cost(self, target), sym::wake());
  // A running waker's pending work has a known end if nothing preempts it: the wake takes effect
  // then, without simulating that work now; the work is promised to run unpreempted.
  if (self.scheduled()) {
    const TimeNs t = self.local_now_ns();
    self.promise_until(t);
    target.unpark_at(t);
  } else {
    target.unpark();
  }
}

void switch_in_after_sleep() {
  Thread& self = current();
  // A scheduled thread paid its wake-up when the scheduler dispatched it (sim/cpu_sched.hpp).
  if (self.scheduled()) return;
  Engine& e = Engine::get();
  const auto& c = e.costs();
  const TimeNs late = self.wake_not_before_ns() - e.clock_ns();  // the wake took effect after the park ended
  // The scheduling delay of a wake-up, not a sleep of its own: not checked (the sleep was).
  self.off_cpu_ns(c.wakeup_latency_ns + (late > 0 ? late : 0));
  self.charge(c.context_switch_cycles, sym::schedule());
  self.count(sym::schedule());
}

void sleep_until_woken(Label path) {
  current().park(path);
  switch_in_after_sleep();
}

}  // namespace uringsim::sim
