// The CPU scheduler (sim/cpu_sched.hpp) on hand-built cases with known answers: time slices
// between equal threads, shares by nice weight, wake-up preemption by era (CFS vs EEVDF),
// placement of an unpinned thread on an idle CPU, the idle-exit latency, and timeouts counted in
// jiffies. The machine runs at 1 GHz (one cycle = 1 ns) and, unless a test says otherwise, every
// primitive cost is zero, so the times follow from the scheduler's rules alone.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "config/scenario.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/sqpoll.hpp"
#include "sim/engine.hpp"
#include "sim/label.hpp"
#include "sim/sched.hpp"
#include "sim/thread.hpp"

using namespace uringsim::sim;

namespace {

MachineSpec machine(int cores, SchedPolicy policy, double hz = 250) {
  MachineSpec m;
  m.cores = cores;
  m.ghz = 1.0;
  m.sched.policy = policy;
  m.sched.hz = hz;
  return m;
}

constexpr TimeNs kMs = 1e6;

}  // namespace

TEST_CASE(
    "sched: two equal CPU-bound threads on one CPU share it in slices of a tick, with every switch counted") {
  Engine e(machine(1, SchedPolicy::Eevdf), PrimitiveCosts{});
  TimeNs end_a = -1, end_b = -1;
  e.spawn("a", "app", 0, [&] {
    current().compute(100 * kMs, intern("work"));
    end_a = now_ns();
  });
  e.spawn("b", "app", 0, [&] {
    current().compute(100 * kMs, intern("work"));
    end_b = now_ns();
  });
  e.run_until_ns(1e9);
  // EEVDF on one CPU: a 0.75 ms slice, checked at each 4 ms tick (HZ 250), so they alternate a
  // tick at a time; 200 ms of work end at 200 ms, the first thread one tick earlier.
  CHECK(std::max(end_a, end_b) == Approx(200 * kMs));
  CHECK(std::min(end_a, end_b) == Approx(196 * kMs));
  // 50 stretches of a tick: 49 hand-overs, 48 of them preemptions at a tick and the last one the
  // first thread's end.
  CHECK(e.scheduler().preemptions() == 48);
  CHECK(e.scheduler().context_switches() == 49);
}

TEST_CASE(
    "sched: EEVDF, a thread inside its slice keeps the CPU at a tick even when it is no longer eligible") {
  // A 3 ms slice and a 1 ms tick: the running thread stops being eligible within its first tick
  // (the other waits at the average), but update_curr reschedules it only once its deadline is
  // reached, so the two alternate in whole slices, rounded up to the tick, not every tick.
  MachineSpec m = machine(1, SchedPolicy::Eevdf, 1000);
  m.sched.base_slice_ns = 3 * kMs;
  Engine e(m, PrimitiveCosts{});
  std::vector<TimeNs> ends;
  for (const char* name : {"a", "b"})
    e.spawn(name, "app", 0, [&] {
      current().compute(30 * kMs, intern("work"));
      ends.push_back(now_ns());
    });
  e.run_until_ns(1e9);
  INFO("preemptions " << e.scheduler().preemptions() << ", switches " << e.scheduler().context_switches());
  REQUIRE(ends.size() == 2);
  CHECK(ends[1] == Approx(60 * kMs));
  // 60 ms in stretches of a whole slice or more: at most 20. (Preempting it at the first tick at
  // which it is not eligible, as this model did before, gives 38.)
  CHECK(e.scheduler().preemptions() <= 20);
}

TEST_CASE("sched: a nice -15 thread gets the CPU in the ratio of the weight table against nice 0") {
  Engine e(machine(1, SchedPolicy::Eevdf), PrimitiveCosts{});
  int heavy = 0, light = 0;
  ThreadOptions hi;
  hi.weight = nice_to_weight(-15) / 1024.0;  // 29154
  auto loop = [&e](int& count) {
    for (;;) {  // 100 us steps of CPU work, counted as they finish
      current().compute(100e3, intern("work"));
      ++count;
      if (e.clock_ns() >= 1e9) return;
    }
  };
  e.spawn(
      "heavy", "app", 0, [&] { loop(heavy); }, hi);
  e.spawn("light", "app", 0, [&] { loop(light); });
  e.run_until_ns(1e9);
  const double share = static_cast<double>(light) / (heavy + light);
  // 1024 / (29154 + 1024) = 3.4 %, to within the tick granularity (the light thread runs whole ticks).
  CHECK(heavy + light == Approx(10000).margin(2));
  CHECK(share == Approx(1024.0 / (29154 + 1024)).margin(0.01));
}

// A thread sleeps 0.2 ms while a CPU-bound one runs on its CPU, then wakes. CFS places the sleeper
// half a latency period behind and preempts when the runner is ahead by more than the wake-up
// granularity: at once. EEVDF's runner is protected until its deadline is renewed, which is
// checked at the next tick (4 ms).
TimeNs sleeper_runs_at(SchedPolicy policy) {
  Engine e(machine(1, policy), PrimitiveCosts{});
  TimeNs woke = -1;
  e.spawn("sleeper", "app", 0, [&] {
    current().sleep_ns(0.2 * kMs);
    woke = now_ns();
  });
  e.spawn("runner", "app", 0, [&] { current().compute(20 * kMs, intern("work")); });
  e.run_until_ns(1e9);
  return woke;
}

