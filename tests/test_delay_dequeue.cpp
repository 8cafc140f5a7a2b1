// EEVDF's DELAY_DEQUEUE (6.12, in this host's 6.18) on hand-built cases: a thread that goes to sleep
// while not eligible stays in its run queue, still counted, and is dropped when picked or when
// its CPU goes idle; woken while delayed it is runnable again where it is if it cannot move,
// and takes the full wake-up path (to an idle CPU) if it can; woken once it has paid its debt it
// is re-placed at V of the others, the debt and V read with the running thread's vruntime as its
// last update left it. 1 GHz, zero primitive costs.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>

#include "sim/engine.hpp"
#include "sim/label.hpp"
#include "sim/thread.hpp"

using namespace uringsim::sim;

namespace {

constexpr TimeNs kMs = 1e6;

MachineSpec eevdf(int cores) {
  MachineSpec m;
  m.cores = cores;
  m.ghz = 1.0;
  m.sched.policy = SchedPolicy::Eevdf;
  return m;
}

// A helper outside the machine (not scheduled, not accounted) that looks at the queues.
void spawn_look(Engine& e, std::function<void()> body) {
  ThreadOptions helper;
  helper.accounted = false;
  helper.daemon = true;
  e.spawn("look", "helper", 0, std::move(body), helper);
}

struct Seen {
  std::string at_sleep, after_wake;
  int a_cpu_after_wake = -1;
  TimeNs a_done = -1;
};

// A and B share CPU 0 a tick (4 ms) at a time; A sleeps after 6 ms of work, having run more than
// B, so it is not eligible. CPU 1 is busy until 10.2 ms (else its idle balance would take A from
// CPU 0 before). A helper outside the machine reads the queues while A sleeps and after it woke.
Seen run(bool a_pinned) {
  Engine e(eevdf(2), PrimitiveCosts{});
  Seen s;
  ThreadOptions a_opts;
  a_opts.pinned = a_pinned;
  e.spawn(
      "a", "app", 0,
      [&] {
        Thread& self = current();
        self.compute(6 * kMs, intern("work"));
        self.sleep_ns(1 * kMs);
        s.a_cpu_after_wake = self.cpu();
        self.compute(1 * kMs, intern("work"));
        s.a_done = now_ns();
      },
      a_opts);
  e.spawn("b", "app", 0, [&] { current().compute(20 * kMs, intern("work")); });
  e.spawn("c", "app", 1, [&] { current().compute(10.2 * kMs, intern("work")); });
  spawn_look(e, [&] {
    Thread& self = current();
    self.sleep_ns(10.5 * kMs);
    s.at_sleep = e.scheduler().dump();
    self.sleep_ns(1 * kMs);
    s.after_wake = e.scheduler().dump();
  });
  e.run_until_ns(1e9);
  return s;
}

struct Requeue {
  TimeNs slept = -1, ran_again = -1;
  double behind = -1;  // the runner's vruntime less the sleeper's when the sleeper runs again, ns
};

// A sleeper and a runner share CPU 0 (a 10 ms slice): the sleeper runs `run`, then sleeps `sleep`
// while not eligible (delayed), and is woken by its timer while the runner runs.
Requeue sleeper_and_runner(int hz, TimeNs run, TimeNs sleep) {
  MachineSpec m = eevdf(1);
  m.sched.hz = hz;
  m.sched.base_slice_ns = 10 * kMs;
  Engine e(m, PrimitiveCosts{});
  Requeue r;
  Thread* runner = nullptr;
  e.spawn("sleeper", "app", 0, [&] {
    current().compute(run, intern("work"));
    r.slept = now_ns();
    current().sleep_ns(sleep);
    r.ran_again = now_ns();
    r.behind = runner->sched().vruntime - current().sched().vruntime;
  });
  runner = &e.spawn("runner", "app", 0, [&] { current().compute(50 * kMs, intern("work")); });
  e.run_until_ns(1e9);
  return r;
}

}  // namespace

TEST_CASE(
    "delay dequeue: a thread that sleeps not eligible stays in its queue, then runs there when woken "
    "(pinned)") {
  const Seen s = run(true);
  INFO(s.at_sleep);
  CHECK(s.at_sleep.find("delayed=a") != std::string::npos);
  INFO(s.after_wake);
  CHECK(s.after_wake.find("delayed=") == std::string::npos);
  CHECK(s.a_cpu_after_wake == 0);
  // Woken behind B with its debt, it waits for B's slice rather than preempting it at once.
  CHECK(s.a_done > 12 * kMs);
}

