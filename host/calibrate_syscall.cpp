// Syscall entry/exit and the NOP batch: what one io_uring_enter costs and what each SQE adds.
#include <liburing.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include <chrono>

#include "host/app_loop.hpp"
#include "host/calibrate_bench.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host::calib {
namespace {

// One batch: n NOPs prepared, then io_uring_submit_and_wait(n) timed alone, then reaped.
double nop_batch_enter_ns(const Bench& b, io_uring* ring, unsigned n) {
  for (unsigned i = 0; i < n; ++i) io_uring_prep_nop(io_uring_get_sqe(ring));
  const double t0 = now_ns();
  const int rc = io_uring_submit_and_wait(ring, n);
  const double t = now_ns() - t0 - b.clock_ns;
  if (rc != static_cast<int>(n)) b.fail(fmt::format("NOP batch: submitted {} of {}", rc, n));
  if (io_uring_cq_ready(ring) != n) b.fail("NOP batch: CQEs missing after the wait");
  io_uring_cqe* cqe = nullptr;
  unsigned head, seen = 0;
  io_uring_for_each_cqe(ring, head, cqe) {
    if (cqe->res != 0) b.fail(fmt::format("NOP batch: a NOP completed with {}", cqe->res));
    ++seen;
  }
  io_uring_cq_advance(ring, seen);
  return t;
}

// The host NOP runner's code around one batch, per item: preparing the SQEs, and, after the
// (untimed) submit_and_wait, reaping the CQEs with its clock read and record for each.
void app_loop_ns(const Bench& b, io_uring* ring, int n, Events& ev, double& prep, double& reap) {
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [&] {
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  };
  double t = now_ns();
  prep_nop_batch(*ring, n, false, 0, ev);
  prep = (now_ns() - t - b.clock_ns) / n;
  if (io_uring_submit_and_wait(ring, static_cast<unsigned>(n)) != n)
    b.fail("app loop: NOP batch not submitted");
  t = now_ns();
  const Reaped r = reap_ready(*ring, since, 0, ev);
  reap = (now_ns() - t - b.clock_ns) / n;
  if (r.cqes != static_cast<unsigned>(n) || r.failed) b.fail("app loop: NOP batch not reaped whole");
  ev.submitted.clear();  // as the runner's log append does, keeping the capacity
  ev.completed.clear();
}

}  // namespace

void measure_syscalls(const Bench& b, Measurements& m) {
  run_pinned(b, b.cpu_a, [&] {
    std::atomic<std::int32_t> word{0};
    Ring ring(128);
    for (int r = 0; r < b.rounds(100) && !b.stopping(); ++r) {
      m.null_syscall.push_back(per_call_ns(20, 100, [] { ::syscall(SYS_getppid); }));
      m.futex_wake_none.push_back(per_call_ns(20, 100, [&] { futex_wake(word, 1); }));
      m.enter_null.push_back(per_call_ns(20, 100, [&] { io_uring_enter(ring.fd(), 0, 0, 0, nullptr); }));
      // Nothing else runs on this CPU, so __schedule picks the caller again: no switch.
      m.sched_yield.push_back(per_call_ns(20, 100, [] { ::sched_yield(); }));
    }
    b.say(fmt::format(
        "  null syscall {:.0f} ns, FUTEX_WAKE (no waiter) {:.0f} ns, null io_uring_enter {:.0f} ns, "
        "sched_yield alone {:.0f} ns",
        median(m.null_syscall), median(m.futex_wake_none), median(m.enter_null), median(m.sched_yield)));

    // T(n) = a + b n per round, over batch sizes that give the line both ends.
    m.nop_batches = {1, 2, 4, 8, 16, 32, 64};
    for (int w = 0; w < 200; ++w) nop_batch_enter_ns(b, ring.get(), 8);  // warm the ring and caches
    for (int r = 0; r < b.rounds(100) && !b.stopping(); ++r) {
      std::vector<double> x, y;
      for (int n : m.nop_batches) {
        std::vector<double> t;
        const int batches = std::max(20, 1024 / n);
        for (int i = 0; i < batches; ++i)
          t.push_back(nop_batch_enter_ns(b, ring.get(), static_cast<unsigned>(n)));
        x.push_back(n);
        y.push_back(median(t));
      }
      const Line fit = fit_line(x, y);
      m.nop_a.push_back(fit.a);
      m.nop_b.push_back(fit.b);
    }
    b.say(fmt::format("  NOP batches: io_uring_enter = {:.0f} ns + {:.1f} ns x n", median(m.nop_a),
                      median(m.nop_b)));

    Events ev;
    for (int w = 0; w < 200; ++w) {  // warm, and grow the records' capacity as a running loop has it
      double p, q;
      app_loop_ns(b, ring.get(), m.app_batch, ev, p, q);
    }
    for (int r = 0; r < b.rounds(100) && !b.stopping(); ++r) {
      std::vector<double> p(50), q(50);
      for (int i = 0; i < 50; ++i) app_loop_ns(b, ring.get(), m.app_batch, ev, p[i], q[i]);
      m.app_prep.push_back(median(p));
      m.app_reap.push_back(median(q));
    }
    b.say(fmt::format("  host NOP runner's own code: {:.1f} ns per SQE prepared, {:.1f} ns per CQE reaped",
                      median(m.app_prep), median(m.app_reap)));
  });
}

}  // namespace uringsim::host::calib
