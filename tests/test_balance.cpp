// Load balancing between CPUs (sim/cpu_sched.cpp) on a hand-built case with a known answer: a CPU
// that goes idle leaves a cache-hot thread where it waits (task_hot: it ran less than
// sysctl_sched_migration_cost ago) and pulls a cold one; a busy CPU's ticks then kick the idle
// CPU, whose balance takes a hot thread only after failing more than cache_nice_tries (1) times.
// At 1 GHz with zero primitive costs, so the dates follow from those rules alone.
#include <catch2/catch.hpp>

#include "sched_helpers.hpp"

using namespace uringsim::sim;

namespace {

using sched_case::kMs;

struct Landing : sched_case::Landing {
  std::uint64_t migrations = 0;   // the scheduler's count
  std::uint64_t mover_moves = 0;  // the mover's own (se.nr_migrations)
  TimeNs mover_waited = -1;       // the mover's time runnable but not running (schedstat run_delay)
};

// CPU 0: a kernel thread that keeps its CPU for 50 ms (PREEMPT_NONE, no preemption point). CPU 1:
// another until 2 ms. An unpinned thread runs 0.1 ms on CPU 0, sleeps, and wakes at 1 ms while
// both CPUs are busy: it waits on CPU 0. Where and when does it run next?
Landing mover_with_migration_cost(TimeNs migration_cost_ns) {
  MachineSpec m = sched_case::two_cpus();
  m.sched.migration_cost_ns = migration_cost_ns;
  Engine e(m, PrimitiveCosts{});
  sched_case::spawn_hog(e, "hog", 0, 0.2 * kMs, 50 * kMs);  // the mover runs first
  sched_case::spawn_hog(e, "busy1", 1, 0, 2 * kMs);
  Landing got;
  Thread& mover = sched_case::spawn_mover(e, 0.1 * kMs, 0.9 * kMs, got);
  e.run_until_ns(100 * kMs);
  got.migrations = e.scheduler().migrations();
  got.mover_moves = mover.window_counts_by_symbol().at(sym::migrate());
  got.mover_waited = mover.window_run_delay_ns();
  return got;
}

}  // namespace

TEST_CASE(
    "balance: a CPU going idle pulls a waiting thread that last ran longer ago than the migration cost") {
  // It last ran at 0.1 ms; CPU 1 goes idle at 2 ms, 1.9 ms later: cold at the kernel's 0.5 ms.
  const Landing cold = mover_with_migration_cost(0.5 * kMs);
  CHECK(cold.cpu == 1);
  CHECK(cold.at == Approx(2 * kMs));
  CHECK(cold.migrations == 1);
  CHECK(cold.mover_moves == 1);
  CHECK(cold.mover_waited == Approx(1 * kMs));  // woken at 1 ms, ran at 2 ms; it never waited before
}

TEST_CASE(
    "balance: a cache-hot waiting thread stays, the busy CPU's ticks move it after two failed balances") {
  // With a migration cost of 20 ms it is still hot at 12 ms. It stays queued behind the hog when
  // CPU 1 goes idle at 2 ms; the hog's ticks at 4 and 8 ms kick CPU 1, whose balance fails
  // twice; at the third, 12 ms, it takes the hot thread.
  const Landing hot = mover_with_migration_cost(20 * kMs);
  CHECK(hot.cpu == 1);
  CHECK(hot.at == Approx(12 * kMs));
  CHECK(hot.migrations == 1);
  CHECK(hot.mover_moves == 1);
  CHECK(hot.mover_waited == Approx(11 * kMs));  // its wait goes on across the move
}