TEST_CASE("delay dequeue: an unpinned delayed thread woken while its CPU is busy moves to the idle CPU") {
  const Seen s = run(false);
  INFO(s.at_sleep);
  CHECK(s.at_sleep.find("delayed=a") != std::string::npos);
  CHECK(s.a_cpu_after_wake == 1);
  CHECK(s.a_done == Approx(12 * kMs).margin(0.1 * kMs));
}

TEST_CASE(
    "delay dequeue: a thread woken once its debt is paid is re-placed at the runner's vruntime as last "
    "updated") {
  // A 10 ms slice and HZ 1000. The sleeper runs 0-2 ms and sleeps while not eligible (its 2 ms
  // against the runner's 0): DELAY_DEQUEUE keeps it queued. The runner, picked at 2 ms, was last
  // updated by the 5 ms tick when the sleeper's timer wakes it at 5.5 ms: against that vruntime
  // the sleeper's lag is +0.5 ms, so requeue_delayed_entity takes it out of the tree and places it
  // with lag 0 at V of the others, the runner's vruntime of 5 ms (not at V counting its own old
  // vruntime, 1 ms earlier). check_preempt_wakeup_fair's update then adds the runner's last 0.5 ms:
  // the runner is no longer eligible and the sleeper runs at once, 0.5 ms behind it.
  const Requeue r = sleeper_and_runner(1000, 2 * kMs, 3.5 * kMs);
  CHECK(r.slept == Approx(2 * kMs));
  CHECK(r.ran_again == Approx(5.5 * kMs));
  CHECK(r.behind == Approx(0.5 * kMs));
}

TEST_CASE(
    "delay dequeue: a CPU left with delayed threads drops them in pick order, each leaving with no lag") {
  // X runs 1 ms and sleeps ahead of the average (delayed); Y then runs 1.5 ms and sleeps ahead too
  // (delayed). The CPU has only delayed threads: pick_next_entity picks X first (eligible), which
  // leaves with its positive lag cut to 0 (DELAY_ZERO), then Y alone, at the average: both 0.
  // Dropped in the order they were delayed instead, Y would leave first with a negative lag.
  Engine e(eevdf(1), PrimitiveCosts{});
  Thread& x = e.spawn("x", "x", 0, [&] {
    current().compute(1 * kMs, intern("work"));
    current().park();
  });
  Thread& y = e.spawn("y", "y", 0, [&] {
    current().compute(1.5 * kMs, intern("work"));
    current().park();
  });
  bool x_delayed_while_y_runs = false;
  spawn_look(e, [&] {
    current().sleep_ns(2 * kMs);  // Y runs from 1 to 2.5 ms
    x_delayed_while_y_runs = x.sched().delayed && !y.sched().delayed;
  });
  e.run_until_ns(10 * kMs);
  CHECK(x_delayed_while_y_runs);
  CHECK_FALSE(x.sched().delayed);
  CHECK_FALSE(y.sched().delayed);
  CHECK(x.sched().vlag == Approx(0).margin(1e-3));
  CHECK(y.sched().vlag == Approx(0).margin(1e-3));
}

TEST_CASE(
    "delay dequeue: a delayed thread's lag is tested against the runner's vruntime as its last update "
    "left it") {
  // requeue_delayed_entity runs before check_preempt_wakeup_fair's update_curr. At 3.5 ms the
  // runner's vruntime is still the one it was picked with (1 ms behind the sleeper's), so the
  // sleeper's lag is -0.5 ms: no DELAY_ZERO re-placement, it keeps its vruntime. The update then
  // adds the runner's 2.5 ms: the sleeper's lag is +0.75 ms, the runner is not eligible and loses
  // its CPU at once. (Tested after the update, the lag would be positive, the sleeper re-placed at
  // the runner's vruntime, and the runner would keep its protected slice to the 8 ms tick.)
  // HZ 250: no tick between the runner's pick at 1 ms and the wake-up (the next at 4 ms).
  CHECK(sleeper_and_runner(250, 1 * kMs, 2.5 * kMs).ran_again == Approx(3.5 * kMs));
}
