#include "models/uring/poll_reissue.hpp"

#include "models/uring/issue.hpp"

namespace uringsim::models {
namespace {

// 5.16 to 6.2: a ready poll is queued as task_work (io_req_task_queue), which issues it again.
class ViaTaskWork : public PollReissue {
 public:
  using PollReissue::PollReissue;
  void found_ready(Request& req) override { paths_.queue_poll_task(req); }
  void task_submit(Request& req) override { paths_.reissue_inline(req); }
};

// 5.15: a ready poll is issued again at once (goto issue_sqe).
class AtOnce : public ViaTaskWork {
 public:
  using ViaTaskWork::ViaTaskWork;
  void found_ready(Request& req) override { paths_.issue_inline(req); }
};

// 6.3+: as 5.16, but task_work sends an IOSQE_ASYNC request back to io-wq (io_queue_iowq).
class ForceAsyncToIoWq : public ViaTaskWork {
 public:
  using ViaTaskWork::ViaTaskWork;
  void task_submit(Request& req) override {
    if (req.force_async)
      paths_.reissue_to_iowq(req);
    else
      paths_.reissue_inline(req);
  }
};

// No era: 6.3's task_work with 5.15's ready handling (kernel.apoll_ready=inline with
// kernel.forced_reissue=iowq).
class AtOnceForceAsyncToIoWq : public ForceAsyncToIoWq {
 public:
  using ForceAsyncToIoWq::ForceAsyncToIoWq;
  void found_ready(Request& req) override { paths_.issue_inline(req); }
};

}  // namespace

std::unique_ptr<PollReissue> PollReissue::pick(const KernelConfig& k, IssuePaths& paths) {
  const bool at_once = k.apoll_ready == ApollReady::Inline;
  if (k.forced_reissue_iowq) {
    if (at_once) return std::make_unique<AtOnceForceAsyncToIoWq>(paths);
    return std::make_unique<ForceAsyncToIoWq>(paths);
  }
  if (at_once) return std::make_unique<AtOnce>(paths);
  return std::make_unique<ViaTaskWork>(paths);
}

}  // namespace uringsim::models
