// Futex wake-ups: a thread asleep on another CPU, idle or busy with a spinning thread, and a
// ping-pong between two threads on one CPU.
#include <sched.h>

#include <fmt/format.h>

#include "host/calibrate_bench.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host::calib {
namespace {

constexpr double kTimeoutNs = 1e9;
// How long the target CPU has nothing to do before each wake, so that it is really idle.
constexpr double kIdleSettleNs = 100e3;
// Idle times before a wake, for how the wake-up's cost grows with the idle time (a CPU that
// polls for a while before it halts, on a VM the host's halt polling too).
const std::vector<double> kIdleLadderNs = {2e3, 5e3, 10e3, 20e3, 50e3, 100e3, 200e3, 500e3, 1e6, 2e6};

struct Sample {
  std::vector<double> call, one_way;
  std::vector<double> wakee_cpu;     // the sleeper's CPU time across the FUTEX_WAIT the wake ended
  bool idle_policy_refused = false;  // NoPreempt: sched_setscheduler(SCHED_IDLE) failed
};

// What runs on cpu_b when the waker wakes the sleeper there.
enum class Target {
  Idle,      // nothing
  Busy,      // a spinning thread, which the woken one preempts (a reschedule IPI)
  NoPreempt  // a spinning thread, and the sleeper is SCHED_IDLE, so it preempts nothing: no IPI. The
             // spinner then steps aside (sleeps) until the woken thread has run.
};

// The waker (this thread, on cpu_a) wakes a thread asleep on cpu_b `iters` times.
Sample wake_other_cpu(const Bench& b, int iters, Target target, double settle_ns = kIdleSettleNs) {
  const bool busy = target != Target::Idle;
  struct alignas(64) Shared {
    alignas(64) std::atomic<std::int32_t> word{0};
    alignas(64) std::atomic<std::int32_t> ready{0};  // the iteration the sleeper is about to sleep for
    alignas(64) std::atomic<std::int32_t> woken{0};  // the iteration it woke for
    alignas(64) std::atomic<std::int32_t> aside{0};  // NoPreempt: the spinner sleeps while it is 1
    std::atomic<double> woke_at{0};
    std::atomic<double> wakee_cpu{0};
    std::atomic<bool> quit{false};
  } s;
  std::atomic<bool> pin_failed{false}, idle_refused{false};
  Sample out;
  bool ok = true;
  {
    Joined spinner([&] {
      if (!busy) return;
      try {
        pin_to_cpu(b.cpu_b);
      } catch (const std::exception&) {
        pin_failed.store(true);
        return;
      }
      while (!s.quit.load(std::memory_order_relaxed) && !b.stopping()) {
        if (s.aside.load(std::memory_order_relaxed) != 0) futex_wait(s.aside, 1, 50e6);
      }
    });
    Joined sleeper([&] {
      try {
        pin_to_cpu(b.cpu_b);
      } catch (const std::exception&) {
        pin_failed.store(true);
        return;
      }
      if (target == Target::NoPreempt) {
        sched_param none{};
        if (::sched_setscheduler(0, SCHED_IDLE, &none) != 0) {
          idle_refused.store(true);
          return;
        }
      }
      for (std::int32_t i = 1; i <= iters; ++i) {
        s.word.store(0);
        const double cpu0 = thread_cpu_ns();
        s.ready.store(i);
        while (s.word.load() == 0) {
          if (s.quit.load() || b.stopping()) return;
          futex_wait(s.word, 0, 50e6);
        }
        s.woke_at.store(now_ns());
        s.wakee_cpu.store(thread_cpu_ns() - cpu0);
        s.woken.store(i);
      }
    });
    for (std::int32_t i = 1; i <= iters; ++i) {
      if (!spin_until(
              b, [&] { return s.ready.load() == i || pin_failed.load() || idle_refused.load(); },
              kTimeoutNs) ||
          pin_failed || idle_refused) {
        ok = idle_refused.load();  // not a failure: that one measurement is not made
        break;
      }
      const double settle = now_ns() + settle_ns;
      spin_until(b, [&] { return now_ns() > settle; });
      const double t0 = now_ns();
      s.word.store(1);
      const int n = futex_wake(s.word, 1);
      const double t1 = now_ns();
      if (target == Target::NoPreempt) s.aside.store(1);  // the woken thread runs once it sleeps
      const bool woke = spin_until(
          b, [&] { return s.woken.load() == i; }, kTimeoutNs);
      if (target == Target::NoPreempt) {
        // The spinner comes back only once the sleeper is about to sleep again: a SCHED_IDLE
        // thread next to a spinning one would otherwise wait up to a second for its turn.
        if (woke && i < iters)
          spin_until(
              b, [&] { return s.ready.load() > i; }, kTimeoutNs);
        s.aside.store(0);
        futex_wake(s.aside, 1);
      }
      if (!woke) {
        ok = false;
        break;
      }
      if (n == 1) {  // n == 0: the sleeper had not gone to sleep yet; not a wake-up
        out.call.push_back(t1 - t0 - b.clock_ns);
        out.one_way.push_back(s.woke_at.load() - t0);
        out.wakee_cpu.push_back(s.wakee_cpu.load());
      }
    }
    s.quit.store(true);
    futex_wake(s.word, 1);
    s.aside.store(0);
    futex_wake(s.aside, 1);
  }  // both threads joined
  if (!ok) b.fail(fmt::format("futex wake to CPU {}: the woken thread did not run within a second", b.cpu_b));
  out.idle_policy_refused = idle_refused.load();
  return out;
}

// Two threads on this CPU hand a token back and forth by futex: ns per one-way hand-off and the
// median of the waker's FUTEX_WAKE call (its two clock reads are taken out of the hand-off).
struct PingPong {
  double one_way = 0, wake_call = 0;
  double wakee_cpu = 0;  // this thread's CPU time across the FUTEX_WAIT the other's wake ends
};
// time_waits: also read each waiting thread's CPU clock around its wait (wakee_cpu). Those reads
// are system calls here, so a run that takes them is not the one whose hand-off time is used.
PingPong pingpong_same_cpu(const Bench& b, int round_trips, bool time_waits) {
  struct alignas(64) Shared {
    alignas(64) std::atomic<std::int32_t> to_a{0};
    alignas(64) std::atomic<std::int32_t> to_b{0};
    std::atomic<bool> quit{false};
  } s;
  // Waits for the token; a wait that slept adds the thread's CPU time across it to `slept_cpu`.
  // (When the wakee preempts its waker inside FUTEX_WAKE, the waker finds its token already
  // there on its return and does not sleep: that wait says nothing about a wake-up.)
  auto wait_for = [&](std::atomic<std::int32_t>& w, std::vector<double>& slept_cpu) {
    const double end = now_ns() + kTimeoutNs;
    const double cpu0 = time_waits ? thread_cpu_ns() : 0;
    bool slept = false;
    while (w.load() == 0) {
      if (s.quit.load() || b.stopping() || now_ns() > end) return false;
      futex_wait(w, 0, 50e6);
      slept = true;
    }
    if (slept && time_waits) slept_cpu.push_back(thread_cpu_ns() - cpu0);
    w.store(0);
    return true;
  };
  double elapsed = 0;
  bool ok = true;
  std::vector<double> calls, waits, other_waits;
  calls.reserve(static_cast<std::size_t>(round_trips));
  waits.reserve(static_cast<std::size_t>(round_trips));
  other_waits.reserve(static_cast<std::size_t>(round_trips));
  {
    Joined other([&] {
      for (int i = 0; i < round_trips; ++i) {
        if (!wait_for(s.to_b, other_waits)) return;
        s.to_a.store(1);
        futex_wake(s.to_a, 1);
      }
    });
    const double t0 = now_ns();
    for (int i = 0; i < round_trips && ok; ++i) {
      s.to_b.store(1);
      const double w0 = now_ns();
      futex_wake(s.to_b, 1);
      calls.push_back(now_ns() - w0 - b.clock_ns);
      ok = wait_for(s.to_a, waits);
    }
    elapsed = now_ns() - t0;
    s.quit.store(true);
    futex_wake(s.to_b, 1);
  }
  if (!ok) b.fail("futex ping-pong on one CPU: no answer within a second");
  waits.insert(waits.end(), other_waits.begin(), other_waits.end());
  if (time_waits && waits.empty()) b.fail("futex ping-pong on one CPU: no thread ever slept for the token");
  return {elapsed / (2.0 * round_trips) - b.clock_ns, median(calls), time_waits ? median(waits) : 0.0};
}

}  // namespace