TEST_CASE("sched: a thread that blocks switches out voluntarily, one that is preempted involuntarily") {
  // The kernel's nvcsw and nivcsw, which the host reads per thread: the sleeper leaves its CPU
  // once by sleeping; the runner, preempted at the 4 ms tick for it, once involuntarily; the
  // sleeper's end (it exits) is neither. The runner's preemption is counted by the class of the
  // thread that ran next, as bench/sched_trace.py counts sched_switch on the host.
  Engine e(machine(1, SchedPolicy::Eevdf), PrimitiveCosts{});
  Thread& sleeper = e.spawn("sleeper", "waking-app", 0, [&] {
    current().sleep_ns(0.2 * kMs);
    current().compute(1 * kMs, intern("work"));
  });
  Thread& runner = e.spawn("runner", "busy-app", 0, [&] { current().compute(20 * kMs, intern("work")); });
  e.run_until_ns(1e9);
  auto count = [](const Thread& t, Label l) {
    const auto w = t.window_counts_by_symbol();
    return l < w.size() ? w[l] : 0;
  };
  CHECK(count(sleeper, sym::switch_voluntary()) == 1);
  CHECK(count(sleeper, sym::switch_involuntary()) == 0);
  CHECK(count(runner, sym::switch_voluntary()) == 0);
  CHECK(count(runner, sym::switch_involuntary()) == 1);
  CHECK(e.scheduler().preemptions() == 1);
  CHECK(count(runner, preempted_by("waking-app")) == 1);
  CHECK(count(runner, preempted_by("busy-app")) == 0);
  CHECK(count(sleeper, preempted_by("busy-app")) == 0);
  const std::string* next = preempted_by_of(preempted_by("waking-app"));
  REQUIRE(next);
  CHECK(*next == "waking-app");
  CHECK(preempted_by_of(intern("work")) == nullptr);
  CHECK(preempted_by_of(woke_by("waking-app", true)) == nullptr);
}

TEST_CASE("sched: a thread that blocks with a preemption pending forgets it, as __schedule clears the flag") {
  // Under CFS a woken sleeper preempts at once. The waker, a kernel thread under PREEMPT_NONE,
  // meets no preemption point before it blocks; its switch out clears TIF_NEED_RESCHED, so when it
  // runs again nothing is pending and its cond_resched() does not switch.
  MachineSpec m = machine(1, SchedPolicy::Cfs);
  m.sched.preempt = PreemptModel::None;
  Engine e(m, PrimitiveCosts{});
  ThreadOptions kthread;
  kthread.kernel = true;
  Thread* waker = nullptr;
  bool pending_before_block = false, pending_after_block = true;
  // Spawned first, so it runs first and is asleep when woken.
  Thread& other = e.spawn(
      "other", "kthread", 0,
      [&] {
        current().park();
        current().compute(0.1 * kMs, intern("work"));
        wake_up_process(*waker);
        current().sleep_ns(0.1 * kMs);
        current().compute(0.1 * kMs, intern("work"));  // queued behind the waker when it returns
      },
      kthread);
  waker = &e.spawn(
      "waker", "kthread", 0,
      [&] {
        current().compute(2 * kMs, intern("work"));  // ahead of the sleeper by more than the granularity
        wake_up_process(other);
        current().compute(0.1 * kMs, intern("work"));  // the wakee's preemption is asked meanwhile
        pending_before_block = current().resched_deferred();
        current().park();
        pending_after_block = current().resched_deferred();
        current().cond_resched();
        current().compute(1 * kMs, intern("work"));
      },
      kthread);
  e.run_until_ns(1e9);
  const auto count = [](const Thread& t, Label l) {
    const auto w = t.window_counts_by_symbol();
    return l < w.size() ? w[l] : 0;
  };
  CHECK(pending_before_block);
  CHECK_FALSE(pending_after_block);
  CHECK(count(*waker, sym::switch_involuntary()) == 0);
}

namespace {
// EEVDF on one CPU: the runner works 0.5 ms, wakes the sleeper (if any), works 0.2 ms more, then
// calls schedule() still running. Returns when the runner went on, its involuntary switches and
// the cycles it paid for picks that kept it.
struct ScheduleRunning {
  TimeNs resumed = 0;
  std::uint64_t involuntary = 0;
  double pick_cycles = 0;
};
ScheduleRunning schedule_running_case(bool with_sleeper) {
  PrimitiveCosts c;
  c.schedule_noswitch_cycles = 100;
  MachineSpec m = machine(1, SchedPolicy::Eevdf);
  m.sched.preempt = PreemptModel::None;
  Engine e(m, c);
  ThreadOptions kthread;
  kthread.kernel = true;
  Thread* sleeper = nullptr;
  ScheduleRunning got;
  if (with_sleeper)  // spawned first, so it runs first and is asleep when woken
    sleeper = &e.spawn(
        "sleeper", "kthread", 0,
        [] {
          current().park();
          current().compute(1 * kMs, intern("work"));
        },
        kthread);
  Thread& runner = e.spawn(
      "runner", "kthread", 0,
      [&] {
        current().compute(0.5 * kMs, intern("work"));
        if (sleeper) wake_up_process(*sleeper);
        current().compute(0.2 * kMs, intern("work"));
        current().schedule_running();
        got.resumed = now_ns();
      },
      kthread);
  e.run_until_ns(1e9);
  const auto w = runner.window_counts_by_symbol();
  got.involuntary = sym::switch_involuntary() < w.size() ? w[sym::switch_involuntary()] : 0;
  const auto cy = runner.window_cycles_by_symbol();
  got.pick_cycles = sym::schedule() < cy.size() ? cy[sym::schedule()] : 0;
  return got;
}
}  // namespace

TEST_CASE(
    "sched: schedule() called while still running picks again: a thread due there runs first, the "
    "caller waiting runnable") {
  // The sleeper, woken at 0.5 ms with no lag, is placed level with the runner, which keeps its CPU
  // (eligible, its slice protected). 0.2 ms later the runner is ahead of the queue's average: its
  // schedule() picks the sleeper, which runs its 1 ms and exits, and the runner goes on at 1.7 ms,
  // switched out once involuntarily.
  const auto got = schedule_running_case(true);
  CHECK(got.resumed == Approx(1.7 * kMs));
  CHECK(got.involuntary == 1);
  CHECK(got.pick_cycles == 0);
}

TEST_CASE("sched: schedule() called while still running and alone on its CPU goes on and pays the pick") {
  const auto got = schedule_running_case(false);
  CHECK(got.resumed == Approx(0.7 * kMs + 100));
  CHECK(got.involuntary == 0);
  CHECK(got.pick_cycles == 100);
}

