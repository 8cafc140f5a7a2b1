#pragma once
// The SQPOLL thread (io_sq_thread, `iou-sqp-<pid>`): it submits the SQEs user space writes into
// the SQ ring, reaps polled (IOPOLL) completions, runs its own task_work, and after `idle` without
// work sets IORING_SQ_NEED_WAKEUP and sleeps on sqd->wait until io_uring_enter(SQ_WAKEUP) or
// task_work wakes it. See docs/models/sqpoll.md.
#include <string>
#include <vector>

#include "models/uring/kernel_config.hpp"
#include "models/uring/task.hpp"
#include "sim/engine.hpp"
#include "sim/lock.hpp"
#include "sim/waitqueue.hpp"

namespace uringsim::models {

class IoRingCtx;

struct SqThreadStats {
  std::uint64_t passes = 0, sleeps = 0, wakeups = 0, idle_spins = 0;
  // task_work items run, the most in one pass, and passes that left items for the next (tw_cap)
  std::uint64_t tw_items = 0, tw_max_per_pass = 0, tw_capped_passes = 0;
};

class SqThread {
 public:
  SqThread(const KernelConfig& k, const UringCosts& costs);
  void attach(IoRingCtx& ctx) { ctxs_.push_back(&ctx); }
  // pinned: IORING_SETUP_SQ_AFF; otherwise the scheduler may move it.
  void start(sim::Engine& engine, const std::string& name, int cpu, bool pinned);
  sim::TimeNs idle_deadline(sim::TimeNs now) const;

  // io_uring_enter(SQ_WAKEUP), from the caller: wake_up(&sqd->wait).
  void wake();
  // New work is visible (an SQ tail update, a polled completion): a spinning thread notices it
  // at its next loop pass. A sleeping thread does not: that is what NEED_WAKEUP is for.
  void kick();

  Task& task() { return task_; }
  const sim::Thread* thread() const { return thread_; }
  const SqThreadStats& stats() const { return stats_; }

 private:
  void main();
  bool has_work() const;
  bool polling() const;
  void go_to_sleep();

  const KernelConfig& k_;
  const UringCosts& c_;
  Task task_;  // the SQ thread's own io_uring_task: task_work of requests it submitted
  sim::Mutex lock_;
  sim::WaitQueue wait_;
  std::vector<IoRingCtx*> ctxs_;
  sim::Thread* thread_ = nullptr;
  bool spinning_ = false;
  SqThreadStats stats_;
};

}  // namespace uringsim::models
