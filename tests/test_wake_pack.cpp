// Wake-up packing (SchedSpec::wake_pack_util, sim/cpu_sched.cpp packs_on_waker) on the case that
// `uringsim calibrate` measures it with (host/calibrate_pack.cpp): a waker pinned to one CPU runs a
// duty cycle of 3 ms, busy for a share of it, and at the end of a busy part wakes an unpinned
// thread whose last CPU is CPU 0; the other CPU has nothing to do. Below the threshold the wakee
// lands on the waker's CPU, above it where upstream would put it (an idle CPU). The machine runs
// at 1 GHz with every primitive cost zero (tests/sched_helpers.hpp).
#include <catch2/catch.hpp>

#include "sched_helpers.hpp"

using namespace uringsim::sim;

namespace {

constexpr TimeNs kCycle = 3e6;

// The CPU the wakee runs on: the waker runs on waker_cpu (0: the wakee's own last CPU, 1: the
// other one), 100 cycles busy for `busy_share` of each (its CPU's load average settles there:
// about ten PELT half-lives), then wakes the wakee at the end of one more busy part.
int woken_on(int waker_cpu, double busy_share, double pack_util) {
  MachineSpec m = sched_case::two_cpus();
  m.sched.wake_pack_util = pack_util;
  Engine e(m, PrimitiveCosts{});
  int ran_on = -1;
  ThreadOptions unpinned;
  unpinned.pinned = false;
  Thread& wakee = e.spawn(
      "wakee", "app", 0,
      [&] {
        current().park();
        ran_on = current().cpu();
      },
      unpinned);
  e.spawn("waker", "app", waker_cpu, [&] {
    for (int i = 0; i < 100; ++i) {
      current().compute(busy_share * kCycle, intern("work"));
      current().sleep_ns((1 - busy_share) * kCycle);
    }
    current().compute(busy_share * kCycle, intern("work"));
    wake_up_process(wakee, Wake::Normal);
    current().sleep_ns((1 - busy_share) * kCycle);
  });
  e.run_until_ns(1e9);
  return ran_on;
}

}  // namespace

// One engine per process: each case is its own test.
TEST_CASE("wake packing: a waker's CPU busy half the time keeps the wakee though its own CPU is idle") {
  CHECK(woken_on(1, 0.5, 0.7) == 1);
}

TEST_CASE("wake packing: a waker's CPU busy 85 percent of the time lets the wakee go to its idle CPU") {
  CHECK(woken_on(1, 0.85, 0.7) == 0);
}

TEST_CASE(
    "wake packing: a waker busy half the time on the wakee's own CPU keeps it there beside an idle CPU") {
  CHECK(woken_on(0, 0.5, 0.7) == 0);
}

TEST_CASE(
    "wake packing: a waker busy 85 percent of the time on the wakee's own CPU sends it to the idle one") {
  CHECK(woken_on(0, 0.85, 0.7) == 1);
}

TEST_CASE("wake packing: the threshold is the busy share of the waker's CPU") {
  // Just below 0.7 (the next case is just above): the CPU's load average at the wake is the busy
  // share plus a ripple of about share x (1 - share) x 3 ms / 46 ms / 2 (PELT's time constant).
  CHECK(woken_on(1, 0.66, 0.7) == 1);
}

TEST_CASE("wake packing: just above the threshold the wakee is placed as upstream places it") {
  CHECK(woken_on(1, 0.71, 0.7) == 0);
}

TEST_CASE("wake packing: off (upstream) an idle previous CPU takes the wakee") {
  CHECK(woken_on(1, 0.5, 0) == 0);
}

TEST_CASE("wake packing: off (upstream) a wakee beside a busy waker goes to the idle CPU") {
  CHECK(woken_on(0, 0.5, 0) == 1);
}
