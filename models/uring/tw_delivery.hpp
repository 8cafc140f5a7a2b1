#pragma once
// Where a ring's request task_work goes and who is told (__io_req_task_work_add), one class per
// design, picked once from the ring's setup flags (docs/models/task-work-delivery.md):
// - the task's own list, notified with TWA_SIGNAL (a running task is kicked by an IPI) or, with
//   COOP_TASKRUN, TWA_SIGNAL_NO_IPI (it runs the work at its next kernel entry) — TaskListDelivery;
// - with DEFER_TASKRUN, the ring's own list, run only by the submitter inside
//   io_uring_enter(GETEVENTS), whose waker skips the wake-up until enough is queued — LocalListDelivery.
#include <deque>
#include <functional>
#include <memory>

#include "models/uring/kernel_config.hpp"
#include "models/uring/ring_setup.hpp"

namespace uringsim::models {

class IoRingCtx;
class Task;

// Counts of one ring's task_work, for results.json.
struct TwStats {
  std::uint64_t items_run = 0;     // items run (all designs)
  std::uint64_t runs = 0;          // batches that ran at least one item (tctx_task_work or local runs)
  std::uint64_t wakeups = 0;       // wake-ups of the waiting submitter by a task_work add
  std::uint64_t lazy_skipped = 0;  // DEFER_TASKRUN: adds that found a waiter and did not wake it
};

class TaskWorkDelivery {
 public:
  virtual ~TaskWorkDelivery() = default;
  virtual TwMode mode() const = 0;
  // Queue fn for `task` (the request's submitter) from any context. lazy: a completion that may
  // wait until the waiter has enough of them (IOU_F_TWQ_LAZY_WAKE: poll wake-ups, read/write
  // completions); io-wq completions and cancellations are not.
  virtual void add(Task& task, IoRingCtx& ctx, std::function<void()> fn, bool lazy) = 0;
  // io_uring_enter(GETEVENTS): run the ring's own list until min_events items ran or it is empty,
  // at most max_events (the rest stays queued, first in line). Others run nothing here: their
  // work is the task's (Task::run). Returns the items run.
  virtual int run_local(IoRingCtx& ctx, int min_events, int max_events) { return 0; }
  virtual bool local_pending() const { return false; }
  // The submitter waits for nr_wait more CQEs (ctx->cq_wait_nr), or stopped waiting (0).
  virtual void set_waiting(int nr_wait) {}
  // Completions must be posted by the submitter, so io-wq hands them over as task_work
  // (ctx->lockless_cq: DEFER_TASKRUN).
  virtual bool lockless_cq() const { return false; }
  // IORING_SQ_TASKRUN in sq_flags (TASKRUN_FLAG rings): task_work is waiting for the task.
  bool sq_taskrun() const { return sq_taskrun_; }
  // The task ran this ring's work from its own list (ctx_flush_and_put clears IORING_SQ_TASKRUN).
  virtual void ran() {}
  const TwStats& stats() const { return stats_; }

 protected:
  TwStats stats_;
  bool sq_taskrun_ = false;
};

// The design the setup picks.
std::unique_ptr<TaskWorkDelivery> make_tw_delivery(const RingSetup& setup, const UringCosts& costs);

}  // namespace uringsim::models
