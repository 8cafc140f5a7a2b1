// Wake-up packing: does this kernel put a woken thread on its waker's CPU while another CPU is
// idle? Upstream's select_task_rq_fair does not (an idle previous CPU, or the idle CPU its scan
// finds, wins over a busy waker's); some VM kernels do while the waker's CPU has room
// (docs/models/scheduler.md). A waker pinned to one CPU runs a duty cycle: busy for a share of
// each kCycleNs, it wakes a thread by futex at the end of its busy part, then sleeps the rest.
// The wakee may run on both CPUs; before each sleep it runs on its `home` CPU, so that is the CPU
// it last ran on. Two cases, each swept over the busy shares (upward, so that the CPU's average
// load moves little from one rung to the next):
//   other: home is the other CPU, idle at the wake;
//   same:  home is the waker's CPU, the other CPU idle.
// Upstream puts no wake-up on the waker's CPU in either case.
#include <sched.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "host/calibrate_bench.hpp"

namespace uringsim::host::calib {
namespace {

constexpr double kCycleNs = 3e6;  // PELT's half-life is 32 ms: the load average barely ripples
const std::vector<double> kBusyShares = {0.2, 0.4, 0.55, 0.6, 0.65, 0.675, 0.7, 0.725, 0.75, 0.8, 0.9};

struct Landed {
  int on = 0, n = 0;  // wake-ups on the waker's CPU, of wake-ups counted
  // The waker's busy time over the wall time, counted cycles: below the asked share by the
  // sleeps' overshoot (the timer's slack).
  double busy_share = 0;
};

// One case, every rung: the calling thread is the waker, pinned to waker_cpu. One wakee serves the
// whole sweep: a new thread starts with a large load average of its own (post_init_entity_util_avg)
// that takes ~100 ms to decay, and a placement that weighs it would not pack until then. Each
// rung runs `warm` cycles before `counted` ones, to bring the CPU's load average to its duty
// cycle (the first rung kFirstWarm, for the wakee's too).
std::vector<Landed> one_case(const Bench& b, int waker_cpu, int home, int warm, int counted) {
  constexpr int kFirstWarm = 100;  // ~9 PELT half-lives
  struct alignas(64) Shared {
    alignas(64) std::atomic<std::int32_t> word{0};
    alignas(64) std::atomic<std::int32_t> asleep{0};  // the cycle the wakee is about to sleep for
    alignas(64) std::atomic<std::int32_t> woken{0};   // the cycle it woke for
    std::atomic<int> woke_on{-1};
    std::atomic<bool> quit{false}, failed{false};
  } s;
  const int other = home == b.cpu_a ? b.cpu_b : b.cpu_a;
  std::vector<Landed> out;
  bool ok = true;
  {
    Joined wakee([&] {
      try {
        for (std::int32_t i = 1;; ++i) {
          pin_to_cpu(home);           // moves it home if it woke elsewhere ...
          allow_cpus({home, other});  // ... and it sleeps there, free to move
          s.asleep.store(i);
          while (s.word.load() == 0) {
            if (s.quit.load() || b.stopping()) return;
            futex_wait(s.word, 0, 50e6);
          }
          if (s.quit.load()) return;
          s.word.store(0);
          s.woke_on.store(::sched_getcpu());
          s.woken.store(i);
        }
      } catch (const std::exception&) {
        s.failed.store(true);
      }
    });
    std::int32_t i = 0;  // cycles so far
    for (std::size_t k = 0; k < kBusyShares.size() && ok && !b.stopping(); ++k) {
      const double share = kBusyShares[k];
      const int cycles = (k == 0 ? kFirstWarm : warm) + counted;
      Landed l;
      double busy_ns = 0, wall0 = 0;
      for (int c = 0; c < cycles; ++c) {
        ++i;
        if (!spin_until(
                b, [&] { return s.asleep.load() == i || s.failed.load(); }, 1e9) ||
            s.failed.load()) {
          ok = false;
          break;
        }
        const double t0 = now_ns();
        const bool counting = c >= cycles - counted;
        if (c == cycles - counted) wall0 = t0;
        spin_until(b, [&] { return now_ns() - t0 >= share * kCycleNs; });
        if (counting) busy_ns += now_ns() - t0;
        s.word.store(1);
        const int n = futex_wake(s.word, 1);
        std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<long long>((1 - share) * kCycleNs)));
        if (!spin_until(
                b, [&] { return s.woken.load() == i; }, 1e9)) {
          ok = false;
          break;
        }
        if (counting && n == 1) {  // n == 0: it had not gone to sleep yet; not a wake-up
          ++l.n;
          l.on += s.woke_on.load() == waker_cpu;
        }
      }
      if (!ok) break;
      l.busy_share = busy_ns / (now_ns() - wall0);
      out.push_back(l);
    }
    s.quit.store(true);
    s.word.store(1);
    futex_wake(s.word, 1);
  }  // the wakee joined
  if (!ok)
    b.fail(
        fmt::format("wake-up packing: the thread woken from CPU {} did not run within a second", waker_cpu));
  return out;
}

}  // namespace

void measure_wake_pack(const Bench& b, Measurements& m) {
  if (b.cpu_b < 0) return;  // cross_cpu_unavailable says why
  if (m.pack.size() != kBusyShares.size()) m.pack.assign(kBusyShares.size(), {});
  const int counted = b.quick ? 20 : 60;
  std::string line_other, line_same;
  for (const bool same : {false, true}) {
    const int waker_cpu = same ? b.cpu_a : b.cpu_b;
    std::vector<Landed> rungs;
    run_pinned(b, waker_cpu, [&] { rungs = one_case(b, waker_cpu, b.cpu_a, 20, counted); });
    for (std::size_t k = 0; k < rungs.size(); ++k) {
      const Landed& l = rungs[k];
      Measurements::PackRung& r = m.pack[k];
      (same ? r.same_on : r.other_on) += l.on;
      (same ? r.same_n : r.other_n) += l.n;
      (same ? r.same_busy : r.other_busy).push_back(l.busy_share);
      (same ? line_same : line_other) += fmt::format(" {:.0f} %: {}/{};", 100 * l.busy_share, l.on, l.n);
    }
  }
  b.say(
      fmt::format("  wake-ups kept on the waker's CPU {} by its busy share, the wakee's last CPU {} idle:{}",
                  b.cpu_b, b.cpu_a, line_other));
  b.say(fmt::format("  the same, the wakee last on the waker's CPU {}, CPU {} idle:{}", b.cpu_a, b.cpu_b,
                    line_same));
}

}  // namespace uringsim::host::calib