TEST_CASE("sched: wake-ups are counted on the wakee by the waker's class and by where the wakee was put") {
  // As the kernel's sched_waking and sched_wakeup count them (bench/sched_trace.py): a thread
  // pinned to CPU 1, woken twice from CPU 0, lands on another CPU; one pinned to CPU 0 on the
  // waker's; an unpinned one last on CPU 1, which is busy, woken by a sync waker alone on CPU 0, is
  // put on the waker's CPU (wake_affine_idle). A timer's wake-up has no waker and is not counted,
  // nor is a wake-up of a thread still runnable (try_to_wake_up returns before sched_waking).
  Engine e(machine(2, SchedPolicy::Eevdf), PrimitiveCosts{});
  ThreadOptions unpinned;
  unpinned.pinned = false;
  int mover_ran_on = -1;
  Thread& far = e.spawn("far", "far", 1, [&] {
    current().park();
    current().park();
  });
  Thread& near = e.spawn("near", "near", 0, [&] { current().park(); });
  Thread& mover = e.spawn(
      "mover", "mover", 1,
      [&] {
        current().park();
        mover_ran_on = current().cpu();
      },
      unpinned);
  e.spawn("hog", "hog", 1, [&] {
    current().sleep_ns(2.5 * kMs);  // after far's two wake-ups, before mover's
    current().compute(50 * kMs, intern("work"));
  });
  Thread& waker = e.spawn("waker", "waker", 0, [&] {
    current().sleep_ns(1 * kMs);  // a timer's wake-up
    wake_up_process(far);
    current().compute(1 * kMs, intern("work"));
    wake_up_process(far);
    wake_up_process(near);
    current().sleep_ns(1 * kMs);  // near runs and ends: the waker is alone on CPU 0 again
    wake_up_process(mover, Wake::Sync);
    current().compute(1 * kMs, intern("work"));
  });
  e.run_until_ns(1e9);
  auto count = [](const Thread& t, Label l) {
    const auto w = t.window_counts_by_symbol();
    return l < w.size() ? w[l] : 0;
  };
  auto all_wakeups = [](const Thread& t) {
    std::uint64_t n = 0;
    const auto w = t.window_counts_by_symbol();
    for (std::size_t l = 0; l < w.size(); ++l)
      if (woke_by_of(static_cast<Label>(l))) n += w[l];
    return n;
  };
  CHECK(count(far, woke_by("waker", false)) == 2);
  CHECK(all_wakeups(far) == 2);
  CHECK(count(near, woke_by("waker", true)) == 1);
  CHECK(all_wakeups(near) == 1);
  CHECK(mover_ran_on == 0);
  CHECK(count(mover, woke_by("waker", true)) == 1);
  CHECK(all_wakeups(mover) == 1);
  CHECK(all_wakeups(waker) == 0);
  const WokeBy* by = woke_by_of(woke_by("waker", false));
  REQUIRE(by);
  CHECK(by->waker_comm == "waker");
  CHECK_FALSE(by->on_waker_cpu);
  CHECK(woke_by_of(intern("work")) == nullptr);
}

TEST_CASE("sched: CFS, a waking sleeper preempts the running thread at once") {
  CHECK(sleeper_runs_at(SchedPolicy::Cfs) == Approx(0.2 * kMs));
}

TEST_CASE(
    "sched: EEVDF, a waking thread waits until the running one's slice is used (RUN_TO_PARITY), at a tick") {
  CHECK(sleeper_runs_at(SchedPolicy::Eevdf) == Approx(4 * kMs));
}

TEST_CASE("sched: an unpinned thread woken while its CPU is busy lands on the idle CPU") {
  Engine e(machine(2, SchedPolicy::Eevdf), PrimitiveCosts{});
  TimeNs woke = -1, runner_done = -1;
  int woke_on = -1;
  ThreadOptions unpinned;
  unpinned.pinned = false;
  e.spawn(
      "mover", "app", 0,
      [&] {
        current().sleep_ns(1 * kMs);  // its CPU 0 is busy with the runner when it wakes
        woke = now_ns();
        woke_on = current().cpu();
      },
      unpinned);
  e.spawn("runner", "app", 0, [&] {
    current().compute(10 * kMs, intern("work"));
    runner_done = now_ns();
  });
  e.run_until_ns(1e9);
  CHECK(woke_on == 1);
  CHECK(woke == Approx(1 * kMs));
  CHECK(runner_done == Approx(10 * kMs));  // nobody took the runner's CPU
  CHECK(e.scheduler().migrations() == 1);
}

namespace {
// Both CPUs busy at the wake-up, 20 ms in: CPU 1 with a hog that has been running for `prev_busy`
// ns, CPU 0 with the waker, running for `waker_busy` ns (and, if `crowded`, a second thread
// runnable there as long). An unpinned sleeper that last ran on CPU 1 (and never ran: no load of
// its own) is woken from CPU 0; where does it run? The CPUs' PELT loads follow how long each was
// busy (a 32 ms half-life), which is what wake_affine_weight compares.
int woken_on(Wake how, bool crowded, TimeNs waker_busy, TimeNs prev_busy) {
  constexpr TimeNs kWakeAt = 20 * kMs;
  Engine e(machine(2, SchedPolicy::Eevdf), PrimitiveCosts{});
  int ran_on = -1;
  ThreadOptions unpinned;
  unpinned.pinned = false;
  Thread& sleeper = e.spawn(
      "sleeper", "app", 1,
      [&] {
        current().park();
        ran_on = current().cpu();
      },
      unpinned);
  e.spawn("hog", "app", 1, [&] {
    current().sleep_ns(kWakeAt - prev_busy);
    current().compute(50 * kMs, intern("work"));
  });
  e.spawn("waker", "app", 0, [&] {
    current().sleep_ns(kWakeAt - waker_busy);
    // With a second thread on the CPU the waker gets half of it: it still wakes at kWakeAt.
    current().compute(crowded ? waker_busy / 2 : waker_busy, intern("work"));
    wake_up_process(sleeper, how);
    current().compute(10 * kMs, intern("work"));  // CPU 0 stays busy: no idle balance pulls the sleeper
  });
  if (crowded)
    e.spawn("other", "app", 0, [&] {
      current().sleep_ns(kWakeAt - waker_busy);
      current().compute(50 * kMs, intern("work"));
    });
  e.run_until_ns(1e9);
  return ran_on;
}
constexpr TimeNs kLight = 1 * kMs, kHeavy = 19 * kMs;
}  // namespace

