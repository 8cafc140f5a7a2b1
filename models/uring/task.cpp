#include "models/uring/task.hpp"

#include <algorithm>
#include <utility>

#include "models/uring/ctx.hpp"
#include "sim/sched.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
sim::Label sym_ipi();
sim::Label sym_run();
}  // namespace

sim::Label task_work_ipi_label() {
  return sym_ipi();
}
sim::Label task_work_run_label() {
  return sym_run();
}

namespace {
sim::Label sym_add() {
  static const sim::Label l = sim::intern("io_req_task_work_add");
  return l;
}
sim::Label sym_run() {
  static const sim::Label l = sim::intern("tctx_task_work");
  return l;
}
sim::Label sym_ipi() {
  static const sim::Label l = sim::intern("native_send_call_func_single_ipi");
  return l;
}
}  // namespace

Task::Task(const UringCosts& costs, const KernelConfig& k)
    : costs_(costs), resched_per_item_(k.tw_resched_per_item) {
  if (k.tw_lockless)
    list_head_ = std::make_unique<sim::AtomicLine>("tctx->task_list");
  else
    task_lock_ = std::make_unique<sim::SpinLock>("tctx->task_lock");
}

void Task::add(IoRingCtx* ctx, std::function<void()> fn, Notify notify) {
  static const sim::Label site = sim::intern("io_req_task_work_add");
  auto& self = sim::current();
  self.charge(costs_.tw_add, sym_add());
  if (list_head_) list_head_->update(site);  // llist_add: a cmpxchg on the head
  if (task_lock_) task_lock_->lock(site);
  // Only the add that finds no work pending calls task_work_add: llist_add's "was empty" (6.0+),
  // or !tctx->task_running, which stays set while tctx_task_work's loop runs (up to 5.19).
  const bool first = task_lock_ ? !std::exchange(running_, true) : list_.empty();
  list_.push_back({ctx, std::move(fn)});
  if (task_lock_) task_lock_->unlock();
  if (!first) return;  // task_work already pending
  if (!sqpoll_) {
    // set_notify_signal: test_and_set of TIF_NOTIFY_SIGNAL. A task sleeping interruptibly never
    // has it set in the kernel (signal_pending() keeps it from sleeping), so it is woken anyway.
    if (notify_signal_ && !sleeping_on_) return;
    notify_signal_ = true;
  }
  if (&self == thread_) return;               // kick_process of itself sends nothing
  if (wake_if_sleeping()) return;             // both notify methods wake an interruptible sleep
  if (notify == Notify::SignalNoIpi) return;  // it notices TIF_NOTIFY_SIGNAL at its next kernel entry
  if (!sqpoll_ && sim::kick_process(*thread_, costs_.tw_notify_ipi, sym_ipi()))
    ++ipis_;  // kicked into the kernel
  if (kick_) kick_();
}

bool Task::wake_if_sleeping() {
  if (!sleeping_on_) return false;
  sleeping_on_->wake(*thread_);
  return true;
}

void Task::take_list(std::deque<Item>& batch) {
  static const sim::Label site = sim::intern("tctx_task_work");
  if (list_head_) {
    list_head_->update(site);  // llist_del_all: an xchg; the reversal keeps queue order
    batch.swap(list_);
    return;
  }
  task_lock_->lock(site);
  batch.swap(list_);
  task_lock_->unlock();
}

void Task::run() {
  notify_signal_ = false;  // clear_notify_signal, before the run
  while (!list_.empty()) {
    std::deque<Item> batch;
    take_list(batch);
    run_items(batch, batch.size());
  }
  running_ = false;  // the loop found the list empty
}

void Task::exit_to_user() {
  run();
  // A notification during the run set the flag again with nothing left to run: the exit loop
  // clears it once more (get_signal's clear_notify_signal) before user space.
  notify_signal_ = false;
}

std::size_t Task::run_capped(std::size_t max) {
  if (max == 0) {
    const std::uint64_t before = items_run_;
    run();
    return static_cast<std::size_t>(items_run_ - before);
  }
  std::size_t done = 0;
  while (done < max && !list_.empty()) {
    std::deque<Item> batch;
    take_list(batch);
    const std::size_t n = std::min(batch.size(), max - done);
    run_items(batch, n);
    done += n;
    // The rest is the retry list: it goes before anything queued meanwhile.
    while (!batch.empty()) {
      list_.push_front(std::move(batch.back()));
      batch.pop_back();
    }
  }
  if (list_.empty()) running_ = false;
  return done;
}

// Runs the first n items of batch (removing them), each ring's items under its uring_lock.
void Task::run_items(std::deque<Item>& batch, std::size_t n) {
  auto& self = sim::current();
  if (n == 0) return;
  ++runs_;
  self.count(sym_run());
  IoRingCtx* locked = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    Item item = std::move(batch.front());
    batch.pop_front();
    if (item.ctx != locked) {
      if (locked) locked->tw_end();
      locked = item.ctx;
      if (locked) locked->tw_begin();
    }
    self.charge(costs_.tw_run, sym_run());
    ++items_run_;
    item.fn();
    // handle_tw_list (6.8+): a preemption asked meanwhile (an item woke a worker that should run)
    // is taken here, after flushing the ring's completions and dropping its uring_lock, not at
    // the end of the system call.
    if (resched_per_item_ && self.need_resched()) {
      if (locked) locked->tw_end();
      locked = nullptr;
      self.cond_resched();
    }
  }
  if (locked) locked->tw_end();
}

}  // namespace uringsim::models
