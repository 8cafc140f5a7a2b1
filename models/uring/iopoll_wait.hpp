#pragma once
// How the task polling an IOPOLL ring (io_iopoll_check) waits for the request at the head of the
// iopoll list, one class per design, picked from the ring's setup flags:
// - classic (io_uring_classic_poll): spin on the drive's queue until it completes something;
// - hybrid (IORING_SETUP_HYBRID_IOPOLL, 6.13, io_uring_hybrid_poll): sleep once per request for
//   half the ring's learned poll time, then spin. The learned time (ctx->hybrid_poll_time) starts
//   unknown (LLONG_MAX: no sleep) and is the minimum over polls of (poll returned - request issued
//   - that request's sleep). See docs/models/block-completion.md.
#include <limits>
#include <memory>

#include "models/uring/request.hpp"
#include "models/uring/uring_stats.hpp"
#include "sim/types.hpp"

namespace uringsim::models {

class IopollWait {
 public:
  static constexpr sim::TimeNs kUnknown = std::numeric_limits<double>::infinity();
  virtual ~IopollWait() = default;
  virtual bool hybrid() const = 0;
  // io_rw_init_file: the request is being issued to the drive, now.
  virtual void issued(Request& req) {}
  // Before polling for `head` (io_hybrid_iopoll_delay): may put the polling thread to sleep.
  virtual void before_poll(Request& head, UringStats& stats) {}
  // The poll for `head` returned having found completions: learn from it.
  virtual void polled(const Request& head) {}
  // ctx->hybrid_poll_time; kUnknown until a poll returned.
  virtual sim::TimeNs learned_ns() const { return kUnknown; }
};

std::unique_ptr<IopollWait> make_iopoll_wait(bool hybrid);

}  // namespace uringsim::models