// One engine per process: each case is its own test (ctest runs each in its own process).
TEST_CASE(
    "placement: a sync wake-up with no CPU idle goes to the waker's CPU when the waker runs there alone") {
  // wake_affine_idle: a sync waker about to sleep leaves its CPU to the wakee, whatever the loads.
  CHECK(woken_on(Wake::Sync, false, kHeavy, kLight) == 0);
}

TEST_CASE("placement: a plain wake-up with no CPU idle goes to the waker's CPU when that one is lighter") {
  // wake_affine_weight: the waker's CPU plus the wakee against the previous CPU without it.
  CHECK(woken_on(Wake::Normal, false, kLight, kHeavy) == 0);
}

TEST_CASE(
    "placement: a plain wake-up with no CPU idle stays on the previous CPU when the waker's is heavier") {
  CHECK(woken_on(Wake::Normal, false, kHeavy, kLight) == 1);
}

TEST_CASE("placement: a sync wake-up with another thread on the waker's CPU weighs that thread's load") {
  // The sync waker's own load counts as leaving; the other thread's stays. Heavier than the
  // previous CPU: the wakee stays there; lighter: it comes to the waker's CPU.
  CHECK(woken_on(Wake::Sync, true, kHeavy, kLight) == 1);
}

TEST_CASE("placement: a sync wake-up with another thread on the waker's CPU comes when that CPU is lighter") {
  CHECK(woken_on(Wake::Sync, true, kLight, kHeavy) == 0);
}

TEST_CASE("sched: a wake-up to a halted CPU pays the idle-exit latency, to a polling or a busy CPU none") {
  MachineSpec m = machine(2, SchedPolicy::Eevdf);
  m.sched.idle_exit_ns = 5000;
  m.sched.halt_poll_ns = 100e3;
  Engine e(m, PrimitiveCosts{});
  std::vector<TimeNs> ran;
  Thread& sleeper = e.spawn("sleeper", "app", 1, [&] {
    for (int i = 0; i < 3; ++i) {
      current().park();
      ran.push_back(now_ns());
    }
  });
  e.spawn("waker", "app", 0, [&] {
    current().sleep_ns(1 * kMs);  // CPU 1 has been idle 1 ms: halted
    sleeper.unpark();
    current().sleep_ns(50e3);  // the sleeper parked again at once: CPU 1 still polls
    sleeper.unpark();
    current().sleep_ns(2 * kMs);
    sleeper.unpark();  // CPU 1 is busy (the hog below): the sleeper queues, no idle exit
  });
  e.spawn(
      "hog", "app", 1,
      [&] {
        current().sleep_ns(2 * kMs);
        current().compute(10 * kMs, intern("work"));
      },
      ThreadOptions{});
  e.run_until_ns(1e9);
  REQUIRE(ran.size() == 3);
  // The waker's own CPU halted during its 1 ms sleep too: it runs at 1.005 ms, the sleeper at 1.010.
  CHECK(ran[0] == Approx(1 * kMs + 2 * 5000));
  // 50 us later neither CPU has halted yet (halt polling lasts 100 us): no idle exit.
  CHECK(ran[1] == Approx(1.055 * kMs));
  // Woken at 3.06 ms onto the hog's CPU, the sleeper queues: the hog (running since 2.005 ms,
  // after its own idle exit) keeps its 1.5 ms EEVDF slice (0.75 ms scaled for 2 CPUs) and the
  // sleeper runs at the first tick after it, 4 ms: with no idle exit.
  CHECK(ran[2] == Approx(4 * kMs));
}

TEST_CASE(
    "sched: with an idle-exit curve a wake-up's delay grows with the idle time, linear between points") {
  // 0 after 2 us of idle, 10 us after 100 us, 50 us after 1 ms, flat beyond: a VM's halted vCPU.
  MachineSpec m = machine(2, SchedPolicy::Eevdf);
  m.sched.idle_exit_curve = {{2e3, 0}, {100e3, 10e3}, {1e6, 50e3}};
  CHECK(m.sched.idle_exit_after(1e3) == 0);
  CHECK(m.sched.idle_exit_after(51e3) == Approx(5e3));
  CHECK(m.sched.idle_exit_after(550e3) == Approx(30e3));
  CHECK(m.sched.idle_exit_after(5e6) == Approx(50e3));
  Engine e(m, PrimitiveCosts{});
  std::vector<TimeNs> ran;
  Thread& sleeper = e.spawn("sleeper", "app", 1, [&] {
    for (int i = 0; i < 2; ++i) {
      current().park();
      ran.push_back(now_ns());
    }
  });
  TimeNs woken_at = 0;
  e.spawn("waker", "app", 0, [&] {
    current().compute(550e3, intern("work"));  // CPU 0 stays busy: only CPU 1 idles
    sleeper.unpark();                          // CPU 1 idle 550 us: 30 us
    current().compute(51e3, intern("work"));   // the sleeper parked again at once
    woken_at = now_ns();
    sleeper.unpark();
  });
  e.run_until_ns(1e9);
  REQUIRE(ran.size() == 2);
  CHECK(ran[0] == Approx(550e3 + 30e3));
  // Woken at 601 us, CPU 1 idle since 580 us: 21 us of idle, (21 - 2) / 98 of the way to 10 us.
  CHECK(woken_at == Approx(601e3));
  CHECK(ran[1] == Approx(601e3 + 19.0 / 98 * 10e3));
}

