// The kernel's preemption model (sim::PreemptModel) on hand-built cases with known answers. CFS
// preempts a waking sleeper at once (tests/test_sched.cpp), so the date the sleeper runs at shows
// where the running thread could be preempted: at once (full, or user mode), at its return to user
// space, at cond_resched(), or at a mutex's might_sleep() (voluntary). 1 GHz, zero primitive costs.
#include <catch2/catch.hpp>

#include "sim/engine.hpp"
#include "sim/label.hpp"
#include "sim/lock.hpp"
#include "sim/thread.hpp"

using namespace uringsim::sim;

namespace {

constexpr TimeNs kMs = 1e6;

MachineSpec one_cpu(SchedPolicy policy, PreemptModel preempt) {
  MachineSpec m;
  m.cores = 1;
  m.ghz = 1.0;
  m.sched.policy = policy;
  m.sched.preempt = preempt;
  return m;
}

// A sleeper wakes at 0.2 ms on the CPU where `runner` runs; returns when the sleeper runs again.
template <class Runner>
TimeNs sleeper_runs_at(PreemptModel preempt, Runner runner, ThreadOptions runner_opts = {}) {
  Engine e(one_cpu(SchedPolicy::Cfs, preempt), PrimitiveCosts{});
  TimeNs woke = -1;
  e.spawn("sleeper", "app", 0, [&] {
    current().sleep_ns(0.2 * kMs);
    woke = now_ns();
  });
  e.spawn("runner", "app", 0, runner, runner_opts);
  e.run_until_ns(1e9);
  return woke;
}

// 5 ms in a system call, then 15 ms in user space; charged lazily, as models do.
void syscall_then_user() {
  Thread& self = current();
  {
    const Syscall sys;
    self.charge(5 * kMs, intern("kernel work"));
  }
  self.charge(15 * kMs, intern("user work"));
  self.flush();
}

}  // namespace

TEST_CASE("preempt: full preemption, a waking sleeper preempts a thread in a system call at once") {
  CHECK(sleeper_runs_at(PreemptModel::Full, syscall_then_user) == Approx(0.2 * kMs));
}

TEST_CASE("preempt: none, a waking sleeper waits for the system call's return to user space") {
  CHECK(sleeper_runs_at(PreemptModel::None, syscall_then_user) == Approx(5 * kMs));
}

TEST_CASE("preempt: none, a thread in user space is preempted at once") {
  CHECK(sleeper_runs_at(PreemptModel::None, [] { current().compute(20 * kMs, intern("user work")); }) ==
        Approx(0.2 * kMs));
}

namespace {

// A kernel thread: 3 ms of work, a cond_resched() if `point`, then 17 ms.
TimeNs kthread_sleeper_runs_at(bool point) {
  ThreadOptions kthread;
  kthread.kernel = true;
  auto runner = [point] {
    Thread& self = current();
    self.charge(3 * kMs, intern("item"));
    if (point) self.cond_resched();
    self.charge(17 * kMs, intern("item"));
    self.flush();
  };
  return sleeper_runs_at(PreemptModel::None, runner, kthread);
}

// In a system call: 2 ms of work, a mutex taken and released, then 8 ms.
void syscall_with_mutex() {
  Thread& self = current();
  Mutex m("m");
  const Syscall sys;
  self.charge(2 * kMs, intern("kernel work"));
  m.lock(intern("site"));
  m.unlock();
  self.charge(8 * kMs, intern("kernel work"));
  self.flush();
}

}  // namespace

TEST_CASE("preempt: none, a kernel thread is preempted at its cond_resched()") {
  CHECK(kthread_sleeper_runs_at(true) == Approx(3 * kMs));
}

TEST_CASE("preempt: none, a kernel thread without a cond_resched() keeps its CPU to the end") {
  CHECK(kthread_sleeper_runs_at(false) == Approx(20 * kMs));  // and the sleeper's wake is not lost
}

TEST_CASE("preempt: voluntary, taking a mutex in a system call is a preemption point") {
  CHECK(sleeper_runs_at(PreemptModel::Voluntary, syscall_with_mutex) == Approx(2 * kMs));
}

TEST_CASE("preempt: none, taking a mutex in a system call is no preemption point") {
  CHECK(sleeper_runs_at(PreemptModel::None, syscall_with_mutex) == Approx(10 * kMs));
}

struct TwoKthreads {
  TimeNs first_end, last_end;
  std::uint64_t preemptions, switches;
};

// Two kernel threads of 10 ms of work each on one CPU, EEVDF, HZ 250, no preemption point.
TwoKthreads two_kthreads(PreemptModel p) {
  Engine e(one_cpu(SchedPolicy::Eevdf, p), PrimitiveCosts{});
  ThreadOptions kthread;
  kthread.kernel = true;
  TimeNs end[2] = {-1, -1};
  for (int i = 0; i < 2; ++i)
    e.spawn(
        i == 0 ? "a" : "b", "kthread", 0,
        [&end, i] {
          current().compute(10 * kMs, intern("work"));
          end[i] = now_ns();
        },
        kthread);
  e.run_until_ns(1e9);
  return {std::min(end[0], end[1]), std::max(end[0], end[1]), e.scheduler().preemptions(),
          e.scheduler().context_switches()};
}

TEST_CASE("preempt: full preemption lets two kernel threads on one CPU alternate at ticks") {
  const TwoKthreads r = two_kthreads(PreemptModel::Full);
  CHECK(r.first_end < 19 * kMs);
  CHECK(r.last_end == Approx(20 * kMs));
  CHECK(r.preemptions > 0);
}

TEST_CASE("preempt: none, the tick does not preempt kernel threads that never call cond_resched") {
  const TwoKthreads r = two_kthreads(PreemptModel::None);
  CHECK(r.first_end == Approx(10 * kMs));
  CHECK(r.last_end == Approx(20 * kMs));
  CHECK(r.preemptions == 0);
  CHECK(r.switches == 1);
}
