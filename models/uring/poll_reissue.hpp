#pragma once
// What happens to a request whose armed poll fires, or is found ready as it is armed. The kernel
// changed this twice: 5.16 sends a poll found ready through task_work instead of issuing it again
// at once, and 6.3's io_req_task_submit obeys REQ_F_FORCE_ASYNC, sending a poll-woken IOSQE_ASYNC
// request back to io-wq. One class per behaviour, picked once from the kernel config
// (kernel.apoll_ready, kernel.forced_reissue), the way SimGrid picks its network model.
#include <memory>

#include "models/uring/kernel_config.hpp"
#include "models/uring/request.hpp"

namespace uringsim::models {

class IssuePaths;

class PollReissue {
 public:
  explicit PollReissue(IssuePaths& paths) : paths_(paths) {}
  virtual ~PollReissue() = default;
  // io_arm_poll_handler returned READY during a non-blocking issue: the event is already there.
  virtual void found_ready(Request& req) = 0;
  // io_req_task_submit: the poll's task_work, in the submitter's task with uring_lock held.
  virtual void task_submit(Request& req) = 0;

  static std::unique_ptr<PollReissue> pick(const KernelConfig& k, IssuePaths& paths);

 protected:
  IssuePaths& paths_;
};

}  // namespace uringsim::models