TEST_CASE(
    "sched: a thread woken from another CPU onto its idle one pays remote_wakee_cycles on its first run, "
    "woken "
    "by its timer, or queued behind a busy CPU's thread, it does not") {
  PrimitiveCosts c;
  c.wakeup_latency_ns = 3000;
  c.context_switch_cycles = 500;
  c.remote_wakee_cycles = 700;
  Engine e(machine(2, SchedPolicy::Eevdf), c);
  std::vector<TimeNs> ran;
  std::vector<Cycles> cpu;  // the sleeper's CPU time when each wake has been served
  Thread* me = nullptr;
  Thread& sleeper = e.spawn("sleeper", "app", 1, [&] {
    me = &current();
    current().park();  // 1: woken by the waker on CPU 0
    ran.push_back(now_ns());
    cpu.push_back(current().window_cycles());
    current().park_for_ns(1 * kMs);  // 2: its own timer ends the wait
    ran.push_back(now_ns());
    cpu.push_back(current().window_cycles());
    current().park();  // 3: woken while CPU 1 runs the hog: queued, no idle wake-up
    ran.push_back(now_ns());
    cpu.push_back(current().window_cycles());
  });
  e.spawn("waker", "app", 0, [&] {
    current().sleep_ns(1 * kMs);
    sleeper.unpark();
    current().sleep_ns(3 * kMs);
    sleeper.unpark();
  });
  e.spawn("hog", "app", 1, [&] {
    current().sleep_ns(3 * kMs);
    current().compute(2 * kMs, intern("work"));
  });
  e.run_until_ns(1e9);
  REQUIRE(ran.size() == 3);
  // The waker's timer (no IPI: its switch only) has it wake the sleeper at 1.0005 ms; the sleeper
  // runs after the latency and its switch, then pays its 700 cycles (1 GHz: 700 ns).
  CHECK(ran[0] == Approx(1 * kMs + 500 + 3000 + 500 + 700));
  CHECK(cpu[0] == Approx(500 + 700));
  // Its own timer's wake: the switch only, no remote wakee's part.
  CHECK(ran[1] == Approx(ran[0] + 1 * kMs + 500));
  CHECK(cpu[1] == Approx(cpu[0] + 500));
  // Queued behind the hog: it runs when the hog's slice ends, with a switch only.
  CHECK(cpu[2] == Approx(cpu[1] + 500));
  CHECK(ran[2] > 4 * kMs);
}

TEST_CASE(
    "sched: a thread that wakes another onto its own CPU and then sleeps hands the CPU over with a switch, "
    "not an idle wake-up") {
  // The kernel's try_to_wake_up puts the wakee on the waker's run queue at once, so the waker's
  // schedule() switches to it; the CPU never goes idle and no wake-up IPI is sent. In the model
  // the wake takes effect at the end of the waker's pending work, the date of its own block.
  PrimitiveCosts c;
  c.wakeup_latency_ns = 3000;
  c.context_switch_cycles = 500;
  Engine e(machine(1, SchedPolicy::Eevdf), c);
  TimeNs ran = -1;
  Thread& sleeper = e.spawn("sleeper", "app", 0, [&] {
    current().park();
    ran = now_ns();
  });
  e.spawn("waker", "app", 0, [&] {
    current().sleep_ns(1 * kMs);             // the sleeper parks meanwhile
    current().charge(1000, intern("work"));  // pending when the wake is issued
    wake_up_process(sleeper);
    current().park();  // sleeps at the date the wake takes effect
  });
  e.run_until_ns(1e9);
  // The waker's timer wake-up switches it in (500 ns), its work ends at 1.0015 ms, the sleeper's
  // switch takes 500 ns more. No 3 us wake-up latency.
  CHECK(ran == Approx(1 * kMs + 500 + 1000 + 500));
  CHECK(e.scheduler().idle_wakeups() == 1);  // only the waker's own wake from its timer
}

TEST_CASE(
    "sched: an unpinned thread woken by a thread that then sleeps goes to the idle CPU, as placed while its "
    "waker ran") {
  // try_to_wake_up runs while the waker is on its CPU, so select_task_rq_fair sees that CPU busy
  // and picks the idle one, even though the waker leaves its CPU at the date the wake takes effect.
  PrimitiveCosts c;
  Engine e(machine(2, SchedPolicy::Eevdf), c);
  int ran_on = -1;
  ThreadOptions free;
  free.pinned = false;
  Thread& sleeper = e.spawn(
      "sleeper", "app", 0,
      [&] {
        current().park();
        ran_on = current().cpu();
      },
      free);
  e.spawn("waker", "app", 0, [&] {
    current().sleep_ns(1 * kMs);
    current().charge(1000, intern("work"));
    wake_up_process(sleeper);
    current().park();
  });
  e.run_until_ns(1e9);
  CHECK(ran_on == 1);
}

TEST_CASE("sched: today's SQPOLL idle is counted in jiffies: rounded up to whole ticks, ending at a tick") {
  Engine e(machine(1, SchedPolicy::Eevdf, 250), PrimitiveCosts{});
  const auto s = uringsim::config::load_scenario_text(
      R"({"name": "t", "machine": {"cores": 1, "hz": 250}, "kernel": {"era": "6.x", "sqpoll": {"idle_us": 1500}},
          "workload": {"type": "nop"}})",
      "inline");
  const auto k = uringsim::models::KernelConfig::from(s);
  // 1.5 ms -> 2 ms (upstream takes ms) -> msecs_to_jiffies(2) at HZ 250 = 1 jiffy = 4 ms.
  CHECK(k.sq_idle_jiffies == 1);
  CHECK(k.sq_idle_ns == Approx(4 * kMs));
  uringsim::models::SqThread sq(k, uringsim::models::UringCosts{});
  // From 5 ms: timeout = jiffies (1) + 1; it stops once jiffies is past that, at the tick of 12 ms.
  CHECK(sq.idle_deadline(5 * kMs) == Approx(12 * kMs));
  // The 5.x eras keep the RFC's ns-granular idle (seed 001).
  const auto s5 = uringsim::config::load_scenario_text(
      R"({"name": "t", "kernel": {"era": "5.15", "sqpoll": {"idle_us": 1500}}, "workload": {"type": "nop"}})",
      "inline");
  CHECK(uringsim::models::KernelConfig::from(s5).sq_idle_jiffies == 0);
}

