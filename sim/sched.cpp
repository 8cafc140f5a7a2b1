#include "sim/sched.hpp"

#include <algorithm>

#include "sim/engine.hpp"

namespace uringsim::sim {

Cycles charge_wake(Thread& target, Wake how) {
  Thread& self = current();
  Engine& e = Engine::get();
  const auto& c = e.costs();
  if (!self.scheduled() || !target.scheduled()) {  // no scheduler decides: the costlier form
    self.charge(c.wake_cycles, sym::wake());
    return 0;
  }
  auto& s = e.scheduler();
  const int cpu = s.wake_target(target, self, how, e.clock_ns());
  if (cpu == self.cpu()) {  // a thread woken onto the waker's own CPU needs no IPI
    self.charge(c.wake_local_cycles, sym::wake());
    return 0;
  }
  // Judged at the engine's date: the waker's pending work runs first, promised unpreempted, so
  // the target CPU's state is the one the wake meets unless another thread acts in between.
  if (!s.wake_needs_ipi(target, cpu, e.clock_ns())) {
    self.charge(c.wake_remote_cycles, sym::wake());
    return 0;
  }
  self.count(sym::wake_ipi());
  if (s.idle(cpu)) {
    self.charge(c.wake_cycles, sym::wake());
    return 0;
  }
  // A preemption: the wakee is queued under the remote runqueue's lock, then resched_curr sends
  // the IPI, which lands while its sender is still sending it (ipi_delivery_ns).
  const Cycles enqueue = std::min(c.wake_remote_cycles, c.wake_preempt_cycles);
  self.charge(enqueue, sym::wake());
  return c.wake_preempt_cycles - enqueue;
}

void wake_up_process(Thread& target, Wake how) {
  Thread& self = current();
  const Cycles ipi_send = charge_wake(target, how);
  // A running waker's pending work has a known end if nothing preempts it: the wake takes effect
  // then, without simulating that work now; the work is promised to run unpreempted.
  if (self.scheduled()) {
    const TimeNs t = self.local_now_ns();
    self.promise_until(t);
    target.unpark_at(t, how);
  } else {
    target.unpark(how);
  }
  if (ipi_send > 0) self.charge(ipi_send, sym::wake());
}

bool kick_process(Thread& target, Cycles send_cycles, Label symbol) {
  Thread& self = current();
  Engine& e = Engine::get();
  const bool receiver = target.scheduled();  // else no CPU of the machine: the IPI, no receiver
  if (receiver) {
    self.reach_shared();  // the target's CPU as it is at the sender's date
    if (!target.sched().on_cpu || target.cpu() == self.cpu()) return false;
    if (e.scheduler().ipi_pending_at(target.cpu(), self.local_now_ns())) {
      static const Label merged = intern("kick_process (IPI already pending)");
      self.count(merged);
      return false;
    }
  }
  self.count(symbol);
  const Cycles c = e.costs().ipi_receive_cycles;
  if (!receiver || c <= 0) {
    // No handler time to place (the default table): no extra synchronisation; the IPI counts as
    // pending while its sender sends it.
    self.charge(send_cycles, symbol);
    if (receiver) e.scheduler().ipi_pending(target.cpu(), self.local_now_ns());
    return true;
  }
  // Delivered ipi_delivery_ns into the sender's part (on a VM both ends' exits overlap), to
  // whatever runs there then; the sender's part goes on after it. Until its handler has run, a
  // second kick merges into it.
  const Cycles before = std::min(send_cycles, e.ns_to_cycles(e.costs().ipi_delivery_ns));
  self.charge(before, symbol);
  self.reach_shared();
  e.scheduler().land_reschedule_ipi(target.cpu(), self.local_now_ns());
  self.charge(send_cycles - before, symbol);
  return true;
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
