#pragma once
// A task that uses io_uring (struct io_uring_task): it owns an io-wq and a task_work list. Other
// contexts queue work for it (poll wake-ups, worker-creation requests); it runs that work itself at
// its next kernel entry or exit, or while waiting for completions. Adding work to a sleeping task
// wakes it (TWA_SIGNAL); a running task is kicked with an IPI. The list is guarded by
// tctx->task_lock up to 5.19 and is a lockless llist since 6.0 (KernelConfig::tw_lockless).
#include <deque>
#include <functional>
#include <memory>

#include "models/uring/kernel_config.hpp"
#include "sim/atomic_line.hpp"
#include "sim/lock.hpp"
#include "sim/waitqueue.hpp"

namespace uringsim::models {

class IoRingCtx;

// How task_work_add tells a task that is not sleeping: TWA_SIGNAL kicks it with an IPI,
// TWA_SIGNAL_NO_IPI (COOP_TASKRUN rings) only sets TIF_NOTIFY_SIGNAL. Both wake a sleeping task.
enum class Notify { Signal, SignalNoIpi };

// What a task_work IPI and a task_work run are counted under (sim::Thread::count), for results.
sim::Label task_work_ipi_label();
sim::Label task_work_run_label();

class Task {
 public:
  Task(const UringCosts& costs, const KernelConfig& k);
  void set_thread(sim::Thread& t) { thread_ = &t; }
  sim::Thread& thread() const { return *thread_; }
  bool has_thread() const { return thread_ != nullptr; }

  // Queue work for this task from any context. `ctx`, when set, is the ring whose uring_lock the
  // work runs under (tctx_task_work batches items per ring).
  void add(IoRingCtx* ctx, std::function<void()> fn, Notify notify = Notify::Signal);
  // io_run_task_work, from this task's own thread: clear TIF_NOTIFY_SIGNAL, then run all pending
  // work (task_work_run: until no new work came meanwhile).
  void run();
  // The way back to user space (exit_to_user_mode_loop): runs the work and loops until
  // TIF_NOTIFY_SIGNAL is clear, so a task in user space never has it set.
  void exit_to_user();
  // Run at most `max` items (0: no cap), oldest first; what is left stays at the head of the list
  // and runs before newer work next time (io_sq_tw's retry list, 6.9+). Returns the items run.
  std::size_t run_capped(std::size_t max);
  bool pending() const { return !list_.empty(); }

  // The task is sleeping interruptibly on `wq` (e.g. waiting for CQEs); a task_work add wakes it.
  void sleeping_on(sim::WaitQueue* wq) { sleeping_on_ = wq; }
  // The task is busy-polling (SQ thread, user-space CQ spin): a task_work add also calls `kick`
  // (after the IPI's cost) so that the poller notices TIF_NOTIFY_SIGNAL. Empty: not polling.
  void set_kick(std::function<void()> kick) { kick_ = std::move(kick); }
  // The SQ thread's own task: io_req_normal_work_add only sets TIF_NOTIFY_SIGNAL for it, with no
  // task_work_add and so no IPI; its loop sees the flag at its next pass.
  void set_sqpoll() { sqpoll_ = true; }

  // Wake the task if it sleeps interruptibly (wake_up_state(task, TASK_INTERRUPTIBLE)); true if
  // it did. For DEFER_TASKRUN's ring-local work, which bypasses the task's list.
  bool wake_if_sleeping();

  std::uint64_t items_run() const { return items_run_; }
  std::uint64_t runs() const { return runs_; }  // tctx_task_work batches that ran an item
  std::uint64_t ipis() const { return ipis_; }  // IPIs sent to kick it (TWA_SIGNAL on a running task)

 private:
  struct Item {
    IoRingCtx* ctx;
    std::function<void()> fn;
  };
  const UringCosts& costs_;
  sim::Thread* thread_ = nullptr;
  std::deque<Item> list_;
  void run_items(std::deque<Item>& batch, std::size_t n);
  // Take the whole list (tctx_task_work): under task_lock, or llist_del_all's xchg.
  void take_list(std::deque<Item>& batch);
  std::unique_ptr<sim::SpinLock> task_lock_;    // up to 5.19; null when the list is an llist
  std::unique_ptr<sim::AtomicLine> list_head_;  // 6.0+: the llist's head, null with task_lock
  sim::WaitQueue* sleeping_on_ = nullptr;
  std::function<void()> kick_;
  bool sqpoll_ = false;
  // TIF_NOTIFY_SIGNAL: set by the first notification, cleared only by run() and exit_to_user().
  // While it is set, set_notify_signal neither wakes nor kicks: a task that run()'s loop keeps
  // busy, or that is inside io_uring_enter past its io_run_task_work, gets one IPI, not one per
  // list refill.
  bool notify_signal_ = false;
  // tctx->task_running (the task_lock era only; 6.0+ asks the llist): set by the add that
  // notifies, cleared only when tctx_task_work's loop finds the list empty; adds in between
  // notify nobody.
  bool running_ = false;
  bool resched_per_item_;  // KernelConfig::tw_resched_per_item
  std::uint64_t items_run_ = 0, runs_ = 0, ipis_ = 0;
};

}  // namespace uringsim::models
