// Syscall entry/exit and the NOP batch: what one io_uring_enter costs and what each SQE adds; and
// the host NOP runner's own code around it, per item and per batch.
#include <liburing.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include <chrono>

#include "analysis/metrics.hpp"
#include "host/app_loop.hpp"
#include "host/calibrate_bench.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host::calib {
namespace {

// Where the timed loops record, as a host run's runner does (host/run_frame.hpp): every record
// inside the window (a host run's steady state), with the default 10 ms time series. Their clocks
// start at 0 for each timing, so an hour is more than enough.
analysis::RunMetrics host_like_recorder() {
  return analysis::RunMetrics({0, 3600e9, {}, 10e6});
}

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
void app_loop_ns(const Bench& b, io_uring* ring, int n, analysis::RunMetrics& rec, double& prep,
                 double& reap) {
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [&] {
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  };
  double t = now_ns();
  prep_nop_batch(*ring, n, false, 0, rec);
  prep = (now_ns() - t - b.clock_ns) / n;
  if (io_uring_submit_and_wait(ring, static_cast<unsigned>(n)) != n)
    b.fail("app loop: NOP batch not submitted");
  t = now_ns();
  const Reaped r = reap_ready(*ring, since, 0, rec);
  reap = (now_ns() - t - b.clock_ns) / n;
  if (r.cqes != static_cast<unsigned>(n) || r.failed) b.fail("app loop: NOP batch not reaped whole");
}

// The host NOP runner's loop as `uringsim host` runs it (NopBatches::run), k batches of n inline
// NOPs timed together, with each batch's io_uring_submit_and_wait timed inside: per batch, the loop
// less that call and the two clock reads that time it. The records go to `rec`, as in a host run.
double loop_rest_ns(const Bench& b, io_uring* ring, NopBatches& loop, analysis::RunMetrics& rec, int n,
                    int k) {
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [&] {
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  };
  double in_call = 0;
  bool whole = true;
  auto timed_submit = [&](io_uring& r, unsigned want) {
    const double t = now_ns();
    const int rc = io_uring_submit_and_wait(&r, want);
    // Inside the timed call, so not in the loop's share: all n CQEs are there, and the loop will
    // not wait again (that wait would be in the loop's share).
    whole = whole && rc == n && io_uring_cq_ready(&r) == static_cast<unsigned>(n);
    in_call += now_ns() - t - b.clock_ns;
    return rc;
  };
  loop.depth = n;
  const std::uint64_t failed = loop.failed;
  int ran = 0;
  const double t = now_ns();
  for (; ran < k && !b.stopping(); ++ran) loop.run(*ring, rec, since, timed_submit);
  const double total = now_ns() - t - b.clock_ns;
  if (ran < k) b.fail("app batch loop: stopped");
  if (!whole || loop.failed != failed)
    b.fail("app batch loop: a NOP batch not submitted and completed whole");
  return (total - in_call) / k - 2 * b.clock_ns;
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

    analysis::RunMetrics rec = host_like_recorder();
    for (int w = 0; w < 200; ++w) {  // warm
      double p, q;
      app_loop_ns(b, ring.get(), m.app_batch, rec, p, q);
    }
    for (int r = 0; r < b.rounds(100) && !b.stopping(); ++r) {
      std::vector<double> p(50), q(50);
      for (int i = 0; i < 50; ++i) app_loop_ns(b, ring.get(), m.app_batch, rec, p[i], q[i]);
      m.app_prep.push_back(median(p));
      m.app_reap.push_back(median(q));
    }
    b.say(fmt::format("  host NOP runner's own code: {:.1f} ns per SQE prepared, {:.1f} ns per CQE reaped",
                      median(m.app_prep), median(m.app_reap)));

    NopBatches loop;
    for (int n : m.nop_batches) loop_rest_ns(b, ring.get(), loop, rec, n, 64);  // warm
    for (int r = 0; r < b.rounds(100) && !b.stopping(); ++r) {
      std::vector<double> x, y;
      for (int n : m.nop_batches) {
        std::vector<double> t;
        for (int i = 0; i < 9; ++i)
          t.push_back(loop_rest_ns(b, ring.get(), loop, rec, n, std::max(8, 256 / n)));
        x.push_back(n);
        y.push_back(median(t));
      }
      const Line fit = fit_line(x, y);
      m.loop_a.push_back(fit.a);
      m.loop_b.push_back(fit.b);
    }
    b.say(fmt::format(
        "  host NOP runner's loop less io_uring_submit_and_wait: {:.1f} ns per batch + {:.1f} ns x n",
        median(m.loop_a), median(m.loop_b)));
  });
}

}  // namespace uringsim::host::calib
