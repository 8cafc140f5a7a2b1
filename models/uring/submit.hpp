#pragma once
// Submission (io_submit_sqes): SQEs taken one by one, charged and queued on the issue paths, then
// the completions their inline issues deferred flushed. The SQEs come from the SQ ring user space
// writes into (SQPOLL and IOPOLL rings), or from the application's vector handed to enter().
#include <deque>
#include <functional>

#include "models/uring/cq_ring.hpp"
#include "models/uring/issue.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/request.hpp"
#include "models/uring/uring_stats.hpp"

namespace uringsim::models {

class Task;

class Submitter {
 public:
  Submitter(const KernelConfig& k, const UringCosts& costs, IssuePaths& issue, CqRing& cq, UringStats& stats);

  // io_submit_sqes, uring_lock held: up to `nr` SQEs (never more than sq_entries) from `next`,
  // which gives the next one or nullptr when there is none, submitted by `submitter`.
  int submit_sqes(int nr, Task& submitter, const std::function<Request*()>& next);

  // --- the SQ ring ---
  void sq_push(Request& req);  // user space writes an SQE and publishes the SQ tail
  std::size_t sq_pending() const { return sq_ring_.size(); }
  int submit_from_sq_ring(int nr, Task& submitter);  // io_submit_sqes on the SQ ring

 private:
  const KernelConfig& k_;
  const UringCosts& c_;
  IssuePaths& issue_;
  CqRing& cq_;
  UringStats& stats_;
  std::deque<Request*> sq_ring_;
};

}  // namespace uringsim::models
