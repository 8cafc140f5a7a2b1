// SIS_UTIL (sim/cpu_sched.cpp, 6.0+) on a hand-built case with a known answer: a woken thread
// whose previous CPU is busy scans for an idle CPU only as far as the last periodic balance
// allowed from the two CPUs' utilization. Busy, both CPUs' PELT average reaches 1 - e^(-t / 47.3 ms);
// above 61 % each on 2 CPUs the scan stops and the thread queues on its previous CPU, where the
// busy CPU's next tick kicks the idle one to take it. At 1 GHz with zero primitive costs, so the
// dates follow from those rules alone.
#include <catch2/catch.hpp>

#include "sched_helpers.hpp"

using namespace uringsim::sim;

namespace {

using sched_case::kMs;
using sched_case::Landing;

// CPU 0: a kernel thread busy from 0.2 ms to 200 ms (PREEMPT_NONE, no preemption point). CPU 1:
// another, busy until 100 ms and again from 110 ms if `both_busy`, else idle throughout. An
// unpinned thread runs 0.1 ms on CPU 0 and sleeps until 100.5 ms: CPU 0 is busy, CPU 1 idle.
// Where and when does it run?
Landing mover(bool sis_util, bool both_busy) {
  MachineSpec m = sched_case::two_cpus();  // periodic balance on a busy CPU every 2 ms x 16
  m.sched.sis_util = sis_util;
  Engine e(m, PrimitiveCosts{});
  sched_case::spawn_hog(e, "hog0", 0, 0.2 * kMs, 199.8 * kMs);  // the mover runs first
  ThreadOptions kthread;
  kthread.kernel = true;
  if (both_busy)
    e.spawn(
        "hog1", "kthread", 1,
        [&] {
          current().compute(100 * kMs, intern("work"));
          current().sleep_ns(10 * kMs);
          current().compute(50 * kMs, intern("work"));
        },
        kthread);
  Landing got;
  sched_case::spawn_mover(e, 0.1 * kMs, 100.4 * kMs, got);
  e.run_until_ns(300 * kMs);
  return got;
}

}  // namespace

TEST_CASE("sis_util: with both CPUs busy a wake-up does not scan, the busy CPU's tick hands it over") {
  // The balance at 96 ms saw both CPUs 87 % busy: no scan. The mover queues on CPU 0 behind the
  // hog at 100.5 ms; CPU 0's tick at 104 ms kicks idle CPU 1, which takes it (it last ran at
  // 0.1 ms: cold).
  const Landing got = mover(true, true);
  CHECK(got.cpu == 1);
  CHECK(got.at == Approx(104 * kMs));
}

TEST_CASE("sis_util: off (before 6.0) the same wake-up finds the idle CPU at once") {
  const Landing got = mover(false, true);
  CHECK(got.cpu == 1);
  CHECK(got.at == Approx(100.5 * kMs));
}

TEST_CASE("sis_util: with one CPU busy and the other idle the domain is 43 % busy and a wake-up scans") {
  // (0.87 / 2 x 1.17)^2 = 0.26: nr_idle_scan = floor(2 x 0.74) = 1, the other CPU.
  const Landing got = mover(true, false);
  CHECK(got.cpu == 1);
  CHECK(got.at == Approx(100.5 * kMs));
}
