#pragma once
// The host NOP runner's own code per SQE and per CQE, shared with `uringsim calibrate`, which
// times it as the application's cost of each (app_sqe_prep_cycles, app_cqe_cycles): what the
// model's workloads charge in user space is then what uringsim's host programs spend there.
#include <liburing.h>

#include <stdexcept>

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

}  // namespace uringsim::host
