#include "models/uring/task.hpp"

#include "models/uring/ctx.hpp"
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

Task::Task(const UringCosts& costs)
    : costs_(costs), task_lock_(std::make_unique<sim::SpinLock>("tctx->task_lock")) {}

void Task::add(IoRingCtx* ctx, std::function<void()> fn, Notify notify) {
  static const sim::Label site = sim::intern("io_req_task_work_add");
  auto& self = sim::current();
  self.charge(costs_.tw_add, sym_add());
  task_lock_->lock(site);
  const bool was_pending = !list_.empty();
  list_.push_back({ctx, std::move(fn)});
  task_lock_->unlock();
  if (was_pending || &self == thread_) return;   // already notified, or we run it ourselves
  if (wake_if_sleeping()) return;                // both notify methods wake an interruptible sleep
  if (notify == Notify::SignalNoIpi) return;     // it notices TIF_NOTIFY_SIGNAL at its next kernel entry
  self.charge(costs_.tw_notify_ipi, sym_ipi());  // kick the running task into the kernel
  self.count(sym_ipi());
  ++ipis_;
  if (kick_) kick_();
}

bool Task::wake_if_sleeping() {
  if (!sleeping_on_) return false;
  sleeping_on_->wake(*thread_);
  return true;
}

void Task::run() {
  static const sim::Label site = sim::intern("tctx_task_work");
  auto& self = sim::current();
  while (!list_.empty()) {
    std::deque<Item> batch;
    task_lock_->lock(site);
    batch.swap(list_);
    task_lock_->unlock();
    IoRingCtx* locked = nullptr;
    if (!batch.empty()) {
      ++runs_;
      self.count(sym_run());
    }
    for (auto& item : batch) {
      if (item.ctx != locked) {
        if (locked) locked->tw_end();
        locked = item.ctx;
        if (locked) locked->tw_begin();
      }
      self.charge(costs_.tw_run, sym_run());
      ++items_run_;
      item.fn();
    }
    if (locked) locked->tw_end();
  }
}

}  // namespace uringsim::models
