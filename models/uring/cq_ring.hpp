#pragma once
// The completion side of a ring: the CQ ring and its overflow list under completion_lock, the
// batch of completions deferred under uring_lock, and waiting for CQEs (io_cqring_wait in the
// kernel, or user space spinning on the CQ tail). Two decisions live in one place each: post()
// makes every CQE, should_wake() alone says whether a sleeping waiter is woken.
#include <cstdint>
#include <deque>
#include <vector>

#include "models/uring/kernel_config.hpp"
#include "models/uring/request.hpp"
#include "models/uring/uring_stats.hpp"
#include "sim/lock.hpp"
#include "sim/waitqueue.hpp"

namespace uringsim::models {

class IoRingCtx;
class Task;
class TaskWorkDelivery;

// CQE flags (the ones modelled), as in include/uapi/linux/io_uring.h.
constexpr unsigned kCqeFBuffer = 1u << 0;        // IORING_CQE_F_BUFFER: a provided buffer, id below
constexpr unsigned kCqeFMore = 1u << 1;          // IORING_CQE_F_MORE: the request goes on, more CQEs follow
constexpr unsigned kCqeFSockNonempty = 1u << 2;  // IORING_CQE_F_SOCK_NONEMPTY: data left in the socket
constexpr unsigned kCqeBufferShift = 16;         // IORING_CQE_BUFFER_SHIFT: the buffer id's place

struct Cqe {
  std::uint64_t user_data;
  int result;
  unsigned flags;
  // The application releases it (release()) after it has read its final CQE, the one without
  // kCqeFMore; a CQE with kCqeFMore leaves it in flight.
  Request* req;
};

class CqRing {
 public:
  // `owner`: the task that waits for CQEs and runs its task_work while waiting.
  CqRing(const KernelConfig& k, const UringCosts& costs, Task& owner, UringStats& stats);

  // The ring and its task_work delivery: DEFER_TASKRUN runs the ring's own list while waiting,
  // and makes io-wq hand completions over as task_work (lockless CQ).
  void attach(IoRingCtx& ctx, TaskWorkDelivery& tw) {
    ctx_ = &ctx;
    tw_ = &tw;
  }

  // --- completing requests (kernel side) ---
  // An inline completion, uring_lock held: batched, posted when the batch fills or is flushed.
  void complete_deferred(Request& req);
  void flush_completions();          // io_submit_flush_completions
  void complete_post(Request& req);  // io_req_complete_post: lock, post, unlock, wake (io-wq)
  // io_wq_free_work after an io-wq completion: the worker drops the last reference (6.x: the
  // request is freed by the submitter's task_work).
  void iowq_release(Request& req);
  // The free of a request whose send/recv async header did not go back to the ring's cache (6.x):
  // the header's kfree, charged to the current thread; the request's mark is taken off at once.
  void free_net_hdr(Request& req);
  void flush_overflow();  // io_cqring_overflow_flush: back into the CQ, in order
  // io_req_post_cqe, uring_lock held: a CQE for a request that goes on (multishot), not a
  // completion. False if the CQ has no room for it (full, or CQEs waiting on the overflow list):
  // the caller then ends the request, and its final CQE takes the ordinary, overflowing path.
  bool post_aux(Request& req, int result, unsigned flags);

  // --- user space ---
  bool pop(Cqe& out);  // read the next CQE (advances the CQ head)
  std::size_t ready() const { return cq_.size(); }
  std::size_t overflow_len() const { return overflow_.size(); }

  // --- waiting ---
  // io_cqring_wait: runs task_work and flushes the overflow list until min_complete CQEs are
  // ready, sleeping on cq_wait in between.
  void wait(int min_complete);
  // User space busy-waits until `min` CQEs are ready; task_work signalled to the owner runs on
  // the way back to user space.
  void spin(std::size_t min);

 private:
  bool lockless() const;
  void cq_lock(sim::Label site);
  void cq_unlock();
  void post(Request& req);   // io_fill_cqe, completion_lock held: the one place a CQE is made
  void ev_posted();          // io_cqring_ev_posted: CQEs were posted, wake whoever waits for them
  bool should_wake() const;  // io_wake_function: has the sleeping waiter got what it waits for?
  bool wait_done(int min_complete) const;

  const KernelConfig& k_;
  const UringCosts& c_;
  Task& owner_;
  UringStats& stats_;
  sim::SpinLock completion_lock_;
  std::deque<Cqe> cq_, overflow_;
  std::vector<Request*> batch_;
  sim::WaitQueue cq_wait_;
  int wait_nr_ = 0;                 // CQEs the waiter sleeping on cq_wait wants (0: nobody sleeps)
  sim::Thread* spinner_ = nullptr;  // user space spinning on the CQ tail
  IoRingCtx* ctx_ = nullptr;
  TaskWorkDelivery* tw_ = nullptr;
};

}  // namespace uringsim::models