TEST_CASE(
    "sched: the waker pays wake_local_cycles for a thread that will run on its CPU, wake_cycles across") {
  PrimitiveCosts pc;
  pc.wake_cycles = 1000;
  pc.wake_local_cycles = 300;
  Engine e(machine(2, SchedPolicy::Eevdf), pc);
  Thread* local = nullptr;
  Thread* remote = nullptr;
  ThreadOptions pinned;  // pinned: where each one runs is fixed
  local = &e.spawn(
      "local", "app", 0, [&] { current().park(); }, pinned);
  remote = &e.spawn(
      "remote", "app", 1, [&] { current().park(); }, pinned);
  double waker_cycles = -1;
  e.spawn("waker", "app", 0, [&] {
    current().sleep_ns(1 * kMs);
    wake_up_process(*local);
    wake_up_process(*remote);
    const Label l = intern("try_to_wake_up");
    const auto& by = current().cycles_by_symbol();
    waker_cycles = l < by.size() ? by[l] : 0;
  });
  e.run_until_ns(1e9);
  CHECK(waker_cycles == Approx(300 + 1000));
}

TEST_CASE(
    "sched: a wake-up to another CPU sends an IPI only if that CPU is idle or the woken thread preempts") {
  // 1 GHz: cycles are ns. The waker's try_to_wake_up costs 100 onto its own CPU, 400 onto a busy
  // CPU that keeps its thread, 1000 with the IPI to an idle CPU, 3000 with one to a busy CPU.
  PrimitiveCosts c;
  c.wake_local_cycles = 100;
  c.wake_remote_cycles = 400;
  c.wake_cycles = 1000;
  c.wake_preempt_cycles = 3000;
  Engine e(machine(2, SchedPolicy::Eevdf), c);
  ThreadOptions light, heavy;
  light.weight = 15.0 / 1024;     // nice 19: its deadline is far off, it preempts nobody
  heavy.weight = 88761.0 / 1024;  // nice -20: the earliest deadline at once
  Thread& idle_target = e.spawn("idle-target", "app", 1, [&] { current().park(); });
  Thread& meek = e.spawn(
      "meek", "app", 1, [&] { current().park(); }, light);
  Thread& pushy = e.spawn(
      "pushy", "app", 1, [&] { current().park(); }, heavy);
  Thread& local = e.spawn("local", "app", 0, [&] { current().park(); });
  std::vector<TimeNs> cost;
  Thread& waker = e.spawn("waker", "app", 0, [&] {
    auto timed_wake = [&](Thread& t) {
      const TimeNs t0 = current().local_now_ns();
      wake_up_process(t);
      cost.push_back(current().local_now_ns() - t0);
    };
    current().sleep_ns(1 * kMs);
    timed_wake(idle_target);  // CPU 1 idle: the IPI
    // The hog below runs on CPU 1 from 1.5 ms; by 3.5 ms its first slice (1.5 ms) is over, so it
    // is no longer protected (RUN_TO_PARITY) and a thread with an earlier deadline preempts it.
    current().sleep_ns(2.5 * kMs);
    timed_wake(meek);   // CPU 1 busy, no preemption: no IPI
    timed_wake(pushy);  // CPU 1 busy, preempted: resched_curr's IPI
    current().sleep_ns(1 * kMs);
    timed_wake(local);  // pinned to the waker's CPU, which it runs on when the waker sleeps
  });
  e.spawn("hog", "app", 1, [&] {
    current().sleep_ns(1.5 * kMs);
    current().compute(20 * kMs, intern("work"));
  });
  e.run_until_ns(1e9);
  REQUIRE(cost.size() == 4);
  CHECK(cost[0] == Approx(1000));
  CHECK(cost[1] == Approx(400));
  CHECK(cost[2] == Approx(3000));
  CHECK(cost[3] == Approx(100));
  // Counted as the host counts IPIs: one per wake-up that sent one (no window: the whole run).
  CHECK(waker.window_counts_by_symbol().at(sym::wake_ipi()) == 2);
}

TEST_CASE(
    "sched: a wake-up that preempts another CPU's thread is queued after the enqueue part of its cost, "
    "its IPI lands ipi_delivery_ns later and its handler runs there before the switch") {
  // 1 GHz: cycles are ns. The preempting wake costs the waker 1000, of which the enqueue is the
  // first 400; the IPI lands 1000 after that and its handler takes 2000 of the hog's time.
  PrimitiveCosts c;
  c.wake_remote_cycles = 400;
  c.wake_preempt_cycles = 1000;
  c.ipi_delivery_ns = 1000;
  c.ipi_receive_cycles = 2000;
  Engine e(machine(2, SchedPolicy::Eevdf), c);
  ThreadOptions heavy, heavier;
  heavy.weight = 9548.0 / 1024;     // nice -10: an earlier deadline than the hog's, it preempts
  heavier.weight = 88761.0 / 1024;  // nice -20: earlier still
  TimeNs woken_runs = -1, hog_done = -1, t0 = -1, waker_after = -1;
  Thread& pushy = e.spawn(
      "pushy", "app", 1,
      [&] {
        current().park();
        woken_runs = now_ns();
      },
      heavy);
  // Woken 10 ns after the first wake's cost, before the hog has switched, and the pick then: the
  // hog's TIF_NEED_RESCHED is set already, so resched_curr sends no second IPI and the hog takes
  // one handler.
  TimeNs second_runs = -1;
  Thread& second = e.spawn(
      "second", "app", 1,
      [&] {
        current().park();
        second_runs = now_ns();
      },
      heavier);
  e.spawn("waker", "app", 0, [&] {
    current().sleep_ns(3.5 * kMs);  // the hog's first slice is over: it is not protected
    t0 = current().local_now_ns();
    wake_up_process(pushy);
    waker_after = current().local_now_ns();
    current().sleep_ns(10);
    wake_up_process(second);
  });
  Thread& hog = e.spawn("hog", "app", 1, [&] {
    current().sleep_ns(1.5 * kMs);
    current().compute(20 * kMs, intern("work"));
    hog_done = now_ns();
  });
  e.run_until_ns(1e9);
  CHECK(waker_after - t0 == Approx(1000));
  // The CPU switches when the first IPI's handler is done, to the pick then.
  CHECK(second_runs - t0 == Approx(400 + 1000 + 2000));
  // The handler's time is the hog's, under its own name, and its work ends that much later.
  const Label handler = intern("sysvec_reschedule_ipi");
  REQUIRE(handler < hog.cycles_by_symbol().size());
  CHECK(hog.cycles_by_symbol()[handler] == Approx(2000));
  CHECK(hog_done == Approx(1.5 * kMs + 20 * kMs + 2000));
  CHECK(woken_runs >= second_runs);
}

