#pragma once
// The host NOP runner's own code per SQE and per CQE, shared with `uringsim calibrate`, which
// times it as the application's cost of each (app_sqe_prep_cycles, app_cqe_cycles): what the
// model's workloads charge in user space is then what uringsim's host programs spend there.
#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "host/event_log.hpp"

namespace uringsim::host {

// n NOPs prepared, each recorded as submitted at t_start.
inline void prep_nop_batch(io_uring& ring, int n, bool async, double t_start, Events& ev) {
  for (int i = 0; i < n; ++i) {
    io_uring_sqe* e = io_uring_get_sqe(&ring);
    if (!e) throw std::runtime_error("io_uring: no free SQE for the batch");
    io_uring_prep_nop(e);
    if (async) e->flags |= IOSQE_ASYNC;
    ev.submitted.push_back(t_start);
  }
}

struct Reaped {
  unsigned cqes = 0, failed = 0;
};

// Every CQE ready: its completion read off now() (ns) and its latency since t_start recorded, or
// a failure counted; then the CQ head advanced past them.
template <class Now>
Reaped reap_ready(io_uring& ring, Now&& now, double t_start, Events& ev) {
  Reaped r;
  unsigned head;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring, head, cqe) {
    ++r.cqes;
    const double t = now();
    if (cqe->res < 0) {
      ++r.failed;
      ++ev.failed;
    } else {
      ev.completed.emplace_back(t, t - t_start);
    }
  }
  io_uring_cq_advance(&ring, r.cqes);
  return r;
}

// Submits the n prepared NOPs and reaps the whole batch. wait_nr 0: io_uring_submit_and_wait(n),
// then io_uring_wait_cqe_nr for whatever is missing; N: the same, waiting for min(N, missing) CQEs
// at a time (never more than can still come, which would sleep for ever).
template <class Now>
Reaped submit_and_reap_batch(io_uring& ring, int n, int wait_nr, Now&& now, double t_start, Events& ev) {
  auto want = [&](int got) {
    return static_cast<unsigned>(wait_nr == 0 ? n - got : std::min(wait_nr, n - got));
  };
  Reaped all;
  int got = 0;
  int rc = io_uring_submit_and_wait(&ring, want(0));
  while (got < n) {
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY)
      throw std::runtime_error(std::string("io_uring_submit_and_wait: ") + std::strerror(-rc));
    const Reaped r = reap_ready(ring, now, t_start, ev);
    all.cqes += r.cqes;
    all.failed += r.failed;
    got += static_cast<int>(r.cqes);
    io_uring_cqe* cqe;
    if (got < n) rc = io_uring_wait_cqe_nr(&ring, &cqe, want(got));
  }
  return all;
}

}  // namespace uringsim::host
