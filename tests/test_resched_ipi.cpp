// A wake-up that preempts another CPU's thread, on hand-built cases with known answers: the
// preemption waits for the reschedule IPI to land (ipi_delivery_ns), and the kernel's CPU
// accounting (sum_exec_runtime, cpu.accounted_by_thread) charges the time between the wake-up
// and the switch to the woken thread, since the switch skips its clock update, in vruntime too
// (rq_clock_skip_update). 1 GHz machine (a cycle is a ns), CFS (a waking sleeper preempts at
// once), every other cost zero.
#include <catch2/catch.hpp>

#include "sim/engine.hpp"
#include "sim/label.hpp"
#include "sim/sched.hpp"
#include "sim/thread.hpp"

using namespace uringsim::sim;

namespace {

constexpr TimeNs kUs = 1e3, kMs = 1e6;
constexpr TimeNs kPiece = 10 * kUs;  // the runner's work, counted as charged: to a piece

struct Outcome {
  TimeNs woken_runs = -1;                  // when the woken thread got its CPU
  TimeNs runner_cpu = 0, runner_acct = 0;  // in the window: ran, and accounted by the kernel
  TimeNs woken_cpu = 0, woken_acct = 0;
  double woken_vruntime_gain = -1;  // from when it got its CPU to its exit (CFS, nice 0: ns)
};

// CPU 0 runs `runner` (user-mode work, for ever); `woken`, pinned there, sleeps until a thread on CPU 1
// (or, remote = false, a timer of its own) wakes it at 1 ms; it then works 100 us and exits.
// Window 0.5 - 2 ms.
Outcome run(TimeNs ipi_delivery_ns, bool remote) {
  MachineSpec m;
  m.cores = 2;
  m.ghz = 1.0;
  m.sched.policy = SchedPolicy::Cfs;
  PrimitiveCosts c;
  c.ipi_delivery_ns = ipi_delivery_ns;
  Engine e(m, c);
  e.set_window(0.5 * kMs, 2 * kMs);
  Outcome o;
  Thread& woken = e.spawn("woken", "app", 0, [&] {
    if (remote)
      current().park();
    else
      current().sleep_ns(1 * kMs);
    o.woken_runs = now_ns();
    o.woken_vruntime_gain = -current().sched().vruntime;
    current().compute(100 * kUs, intern("work"));
  });
  // In 10 us pieces: a thread's CPU time is counted as its work is charged.
  Thread& runner = e.spawn("runner", "app", 0, [&] {
    for (;;) current().compute(10 * kUs, intern("work"));
  });
  if (remote)
    e.spawn("waker", "app", 1, [&] {
      current().sleep_ns(1 * kMs);
      wake_up_process(woken);
    });
  e.run_until_ns(2 * kMs);
  o.runner_cpu = runner.window_cycles();
  o.runner_acct = e.scheduler().accounted_ns(runner);
  o.woken_cpu = woken.window_cycles();
  o.woken_acct = e.scheduler().accounted_ns(woken);
  o.woken_vruntime_gain += woken.sched().vruntime;  // its exit's update_curr
  return o;
}

}  // namespace

TEST_CASE(
    "resched IPI: a wake-up from another CPU preempts when its IPI lands and is accounted from the wake-up") {
  const Outcome o = run(20 * kUs, true);
  CHECK(o.woken_runs == Approx(1 * kMs + 20 * kUs));
  // The runner ran 0.5 - 1.02 ms and 1.12 - 2 ms; the kernel charges it only up to the wake-up.
  CHECK(o.runner_cpu == Approx(1.40 * kMs).margin(kPiece));
  CHECK(o.runner_acct == Approx(1.38 * kMs));
  CHECK(o.woken_cpu == Approx(100 * kUs));
  CHECK(o.woken_acct == Approx(120 * kUs));
  // The same clock drives update_curr's vruntime: the woken thread's grows by what it is
  // accounted, the 20 us it waited included (set_next_entity's exec_start is the stale clock).
  CHECK(o.woken_vruntime_gain == Approx(120 * kUs));
}

TEST_CASE("resched IPI: without an IPI delay the preemption is at once and the accounting exact") {
  const Outcome o = run(0, true);
  CHECK(o.woken_runs == Approx(1 * kMs));
  CHECK(o.runner_acct == Approx(1.40 * kMs));
  CHECK(o.runner_cpu == Approx(o.runner_acct).margin(kPiece));
  CHECK(o.woken_acct == Approx(100 * kUs));
  CHECK(o.woken_cpu == Approx(o.woken_acct));
  CHECK(o.woken_vruntime_gain == Approx(100 * kUs));
}

TEST_CASE("resched IPI: a thread woken by its own CPU's timer preempts at once, whatever the IPI delay") {
  const Outcome o = run(20 * kUs, false);
  CHECK(o.woken_runs == Approx(1 * kMs));
  CHECK(o.runner_acct == Approx(1.40 * kMs));
  CHECK(o.woken_acct == Approx(100 * kUs));
}
