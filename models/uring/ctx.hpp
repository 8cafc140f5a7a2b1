#pragma once
// One io_uring instance (struct io_ring_ctx): the rings, uring_lock and completion_lock, and the
// request paths — submission, inline non-blocking issue, async poll, punt to io-wq, io-wq issue,
// task_work re-issue, CQE posting (with the overflow list) and waiting for completions.
#include <deque>
#include <memory>
#include <vector>

#include "models/uring/breakdown.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/request.hpp"
#include "models/uring/task.hpp"
#include "sim/lock.hpp"
#include "sim/waitqueue.hpp"

namespace uringsim::models {

class IoWq;
class BlockHooks;

struct Cqe {
  std::uint64_t user_data;
  int result;
  Request* req;  // freed by the application after it has read the CQE (release())
};

struct UringStats {
  std::uint64_t sqes_submitted = 0, cqes_posted = 0, cq_overflowed = 0;
  std::uint64_t inline_completed = 0, poll_armed = 0, poll_ready_at_arm = 0, poll_woken = 0;
  std::uint64_t punted = 0, punt_non_pollable = 0, iowq_completed = 0, worker_blocked = 0;
};

class IoRingCtx {
 public:
  IoRingCtx(const KernelConfig& k, const UringCosts& costs, Task& owner, IoWq& wq);
  ~IoRingCtx();

  // --- application side (the owner task's thread) ---
  Request& new_request();  // a fresh request; the application fills it and submits it
  void release(Request& req);
  // io_uring_enter(to_submit, min_complete, GETEVENTS): submits up to sq_entries of `sqes`
  // (removing them from the vector) and waits for min_complete CQEs. Returns the number submitted.
  int enter(std::vector<Request*>& sqes, int min_complete);
  bool pop_cqe(Cqe& out);  // user space: read the next CQE (advances the CQ head)
  std::size_t cq_ready() const { return cq_.size(); }

  // --- kernel paths used by other components ---
  void poll_wake(Request& req);                              // a file's wake callback (waker's context)
  void io_wq_submit_work(Request& req, BlockHooks& worker);  // run by an io-wq worker
  void tw_begin();                                           // task_work batch on this ring: take uring_lock
  void tw_end();                                             // flush deferred completions, unlock

  const UringStats& stats() const { return stats_; }
  const LatencyBreakdown& breakdown() const { return breakdown_; }
  std::uint64_t in_flight() const { return stats_.sqes_submitted - stats_.cqes_posted; }
  std::size_t overflow_len() const { return overflow_.size(); }
  Task& owner() { return owner_; }
  const KernelConfig& kernel() const { return k_; }

 private:
  void queue_sqe(Request& req);
  void issue_inline(Request& req);  // NONBLOCK | COMPLETE_DEFER, holding uring_lock
  void queue_async_work(Request& req);
  enum class Apoll { Ok, Ready, Aborted };
  Apoll arm_poll(Request& req);
  void poll_task_func(Request& req);
  void complete_deferred(Request& req);
  void flush_completions();
  void complete_post(Request& req);  // io-wq completion: lock, post, unlock, wake
  void post_cqe(Request& req);       // under completion_lock
  void cq_ev_posted();
  void flush_overflow();
  void cqring_wait(int min_complete);

  KernelConfig k_;
  const UringCosts& c_;
  Task& owner_;
  IoWq& wq_;
  sim::Mutex uring_lock_;
  sim::SpinLock completion_lock_;
  std::deque<Cqe> cq_, overflow_;
  std::vector<Request*> compl_batch_;
  sim::WaitQueue cq_wait_;
  int cq_wait_nr_ = 0;
  bool owner_in_tw_ = false;
  std::vector<std::unique_ptr<Request>> pool_;
  std::vector<Request*> free_;
  std::uint64_t next_id_ = 1;
  UringStats stats_;
  LatencyBreakdown breakdown_;
};

}  // namespace uringsim::models
