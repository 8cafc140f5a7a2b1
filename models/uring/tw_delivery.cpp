#include "models/uring/tw_delivery.hpp"

#include <limits>

#include "models/uring/ctx.hpp"
#include "models/uring/task.hpp"
#include "sim/atomic_line.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {
namespace {

// The task's own list (io_req_normal_work_add): TWA_SIGNAL, or TWA_SIGNAL_NO_IPI with COOP_TASKRUN.
class TaskListDelivery final : public TaskWorkDelivery {
 public:
  TaskListDelivery(TwMode mode, bool taskrun_flag) : mode_(mode), taskrun_flag_(taskrun_flag) {}
  TwMode mode() const override { return mode_; }
  void add(Task& task, IoRingCtx& ctx, std::function<void()> fn, bool /*lazy*/) override {
    if (taskrun_flag_) sq_taskrun_ = true;
    task.add(&ctx, std::move(fn), mode_ == TwMode::Coop ? Notify::SignalNoIpi : Notify::Signal);
  }
  void ran() override { sq_taskrun_ = false; }  // ctx_flush_and_put clears IORING_SQ_TASKRUN

 private:
  TwMode mode_;
  bool taskrun_flag_;
};

// DEFER_TASKRUN (io_req_local_work_add, __io_run_local_work): the ring's own list. Each item
// carries the count of items queued up to it (req->nr_tw); a lazy add wakes the waiter only when
// that count reaches what the waiter waits for, and only the add that crosses it; an add that is
// not lazy forces the wake. Items run in queue order (6.5), at most max per run (6.13), the rest
// first next time.
class LocalListDelivery final : public TaskWorkDelivery {
 public:
  LocalListDelivery(const UringCosts& costs, bool taskrun_flag)
      : costs_(costs), taskrun_flag_(taskrun_flag), head_("ctx->work_llist") {}
  TwMode mode() const override { return TwMode::Defer; }
  bool lockless_cq() const override { return true; }
  bool local_pending() const override { return !list_.empty(); }
  void set_waiting(int nr_wait) override {
    nr_wait_ = nr_wait > 0 ? static_cast<unsigned>(nr_wait) : kWakeInit;
  }

  void add(Task& task, IoRingCtx& /*ctx*/, std::function<void()> fn, bool lazy) override {
    static const sim::Label sym = sim::intern("io_req_local_work_add");
    sim::current().charge(costs_.tw_add, sym);
    head_.update(sym);  // the try_cmpxchg on work_llist's head
    const unsigned prev = list_.empty() ? 0 : head_nr_;
    const unsigned nr = lazy ? prev + 1 : kWakeForce;
    head_nr_ = nr;
    list_.push_back(std::move(fn));
    if (prev == 0 && taskrun_flag_) sq_taskrun_ = true;
    if (nr < nr_wait_) {  // not enough yet, or nobody waits (kWakeInit)
      if (nr_wait_ != kWakeInit) ++stats_.lazy_skipped;
      return;
    }
    if (prev >= nr_wait_) return;  // an earlier add already woke it
    if (task.wake_if_sleeping()) ++stats_.wakeups;
  }

  int run_local(IoRingCtx& ctx, int min_events, int max_events) override {
    static const sim::Label sym = sim::intern("__io_run_local_work");
    if (list_.empty()) return 0;
    auto& self = sim::current();
    sq_taskrun_ = false;
    int ran = 0, min_left = min_events;
    ctx.tw_begin();
    // Pass after pass while work is pending and a pass ran fewer than the events still wanted;
    // each pass runs at most max_events.
    for (;;) {
      ++stats_.runs;
      self.count(task_work_run_label());
      head_.update(sym);  // llist_del_all (the retry list of 6.13 is the submitter's own)
      int n = 0;
      while (!list_.empty() && n < max_events) {
        auto fn = std::move(list_.front());
        list_.pop_front();
        self.charge(costs_.tw_run, sym);
        ++stats_.items_run;
        ++n;
        fn();
      }
      ran += n;
      if (list_.empty()) {
        head_nr_ = 0;
        break;
      }
      if (n >= min_left) {
        if (taskrun_flag_) sq_taskrun_ = true;  // left for later: tell a peeking loop
        break;
      }
      min_left -= n;
    }
    ctx.tw_end();
    return ran;
  }

 private:
  // IO_CQ_WAKE_INIT: nobody waits; IO_CQ_WAKE_FORCE: an add that must wake (io_uring.h).
  static constexpr unsigned kWakeInit = std::numeric_limits<unsigned>::max();
  static constexpr unsigned kWakeForce = kWakeInit >> 1;
  const UringCosts& costs_;
  bool taskrun_flag_;
  sim::AtomicLine head_;
  std::deque<std::function<void()>> list_;
  unsigned head_nr_ = 0;
  unsigned nr_wait_ = kWakeInit;
};

}  // namespace

std::unique_ptr<TaskWorkDelivery> make_tw_delivery(const RingSetup& setup, const UringCosts& costs) {
  if (setup.tw_mode() == TwMode::Defer) return std::make_unique<LocalListDelivery>(costs, setup.taskrun_flag);
  return std::make_unique<TaskListDelivery>(setup.tw_mode(), setup.taskrun_flag);
}

}  // namespace uringsim::models
