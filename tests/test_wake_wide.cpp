// wake_wide (select_task_rq_fair, sim/cpu_sched.cpp) on a hand-built case with a known answer: a
// sync wake-up from a waker that runs alone on its CPU pulls the wakee there (wake_affine_idle),
// unless waker and wakee are in a one-to-many relation: each wakes several threads in turn
// (record_wakee's flips), one at least twice (the cache domain's 2 CPUs) as often as the other.
// Then the wakee stays queued on its previous CPU. At 1 GHz with zero primitive costs, so the
// dates follow from the scheduler's rules alone.
#include <catch2/catch.hpp>

#include "sched_helpers.hpp"
#include "sim/sched.hpp"

using namespace uringsim::sim;

namespace {

using sched_case::kMs;
using sched_case::Landing;

// CPU 1: the wakee A runs 0-1.7 ms, having woken P, Q, P, Q (unpinned threads that only park: 4
// flips), and parks; a kernel thread (PREEMPT_NONE: no preemption point) sleeps to 1.8 ms and then
// keeps CPU 1 to 30 ms. CPU 0: the waker W (a kernel thread, pinned) sleeps to 1 ms; if
// `flipping`, wakes P and Q in turn 10 times, 10 us apart (10 flips); at 2 ms sync-wakes A (one
// more), and sleeps at 2.1 ms. Where and when does A run again?
Landing wakee(bool flipping) {
  MachineSpec m = sched_case::two_cpus();
  Engine e(m, PrimitiveCosts{});
  ThreadOptions unpinned;
  unpinned.pinned = false;
  auto parker = [] {
    for (;;) current().park();
  };
  Thread& p = e.spawn("P", "app", 0, parker, unpinned);
  Thread& q = e.spawn("Q", "app", 0, parker, unpinned);
  sched_case::spawn_hog(e, "hog1", 1, 1.8 * kMs, 28.2 * kMs);  // runs first, to sleep
  Landing got;
  Thread& a = e.spawn(
      "A", "app", 1,
      [&] {
        for (Thread* t : {&p, &q, &p, &q}) wake_up_process(*t);
        current().compute(1.7 * kMs, intern("work"));
        current().park();
        current().compute(1, intern("work"));  // runs once it has a CPU
        got.cpu = current().cpu();
        got.at = now_ns();
      },
      unpinned);
  ThreadOptions kthread;
  kthread.kernel = true;
  e.spawn(
      "W", "kthread", 0,
      [&, flipping] {
        current().sleep_ns(1 * kMs);
        for (int i = 0; flipping && i < 10; ++i) {
          wake_up_process(i % 2 ? q : p);
          current().sleep_ns(0.01 * kMs);  // the woken thread runs and parks again
        }
        current().sleep_ns(2 * kMs - now_ns());
        wake_up_process(a, Wake::Sync);
        current().compute(0.1 * kMs, intern("work"));
        current().sleep_ns(30 * kMs);
      },
      kthread);
  e.run_until_ns(40 * kMs);
  return got;
}

}  // namespace

TEST_CASE("wake_wide: a sync wake-up pulls the wakee to its waker's CPU when the two wake few others") {
  // W flipped once (A), A 4 times: not wide. A queues behind W on CPU 0 and runs when W sleeps.
  const Landing got = wakee(false);
  CHECK(got.cpu == 0);
  CHECK(got.at == Approx(2.1 * kMs));
}

TEST_CASE("wake_wide: not when the waker flips at least twice as often as a wakee that flips too") {
  // W flipped 11 times, A 4: wide (11 >= 2 x 4). A queues on CPU 1 behind the kernel thread; CPU 0, idle from
  // 2.1 ms, does not pull it while it is cache-hot (it last ran at 1.7 ms, migration cost 0.5 ms);
  // CPU 1's tick at 4 ms kicks CPU 0 to take it.
  const Landing got = wakee(true);
  CHECK(got.cpu == 0);
  CHECK(got.at == Approx(4 * kMs));
}