TEST_CASE(
    "sched: kick_process sends an IPI only to a task running on another CPU, which loses "
    "ipi_receive_cycles once the sender's part is done") {
  // 1 GHz: cycles are ns. The kick costs the sender 500; the IPI takes 2000 of the target's time.
  PrimitiveCosts c;
  c.ipi_receive_cycles = 2000;
  Engine e(machine(2, SchedPolicy::Eevdf), c);
  const Label kick = intern("kick");
  TimeNs busy_done = -1;
  // CPU 1: a task working from 0 to 10 us, unless interrupted.
  Thread& busy = e.spawn("busy", "app", 1, [&] {
    current().compute(10e3, intern("work"));
    busy_done = now_ns();
  });
  Thread& parked = e.spawn("parked", "app", 1, [&] { current().park(); });
  Thread& here = e.spawn("here", "app", 0, [&] { current().park(); });
  bool to_busy = false, to_parked = true, to_here = true;
  TimeNs sender_after = -1;
  e.spawn("sender", "app", 0, [&] {
    current().sleep_ns(1e3);
    to_busy = kick_process(busy, 500, kick);  // at 1 us: busy runs on CPU 1
    sender_after = now_ns();
    to_parked = kick_process(parked, 500, kick);  // not running: no IPI, no cost
    to_here = kick_process(here, 500, kick);      // this CPU's: no IPI either
    current().sleep_ns(50e3);
    here.unpark();
    parked.unpark();
  });
  e.run_until_ns(1e9);
  CHECK(to_busy);
  CHECK_FALSE(to_parked);
  CHECK_FALSE(to_here);
  CHECK(sender_after == Approx(1.5e3));  // only the one IPI cost the sender
  CHECK(busy_done == Approx(12e3));      // 10 us of work and the 2 us interrupt
  const auto& by = busy.cycles_by_symbol();
  const Label irq = intern("sysvec_reschedule_ipi");
  CHECK((irq < by.size() ? by[irq] : 0) == Approx(2000));  // the interrupt is the task's CPU time
}

TEST_CASE("sched: a kick to a CPU whose kick IPI is still pending merges into it, at no cost to the sender") {
  // 1 GHz. A kick costs its sender 1500; its IPI lands at once (delivery 0) and its handler takes
  // 2000 of the target's time: pending from 1 us to 3 us.
  PrimitiveCosts c;
  c.ipi_receive_cycles = 2000;
  Engine e(machine(3, SchedPolicy::Eevdf), c);
  const Label kick = intern("kick");
  TimeNs busy_done = -1;
  Thread& busy = e.spawn("busy", "app", 2, [&] {
    current().compute(10e3, intern("work"));
    busy_done = now_ns();
  });
  auto sender = [&](const char* name, int cpu, TimeNs at, bool& sent, TimeNs& after) -> Thread& {
    return e.spawn(name, "app", cpu, [&, at] {
      current().sleep_ns(at);
      sent = kick_process(busy, 1500, kick);
      current().reach_shared();
      after = now_ns();
    });
  };
  bool a = false, b = true, late = false;
  TimeNs a_after = -1, b_after = -1, late_after = -1;
  sender("a", 0, 1e3, a, a_after);
  Thread& tb = sender("b", 1, 2e3, b, b_after);  // within a's pending IPI: merged
  sender("late", 1, 20e3, late, late_after);     // after busy is done: none either
  e.run_until_ns(1e9);
  CHECK(a);
  CHECK_FALSE(b);
  CHECK(a_after == Approx(2.5e3));
  CHECK(b_after == Approx(2e3));     // the merged kick cost b nothing
  CHECK(busy_done == Approx(12e3));  // one interrupt, not two
  CHECK_FALSE(late);                 // busy exited: not running anywhere
  const auto counts = tb.window_counts_by_symbol();
  const Label merged = intern("kick_process (IPI already pending)");
  CHECK((merged < counts.size() ? counts[merged] : 0) == 1);
}

namespace {

// At 1 us a sender kicks a task that works in 1 us pieces, each ending at a point where it meets
// the others (reach_shared); the IPI takes 2 us of the piece it lands in. 1 GHz. Returns the
// pieces' ends. One engine per process: one call per test case.
std::vector<TimeNs> kicked_piece_ends(TimeNs delivery_ns) {
  PrimitiveCosts c;
  c.ipi_receive_cycles = 2000;
  c.ipi_delivery_ns = delivery_ns;
  Engine e(machine(2, SchedPolicy::Eevdf), c);
  std::vector<TimeNs> ends;
  Thread& busy = e.spawn("busy", "app", 1, [&] {
    for (int i = 0; i < 4; ++i) {
      current().compute(1e3, intern("work"));
      current().reach_shared();
      ends.push_back(now_ns());
    }
  });
  TimeNs sender_after = -1;
  e.spawn("sender", "app", 0, [&] {
    current().sleep_ns(1e3);
    kick_process(busy, 1500, intern("kick"));
    current().reach_shared();
    sender_after = now_ns();
  });
  e.run_until_ns(1e9);
  CHECK(sender_after == Approx(2.5e3));  // the sender's part is the same wherever the IPI lands
  return ends;
}

void check_times(const std::vector<TimeNs>& got, const std::vector<TimeNs>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]));
}

}  // namespace

TEST_CASE("sched: a kick's IPI lands ipi_delivery_ns into the sender's part") {
  // At 1.3 us: the piece from 1 to 2 us ends 2 us late.
  check_times(kicked_piece_ends(300), {1e3, 4e3, 5e3, 6e3});
}

TEST_CASE("sched: a kick's IPI lands at the end of the sender's part at the latest") {
  // Capped at 2.5 us: in the piece from 2 to 3 us.
  check_times(kicked_piece_ends(1e6), {1e3, 2e3, 5e3, 6e3});
}