std::vector<double> idle_wake_one_way(const Bench& b, int iters, double idle_ns) {
  return wake_other_cpu(b, iters, Target::Idle, idle_ns).one_way;
}

void measure_wakeups(const Bench& b, Measurements& m) {
  run_pinned(b, b.cpu_a, [&] {
    for (int r = 0; r < b.rounds(60) && !b.stopping(); ++r) {
      const PingPong pp = pingpong_same_cpu(b, 2000, false);
      m.pingpong_same.push_back(pp.one_way);
      m.wake_call_same.push_back(pp.wake_call);
      m.wakee_cpu_same.push_back(pingpong_same_cpu(b, 500, true).wakee_cpu);
    }
    b.say(fmt::format("  futex ping-pong on CPU {}: {:.0f} ns per hand-off, FUTEX_WAKE call {:.0f} ns",
                      b.cpu_a, median(m.pingpong_same), median(m.wake_call_same)));
    if (b.cpu_b < 0) return;
    for (int r = 0; r < b.rounds(60) && !b.stopping(); ++r) {
      Sample s = wake_other_cpu(b, 20, Target::Idle);
      m.wake_call_idle.insert(m.wake_call_idle.end(), s.call.begin(), s.call.end());
      m.wake_idle.insert(m.wake_idle.end(), s.one_way.begin(), s.one_way.end());
    }
    if (m.wake_idle.empty()) b.fail("futex wake to an idle CPU: the sleeper never slept before its wake-up");
    b.say(fmt::format("  wake to idle CPU {}: {:.0f} ns one-way, FUTEX_WAKE call {:.0f} ns", b.cpu_b,
                      median(m.wake_idle), median(m.wake_call_idle)));
    for (int r = 0; r < b.rounds(40) && !b.stopping(); ++r) {
      Sample s = wake_other_cpu(b, 10, Target::Busy);
      m.wake_busy.insert(m.wake_busy.end(), s.one_way.begin(), s.one_way.end());
      m.wake_call_busy.insert(m.wake_call_busy.end(), s.call.begin(), s.call.end());
    }
    if (m.wake_busy.empty()) b.fail("futex wake to a busy CPU: the sleeper never slept before its wake-up");
    b.say(fmt::format("  wake to busy CPU {}: {:.0f} ns one-way, FUTEX_WAKE call {:.0f} ns", b.cpu_b,
                      median(m.wake_busy), median(m.wake_call_busy)));
    bool refused = false;
    for (int r = 0; r < b.rounds(40) && !b.stopping() && !refused; ++r) {
      Sample s = wake_other_cpu(b, 10, Target::NoPreempt);
      refused = s.idle_policy_refused;
      m.wake_call_remote.insert(m.wake_call_remote.end(), s.call.begin(), s.call.end());
    }
    if (refused) {
      m.wake_call_remote.clear();  // wake_remote_cycles keeps its default, with this reason
      m.wake_remote_unavailable = "sched_setscheduler(SCHED_IDLE) was refused here";
      b.say("  wake to a busy CPU without preemption: not measured (SCHED_IDLE refused)");
    } else {
      if (m.wake_call_remote.empty())
        b.fail("futex wake of a SCHED_IDLE thread on a busy CPU: the sleeper never slept before its wake-up");
      b.say(fmt::format(
          "  wake to busy CPU {} that it does not preempt (SCHED_IDLE): FUTEX_WAKE call {:.0f} ns", b.cpu_b,
          median(m.wake_call_remote)));
    }
    m.idle_ladder_ns = kIdleLadderNs;
    if (m.wake_by_idle.size() != kIdleLadderNs.size()) m.wake_by_idle.assign(kIdleLadderNs.size(), {});
    if (m.wakee_cpu_by_idle.size() != kIdleLadderNs.size())
      m.wakee_cpu_by_idle.assign(kIdleLadderNs.size(), {});
    for (int r = 0; r < b.rounds(10) && !b.stopping(); ++r)
      for (std::size_t k = 0; k < kIdleLadderNs.size(); ++k) {
        const Sample s = wake_other_cpu(b, 15, Target::Idle, kIdleLadderNs[k]);
        if (!s.one_way.empty()) m.wake_by_idle[k].push_back(median(s.one_way));
        if (!s.wakee_cpu.empty()) m.wakee_cpu_by_idle[k].push_back(median(s.wakee_cpu));
      }
    std::string ladder;
    for (std::size_t k = 0; k < kIdleLadderNs.size(); ++k)
      if (!m.wake_by_idle[k].empty())
        ladder += fmt::format(" {:.0f} us: {:.0f} ns;", kIdleLadderNs[k] / 1e3, median(m.wake_by_idle[k]));
    b.say("  wake to idle CPU " + std::to_string(b.cpu_b) + " after idle" + ladder);
    std::string wakee;
    for (std::size_t k = 0; k < kIdleLadderNs.size(); ++k)
      if (!m.wakee_cpu_by_idle[k].empty())
        wakee +=
            fmt::format(" {:.0f} us: {:.0f} ns;", kIdleLadderNs[k] / 1e3, median(m.wakee_cpu_by_idle[k]));
    b.say(fmt::format(
        "  the woken thread's CPU in its FUTEX_WAIT: woken from CPU {} after idle{} in the ping-pong "
        "on one CPU {:.0f} ns",
        b.cpu_a, wakee, median(m.wakee_cpu_same)));
  });
}

}  // namespace uringsim::host::calib
