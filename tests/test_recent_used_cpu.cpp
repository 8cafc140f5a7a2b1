// recent_used_cpu (select_idle_sibling, sim/cpu_sched.cpp) on a hand-built case with a known
// answer: a woken thread whose previous CPU is busy goes back to the CPU it used before that one
// if it is idle, even when SIS_UTIL allows no scan for an idle CPU. At 1 GHz with zero primitive
// costs, so the dates follow from the scheduler's rules alone.
#include <catch2/catch.hpp>

#include "sched_helpers.hpp"

using namespace uringsim::sim;

namespace {

using sched_case::kMs;
using sched_case::Landing;

struct Landings {
  Landing first, second;
};

// CPU 0: a kernel thread busy from 0.2 ms to 120 ms. CPU 1: another, busy until 100 ms, asleep
// until 110 ms, then busy to 260 ms. Both CPUs are busy enough that SIS_UTIL allows no scan
// (tests/test_sis_util.cpp). An unpinned thread starts on CPU 0, runs 0.1 ms and sleeps until
// 100.5 ms: its CPU is busy, the scan is off, so it queues there until CPU 0's tick at 104 ms
// kicks idle CPU 1 to take it (the first landing). It then sleeps until `second_wake`.
Landings mover(TimeNs second_wake) {
  MachineSpec m = sched_case::two_cpus();
  m.sched.sis_util = true;
  Engine e(m, PrimitiveCosts{});
  sched_case::spawn_hog(e, "hog0", 0, 0.2 * kMs, 119.8 * kMs);
  ThreadOptions kthread;
  kthread.kernel = true;
  e.spawn(
      "hog1", "kthread", 1,
      [] {
        current().compute(100 * kMs, intern("work"));
        current().sleep_ns(10 * kMs);
        current().compute(150 * kMs, intern("work"));
      },
      kthread);
  Landings got;
  ThreadOptions unpinned;
  unpinned.pinned = false;
  e.spawn(
      "mover", "app", 0,
      [&got, second_wake] {
        auto land = [](Landing& l) {
          current().compute(1, intern("work"));  // runs once it has a CPU
          l.cpu = current().cpu();
          l.at = now_ns();
        };
        current().compute(0.1 * kMs, intern("work"));
        current().sleep_ns(100.4 * kMs);
        land(got.first);
        current().sleep_ns(second_wake - now_ns());
        land(got.second);
      },
      unpinned);
  e.run_until_ns(300 * kMs);
  return got;
}

}  // namespace

TEST_CASE("recent_used_cpu: a thread balancing moved goes back to its idle previous-but-one CPU at once") {
  // At 130 ms CPU 1 (its previous CPU, the target) is busy and the scan is off; CPU 0, where it
  // ran before, is idle since 120 ms: it runs there at its wake-up (without recent_used_cpu it
  // waited for CPU 0's periodic idle balance at 132 ms).
  const Landings got = mover(130 * kMs);
  CHECK(got.first.cpu == 1);
  CHECK(got.first.at == Approx(104 * kMs));
  CHECK(got.second.cpu == 0);
  CHECK(got.second.at == Approx(130 * kMs));
}

TEST_CASE("recent_used_cpu: not when that CPU is busy too, then the thread queues on its previous CPU") {
  // At 115 ms CPU 0 is still busy (to 120 ms): no idle CPU, the thread waits behind CPU 1's hog
  // until CPU 0, going idle at 120 ms, pulls it (newidle balance).
  const Landings got = mover(115 * kMs);
  CHECK(got.first.cpu == 1);
  CHECK(got.second.cpu == 0);
  CHECK(got.second.at == Approx(120 * kMs));
}
