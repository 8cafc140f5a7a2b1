#pragma once
// The host NOP runner's own code, shared with `uringsim calibrate`, which times it as the
// application's costs: per SQE and per CQE (app_sqe_prep_cycles, app_cqe_cycles) and once per
// batch (app_batch_cycles). What the model's workloads charge in user space is then what
// uringsim's host programs spend there.
#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "analysis/metrics.hpp"

namespace uringsim::host {

// n NOPs prepared, each recorded as submitted at t_start.
inline void prep_nop_batch(io_uring& ring, int n, bool async, double t_start, analysis::RunMetrics& rec) {
  for (int i = 0; i < n; ++i) {
    io_uring_sqe* e = io_uring_get_sqe(&ring);
    if (!e) throw std::runtime_error("io_uring: no free SQE for the batch");
    io_uring_prep_nop(e);
    if (async) e->flags |= IOSQE_ASYNC;
    rec.submitted(t_start);
  }
}

struct Reaped {
  unsigned cqes = 0, failed = 0;
};

// Every CQE ready: its completion read off now() (ns) and its latency since t_start recorded, or
// a failure counted; then the CQ head advanced past them.
template <class Now>
Reaped reap_ready(io_uring& ring, Now&& now, double t_start, analysis::RunMetrics& rec) {
  Reaped r;
  unsigned head;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring, head, cqe) {
    ++r.cqes;
    const double t = now();
    if (cqe->res < 0) {
      ++r.failed;
      rec.failed();
    } else {
      rec.completed(t, t - t_start);
    }
  }
  io_uring_cq_advance(&ring, r.cqes);
  return r;
}

// io_uring_submit_and_wait as the runner calls it (calibrate passes its own, timed, in its place).
struct SubmitAndWait {
  int operator()(io_uring& ring, unsigned wait_nr) const { return io_uring_submit_and_wait(&ring, wait_nr); }
};

// Submits the n prepared NOPs and reaps the whole batch. wait_nr 0: submit_and_wait(n), then
// io_uring_wait_cqe_nr for whatever is missing; N: the same, waiting for min(N, missing) CQEs at a
// time (never more than can still come, which would sleep for ever).
template <class Now, class Submit>
Reaped submit_and_reap_batch(io_uring& ring, int n, int wait_nr, Now&& now, double t_start,
                             analysis::RunMetrics& rec, Submit&& submit_and_wait) {
  auto want = [&](int got) {
    return static_cast<unsigned>(wait_nr == 0 ? n - got : std::min(wait_nr, n - got));
  };
  Reaped all;
  int got = 0;
  int rc = submit_and_wait(ring, want(0));
  while (got < n) {
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY)
      throw std::runtime_error(std::string("io_uring_submit_and_wait: ") + std::strerror(-rc));
    const Reaped r = reap_ready(ring, now, t_start, rec);
    all.cqes += r.cqes;
    all.failed += r.failed;
    got += static_cast<int>(r.cqes);
    io_uring_cqe* cqe;
    if (got < n) rc = io_uring_wait_cqe_nr(&ring, &cqe, want(got));
  }
  return all;
}

// The host NOP runner's loop: its settings, its counts, and one batch per run(). What run() does
// besides the items (prep_nop_batch, reap_ready per CQE) and the syscall is the loop's cost per
// batch, which calibrate times as app_batch_cycles.
struct NopBatches {
  int depth = 1;
  bool force_async = false;
  int wait_nr = 0;
  // Batches that end inside [window_start_ns, window_end_ns] are counted in batches_window.
  double window_start_ns = 0, window_end_ns = std::numeric_limits<double>::infinity();
  std::uint64_t batches_window = 0, failed = 0;

  // One batch: its start read off now() (ns), depth NOPs prepared, submitted and reaped (each
  // recorded in rec), its end read and counted.
  template <class Now, class Submit = SubmitAndWait>
  void run(io_uring& ring, analysis::RunMetrics& rec, Now&& now, Submit&& submit_and_wait = {}) {
    const double t_start = now();
    prep_nop_batch(ring, depth, force_async, t_start, rec);
    failed += submit_and_reap_batch(ring, depth, wait_nr, now, t_start, rec, submit_and_wait).failed;
    const double t = now();
    if (t >= window_start_ns && t <= window_end_ns) ++batches_window;
  }
};

}  // namespace uringsim::host
