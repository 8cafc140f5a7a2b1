#pragma once
// A ring's issue paths, from io_queue_sqe to a completion or a wait: the inline non-blocking
// issue, async poll arming, the punt to io-wq, the io-wq worker's issue, the poll's wake-up and
// its task_work re-issue (whose rule is a PollReissue), and the task_work batches that run under
// uring_lock.
#include <memory>

#include "models/uring/cq_ring.hpp"
#include "models/uring/iopoll.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/multishot.hpp"
#include "models/uring/netmsg_cache.hpp"
#include "models/uring/poll_reissue.hpp"
#include "models/uring/request.hpp"
#include "models/uring/uring_stats.hpp"
#include "sim/label.hpp"
#include "sim/lock.hpp"

namespace uringsim::models {

class BlockHooks;
class IoRingCtx;
class IoWq;
class Task;

// Issue flags (io_issue_sqe's issue_flags). What NONBLOCK also claims depends on the era
// (KernelConfig::issue_flags_split): the lock context of the issue path is checked against it.
constexpr unsigned kIssueNonblock = 1u << 0;       // IO_URING_F_NONBLOCK
constexpr unsigned kIssueCompleteDefer = 1u << 1;  // IO_URING_F_COMPLETE_DEFER (needs uring_lock)
constexpr unsigned kIssueUnlocked = 1u << 2;       // IO_URING_F_UNLOCKED (5.16+)

class IssuePaths {
 public:
  // `ctx`: the ring whose uring_lock the task_work queued here runs under.
  IssuePaths(IoRingCtx& ctx, const KernelConfig& k, const UringCosts& costs, Task& owner, IoWq& wq,
             sim::Mutex& uring_lock, CqRing& cq, Iopoll& iopoll, UringStats& stats);
  ~IssuePaths();

  // io_queue_sqe, uring_lock held: IOSQE_ASYNC goes to io-wq, anything else is tried inline.
  void queue_sqe(Request& req);
  // NONBLOCK | COMPLETE_DEFER, uring_lock held; on -EAGAIN, poll (pollable files) or io-wq.
  void issue_inline(Request& req);
  void queue_async_work(Request& req);  // io_queue_async_work: the punt
  // A send's or recv's prep (6.x): its async header from the ring's cache, or kmalloc'd.
  void prep_net_hdr(Request& req);

  // --- poll wake-ups and their re-issue ---
  void poll_wake(Request& req);  // a file's wake callback (waker's context)
  // The poll's task_work (poll_task_func) for the submitter. lazy: from a poll wake-up
  // (__io_poll_execute's IOU_F_TWQ_LAZY_WAKE), not from a poll found ready (io_req_task_queue).
  void queue_poll_task(Request& req, bool lazy = false);
  void reissue_inline(Request& req);   // task_work: issue it again, non-blocking
  void reissue_to_iowq(Request& req);  // task_work: back to io-wq

  // --- io-wq and the drive ---
  void io_wq_submit_work(Request& req, BlockHooks& worker);  // run by an io-wq worker
  void io_wq_cancel(Request& req);     // io-wq took the work back unrun: fail it with -ECANCELED
  void rw_complete_irq(Request& req);  // interrupt context: complete through task_work

  // --- task_work batches on this ring ---
  void tw_begin();  // take uring_lock
  void tw_end();    // flush deferred completions, unlock

 private:
  // Does an issue with these flags assume uring_lock is held? (seed 004)
  bool claims_uring_lock(unsigned flags) const {
    return k_.issue_flags_split ? !(flags & kIssueUnlocked) : (flags & kIssueNonblock) != 0;
  }
  // io_issue_sqe for a non-blocking attempt: checks the lock context the flags claim, then tries.
  bool issue_nonblock(Request& req, unsigned flags, sim::Label path);
  enum class Apoll { Ok, Ready, Aborted };
  Apoll arm_poll(Request& req);
  void poll_task_func(Request& req);
  // An issue under uring_lock that completed: its header goes back to the cache (or is freed if
  // the cache is full).
  void recycle_net_hdr(Request& req);
  // io_req_task_queue_fail from an io-wq worker: the failure is posted from the owner's task_work.
  void fail_in_task(Request& req, int err);

  IoRingCtx& ctx_;
  const KernelConfig& k_;
  const UringCosts& c_;
  Task& owner_;
  IoWq& wq_;
  sim::Mutex& uring_lock_;
  CqRing& cq_;
  Iopoll& iopoll_;
  UringStats& stats_;
  std::unique_ptr<PollReissue> reissue_;
  MultishotRecv multishot_;
  NetMsgCache netmsg_;
  bool owner_in_tw_ = false;
};

}  // namespace uringsim::models
