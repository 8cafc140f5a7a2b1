// io-wq: NOP batches inline and through one io-wq worker (IOSQE_ASYNC), submitter and worker on
// one CPU, each fitted as T(n) = a + b n: the slopes differ by the per-item io-wq work, the
// wake-ups and switches stay in a. And the first IOSQE_ASYNC request of a fresh task, which has
// to create its worker.
#include <sched.h>

#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "host/calibrate_bench.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host::calib {
namespace {

// Keeps the ring's io-wq workers on `cpu` (IORING_REGISTER_IOWQ_AFF); "" or why it failed.
std::string pin_workers(io_uring* ring, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = io_uring_register_iowq_aff(ring, sizeof set, &set);
  return rc < 0 ? fmt::format("IORING_REGISTER_IOWQ_AFF: {}", std::strerror(-rc)) : "";
}

// One NOP submitted and waited for; the enter call alone is timed.
double nop_round_trip_ns(const Bench& b, io_uring* ring, bool async) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  io_uring_prep_nop(sqe);
  if (async) sqe->flags |= IOSQE_ASYNC;
  const double t0 = now_ns();
  const int rc = io_uring_submit_and_wait(ring, 1);
  const double t = now_ns() - t0 - b.clock_ns;
  if (rc != 1) b.fail(fmt::format("NOP round trip: io_uring_submit_and_wait returned {}", rc));
  reap_one(b, ring, 0, "NOP round trip");
  return t;
}

double median_round_trip(const Bench& b, io_uring* ring, bool async, int reps) {
  std::vector<double> t;
  for (int i = 0; i < reps && !b.stopping(); ++i) t.push_back(nop_round_trip_ns(b, ring, async));
  return t.empty() ? 0 : median(t);
}

// n NOPs submitted and waited for in one io_uring_enter, which alone is timed.
double nop_batch_ns(const Bench& b, io_uring* ring, unsigned n, bool async) {
  for (unsigned i = 0; i < n; ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    io_uring_prep_nop(sqe);
    if (async) sqe->flags |= IOSQE_ASYNC;
  }
  const double t0 = now_ns();
  const int rc = io_uring_submit_and_wait(ring, n);
  const double t = now_ns() - t0 - b.clock_ns;
  if (rc != static_cast<int>(n)) b.fail(fmt::format("NOP batch: submitted {} of {}", rc, n));
  for (unsigned i = 0; i < n; ++i) reap_one(b, ring, 0, "NOP batch");
  return t;
}

// T(n) = a + b n over batches of n NOPs, inline or through the ring's one io-wq worker.
Line batch_fit(const Bench& b, io_uring* ring, bool async) {
  std::vector<double> x, y;
  for (unsigned n : {1u, 2u, 4u, 8u, 16u, 32u}) {
    std::vector<double> t;
    for (int i = 0; i < 40 && !b.stopping(); ++i) t.push_back(nop_batch_ns(b, ring, n, async));
    if (t.empty()) return {};
    x.push_back(n);
    y.push_back(median(t));
  }
  return fit_line(x, y);
}

// In a new thread (a new io_uring task, hence a new io-wq with no worker yet): the first
// IOSQE_ASYNC NOP minus the median of the next few, which find the worker idle.
double first_worker_extra_ns(const Bench& b, std::string& unavailable) {
  double extra = 0;
  std::exception_ptr error;
  {
    Joined t([&] {
      try {
        pin_to_cpu(b.cpu_a);
        Ring ring(8);
        if (unavailable = pin_workers(ring.get(), b.cpu_a); !unavailable.empty()) return;
        nop_round_trip_ns(b, ring.get(), false);  // the task's io_uring context is set up by now
        const double first = nop_round_trip_ns(b, ring.get(), true);
        extra = first - median_round_trip(b, ring.get(), true, 7);
      } catch (...) {
        error = std::current_exception();
      }
    });
  }
  if (error) std::rethrow_exception(error);
  return extra;
}

}  // namespace

void measure_iowq(const Bench& b, Measurements& m) {
  run_pinned(b, b.cpu_a, [&] {
    Ring ring(64);
    if (m.iowq_unavailable = pin_workers(ring.get(), b.cpu_a); !m.iowq_unavailable.empty()) return;
    // One worker: a batch is worked through by it alone, after the submitter has queued all of it.
    unsigned limits[2] = {1, 1};
    if (const int rc = io_uring_register_iowq_max_workers(ring.get(), limits); rc < 0) {
      m.iowq_unavailable = fmt::format("IORING_REGISTER_IOWQ_MAX_WORKERS: {}", std::strerror(-rc));
      return;
    }
    median_round_trip(b, ring.get(), true, 200);  // the worker exists from here on
    for (int r = 0; r < b.rounds(60) && !b.stopping(); ++r) {
      const Line in = batch_fit(b, ring.get(), false), wq = batch_fit(b, ring.get(), true);
      m.iowq_inline_a.push_back(in.a);
      m.iowq_inline_b.push_back(in.b);
      m.iowq_async_a.push_back(wq.a);
      m.iowq_async_b.push_back(wq.b);
    }
    b.say(
        fmt::format("  NOP batches on CPU {} (one io-wq worker, same CPU): inline {:.0f} + {:.1f} ns x n, "
                    "IOSQE_ASYNC {:.0f} + {:.1f} ns x n",
                    b.cpu_a, median(m.iowq_inline_a), median(m.iowq_inline_b), median(m.iowq_async_a),
                    median(m.iowq_async_b)));
    for (int s = 0; s < b.rounds(100) && !b.stopping(); ++s) {
      m.worker_first_extra.push_back(first_worker_extra_ns(b, m.iowq_unavailable));
      if (!m.iowq_unavailable.empty()) return;
    }
    b.say(fmt::format("  first IOSQE_ASYNC NOP of a new task: +{:.0f} ns (worker creation)",
                      median(m.worker_first_extra)));
  });
}

}  // namespace uringsim::host::calib
