#include "models/uring/sqpoll.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine.hpp"

#include <limits>

#include "models/uring/ctx.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
struct Syms {
  sim::Label pass = sim::intern("io_sq_thread"), spin = sim::intern("io_sq_thread (idle spin)"),
             poll_spin = sim::intern("io_do_iopoll (spin)");
  sim::Label site = sim::intern("io_sq_thread");
};
const Syms& syms() {
  static const Syms s;
  return s;
}
}  // namespace

SqThread::SqThread(const KernelConfig& k, const UringCosts& costs)
    : k_(k), c_(costs), task_(costs, k), lock_("sqd->lock"), wait_("sqd->wait") {}

void SqThread::start(sim::Engine& engine, const std::string& name, int cpu, bool pinned) {
  sim::ThreadOptions o;
  o.pinned = pinned;
  o.kernel = true;  // never returns to user space
  thread_ = &engine.spawn(
      name, "iou-sqp", cpu, [this] { main(); }, o);
  task_.set_thread(*thread_);
  task_.set_sqpoll();
}

void SqThread::wake() {
  wait_.wake_all();  // wake_up(&sqd->wait): the SQ thread is its only sleeper
}

void SqThread::kick() {
  if (!spinning_) return;
  spinning_ = false;
  thread_->unpark();
}

bool SqThread::has_work() const {
  if (task_.pending()) return true;
  for (const IoRingCtx* c : ctxs_)
    if (c->sq_thread_has_work()) return true;
  return false;
}

bool SqThread::polling() const {
  for (const IoRingCtx* c : ctxs_)
    if (c->iopoll_pending()) return true;
  return false;
}

// When an idle period that starts at `now` ends: sq_thread_idle later, or, counted in jiffies as
// upstream does (timeout = jiffies + idle; stop once time_after(jiffies, timeout)), at the tick
// idle + 1 jiffies after the last tick before `now`.
sim::TimeNs SqThread::idle_deadline(sim::TimeNs now) const {
  if (k_.sq_idle_jiffies == 0) return now + k_.sq_idle_ns;
  const sim::TimeNs tick = sim::Engine::get().scheduler().tick_ns();
  return (std::floor(now / tick + 1e-9) + k_.sq_idle_jiffies + 1) * tick;
}

void SqThread::main() {
  auto& self = sim::current();
  task_.set_kick([this] { kick(); });
  lock_.lock(syms().site);  // held for the whole loop, dropped only to sleep
  sim::TimeNs timeout = idle_deadline(sim::now_ns());
  for (;;) {
    ++stats_.passes;
    self.charge(c_.sq_loop_pass, syms().pass);
    // One ring: no cap. Several: at most submit_cap SQEs per ring per pass, round robin.
    const int cap = ctxs_.size() > 1 ? k_.sq_submit_cap : std::numeric_limits<int>::max();
    bool spin = false;
    for (IoRingCtx* c : ctxs_) spin = c->sq_thread_pass(cap, task_) || spin;
    // io_sq_tw (6.9+): at most tw_cap items per pass, the rest kept for the next pass, and a pass
    // that ran any counts as busy (sqt_spin). Uncapped (io_run_task_work, 5.x eras): as before.
    const std::size_t ran = task_.run_capped(static_cast<std::size_t>(k_.sq_tw_cap));
    stats_.tw_items += ran;
    stats_.tw_max_per_pass = std::max<std::uint64_t>(stats_.tw_max_per_pass, ran);
    if (task_.pending() && ran > 0) ++stats_.tw_capped_passes;
    if (ran > 0 && k_.sq_tw_cap > 0) spin = true;
    const sim::TimeNs now = sim::now_ns();
    if (spin) timeout = idle_deadline(now);
    if (spin || now < timeout) {
      // io_sq_thread: if need_resched(), drop sqd->lock and cond_resched() between passes.
      if (self.resched_deferred()) {
        lock_.unlock();
        self.cond_resched();
        lock_.lock(syms().site);
      }
      // Keep looping. Passes that find nothing are folded into one busy wait, ended by new work
      // (kick) or, when nothing is being polled, by the idle timeout.
      spinning_ = true;
      if (!has_work()) {
        ++stats_.idle_spins;
        const bool poll = polling();
        self.spin_for_ns(poll ? std::numeric_limits<double>::infinity() : timeout - now,
                         poll ? syms().poll_spin : syms().spin);
        // Every folded pass saw polled requests in flight, so each reset the timeout: the idle
        // period starts at the last of them, just before the pass that reaps.
        if (poll) timeout = idle_deadline(sim::now_ns());
      }
      spinning_ = false;
      continue;
    }
    go_to_sleep();
    timeout = idle_deadline(sim::now_ns());
  }
}

void SqThread::go_to_sleep() {
  auto& self = sim::current();
  lock_.unlock();
  // Nothing may yield between setting NEED_WAKEUP, the re-check and queueing on sqd->wait, so the
  // pending work is executed first: a waker then either sees the flag or its SQE is seen here.
  self.flush();
  for (IoRingCtx* c : ctxs_) c->set_need_wakeup(true);
  if (!has_work() && !polling()) {
    ++stats_.sleeps;
    task_.sleeping_on(&wait_);
    wait_.wait();
    task_.sleeping_on(nullptr);
    ++stats_.wakeups;
  }
  lock_.lock(syms().site);
  for (IoRingCtx* c : ctxs_) c->set_need_wakeup(false);
}

}  // namespace uringsim::models