TEST_CASE("sched: a CPU's periodic stalls delay its running thread's work and count as that thread's time") {
  // Every 1 ms a busy CPU loses 20 us (machine.stall_every_ns, stall_ns); CPU 0's first stall is
  // at 1 ms x 1/3 (the two CPUs' phases spread over the period), then every 1 ms.
  MachineSpec m = machine(2, SchedPolicy::Eevdf);
  m.stall_every_ns = 1 * kMs;
  m.stall_ns = 20e3;
  Engine e(m, PrimitiveCosts{});
  TimeNs done = -1;
  Thread& t = e.spawn("worker", "app", 0, [&] {
    current().compute(10 * kMs, intern("work"));
    done = now_ns();
  });
  e.run_until_ns(1e9);  // CPU 1 idles throughout: its stalls take nothing from anyone
  // Stalls at 0.333, 1.333, ..., 9.333 ms fall in the work: 10 of them, 200 us.
  CHECK(done == Approx(10.2 * kMs));
  CHECK(t.window_cycles() == Approx(10.2 * kMs));  // 1 GHz: the stalls are charged to the thread
}

TEST_CASE("sched: measured stall lengths stall a busy CPU at random, each length at its rate") {
  // machine.stall_lengths: 20 us stalls 100 times a second and 2 ms ones twice a second, 0.6 % of
  // a busy CPU. Over 20 s of 1 ms pieces of work, about 2 000 pieces are delayed ~20 us and about
  // 40 by ~2 ms (Poisson counts: the bounds are several standard deviations wide), at uneven
  // intervals; the work ends about 120 ms late.
  MachineSpec m = machine(2, SchedPolicy::Eevdf);
  m.stall_lengths = {{20e3, 100}, {2e6, 2}};
  m.stall_seed = 7;
  Engine e(m, PrimitiveCosts{});
  TimeNs done = -1;
  int short_hits = 0, long_hits = 0;
  std::vector<TimeNs> long_at;
  e.spawn("worker", "app", 0, [&] {
    for (int i = 0; i < 20000; ++i) {
      const TimeNs t0 = now_ns();
      current().compute(1 * kMs, intern("work"));
      const TimeNs late = now_ns() - t0 - 1 * kMs;
      if (late > 1 * kMs) {
        ++long_hits;
        long_at.push_back(t0);
      } else if (late > 10e3) {
        ++short_hits;
      }
    }
    done = now_ns();
  });
  e.run_until_ns(30e9);
  INFO("short " << short_hits << ", long " << long_hits << ", done at " << done);
  CHECK(short_hits > 1700);
  CHECK(short_hits < 2300);
  CHECK(long_hits > 20);
  CHECK(long_hits < 65);
  CHECK(done - 20e9 == Approx(120 * kMs).epsilon(0.35));
  // Not a period: the intervals between long stalls differ by more than a millisecond.
  REQUIRE(long_at.size() > 3);
  TimeNs lo = 1e18, hi = 0;
  for (std::size_t i = 1; i < long_at.size(); ++i) {
    lo = std::min(lo, long_at[i] - long_at[i - 1]);
    hi = std::max(hi, long_at[i] - long_at[i - 1]);
  }
  CHECK(hi - lo > 100 * kMs);
}

TEST_CASE(
    "sched: a busy CPU's periodic balance pulls load from an overloaded one (sched_balance_rq, "
    "CPU_NOT_IDLE)") {
  // Three CPU-bound unpinned threads, one on CPU 0 and two on CPU 1: no CPU ever goes idle, so
  // only the busy CPUs' periodic balance (every 2 ms x busy_factor 16 = 32 ms on 2 CPUs) can even
  // them out. Without it, a gets all of CPU 0 and b and c half of CPU 1 each for the whole second.
  // With it, a thread waiting on CPU 1 moves once the loads (PELT) show the imbalance and a first
  // attempt has failed (one thread's load is more than half the difference), and the moves go on
  // both ways: a loses its CPU to others, and one of b and c gets more than half of one.
  Engine e(machine(2, SchedPolicy::Eevdf), PrimitiveCosts{});
  ThreadOptions unpinned;
  unpinned.pinned = false;
  int steps[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i)
    e.spawn(
        std::string(1, static_cast<char>('a' + i)), "app", i == 0 ? 0 : 1,
        [&e, &steps, i] {
          while (e.clock_ns() < 1e9) {  // 100 us steps of CPU work, counted as they finish
            current().compute(100e3, intern("work"));
            ++steps[i];
          }
        },
        unpinned);
  e.run_until_ns(1e9);
  INFO("a " << steps[0] << ", b " << steps[1] << ", c " << steps[2] << "; migrations "
            << e.scheduler().migrations());
  CHECK(e.scheduler().migrations() >= 2);
  CHECK(steps[0] + steps[1] + steps[2] == Approx(20000).margin(3));
  CHECK(steps[0] < 9000);
  CHECK(std::max(steps[1], steps[2]) > 6000);
}

TEST_CASE(
    "sched: a thread woken onto a halted CPU takes no vruntime before it runs, though its CPU is updated "
    "meanwhile") {
  // `a` sleeps on CPU 1 from 10 us; at 1 ms a thread on CPU 0 wakes it (CPU 1 halted: a 50 us idle
  // exit), and 10 us later wakes `b` onto CPU 1 too, whose enqueue updates CPU 1's current thread.
  // In the kernel the idle task is still current then: `a` is charged nothing for its sleep.
  MachineSpec m = machine(2, SchedPolicy::Cfs);
  m.sched.idle_exit_ns = 50e3;
  m.sched.halt_poll_ns = 100e3;
  Engine e(m, PrimitiveCosts{});
  double before = -1, after = -1;
  TimeNs a_runs = -1;
  Thread& b = e.spawn("b", "app", 1, [&] { current().park(); });
  Thread& a = e.spawn("a", "app", 1, [&] {
    current().compute(10e3, intern("work"));
    current().park();
    a_runs = now_ns();
    after = current().sched().vruntime;
  });
  e.spawn("waker", "app", 0, [&] {
    current().sleep_ns(1 * kMs);
    before = a.sched().vruntime;  // as its block left it
    a.unpark();
    current().sleep_ns(10e3);
    b.unpark();
  });
  e.run_until_ns(10 * kMs);
  REQUIRE(a_runs > 0);
  CHECK(a_runs >= 1 * kMs + 50e3);  // after the idle exit, when b's enqueue had come
  CHECK(after - before == Approx(0).margin(1));
}
