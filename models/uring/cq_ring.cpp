#include "models/uring/cq_ring.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "models/uring/ring_internal.hpp"
#include "models/uring/task.hpp"
#include "models/uring/tw_delivery.hpp"
#include "sim/checks.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
// Deferred completions are flushed when the batch array fills (IO_COMPL_BATCH in 5.15).
constexpr std::size_t kComplBatch = 32;
constexpr sim::TimeNs kForever = std::numeric_limits<double>::infinity();
using ring::rsyms;
using ring::syms;
}  // namespace

CqRing::CqRing(const KernelConfig& k, const UringCosts& costs, Task& owner, UringStats& stats)
    : k_(k),
      c_(costs),
      owner_(owner),
      stats_(stats),
      completion_lock_("ctx->completion_lock"),
      cq_wait_("ctx->cq_wait") {}

// io_cq_lock: a lockless CQ (DEFER_TASKRUN: only the submitter posts) takes no completion_lock.
bool CqRing::lockless() const {
  return tw_ && tw_->lockless_cq();
}
void CqRing::cq_lock(sim::Label site) {
  if (!lockless()) completion_lock_.lock(site);
}
void CqRing::cq_unlock() {
  if (!lockless()) completion_lock_.unlock();
}

void CqRing::complete_deferred(Request& req) {
  batch_.push_back(&req);
  if (batch_.size() >= kComplBatch) flush_completions();
}

void CqRing::flush_completions() {
  if (batch_.empty()) return;
  cq_lock(syms().site_flush);
  for (Request* r : batch_) post(*r);
  cq_unlock();
  batch_.clear();
  ev_posted();
}

void CqRing::complete_post(Request& req) {
  if (tw_ && tw_->lockless_cq()) {  // io_req_complete_post: only the submitter posts (not lazy)
    Task& t = req.task ? *req.task : owner_;
    // The task_work completes and frees the request (io_free_batch_list): its header goes then.
    const bool hdr = std::exchange(req.net_hdr, false);
    tw_->add(
        t, *ctx_,
        [this, &req, hdr] {
          if (hdr) sim::current().charge(c_.net_msg_free, syms().kfree);
          complete_deferred(req);
        },
        false);
    return;
  }
  completion_lock_.lock(syms().site_post);
  LatencyBreakdown::lock_wait(req, completion_lock_.last_wait_ns());
  post(req);
  completion_lock_.unlock();
  ev_posted();
}

void CqRing::iowq_release(Request& req) {
  // With a lockless CQ the completion itself went through task_work, which frees the request.
  if (!k_.iowq_free_via_tw || !tw_ || tw_->lockless_cq()) return;
  Task& t = req.task ? *req.task : owner_;
  // io_free_req: io_req_task_complete, CQE skipped; not a lazy add (it wakes a waiting submitter).
  // The header's kfree is decided now: the request may be reused before this task_work runs.
  const bool hdr = std::exchange(req.net_hdr, false);
  tw_->add(
      t, *ctx_,
      [this, hdr] {
        if (hdr) sim::current().charge(c_.net_msg_free, syms().kfree);
      },
      false);
}

void CqRing::free_net_hdr(Request& req) {
  if (std::exchange(req.net_hdr, false)) sim::current().charge(c_.net_msg_free, syms().kfree);
}

void CqRing::post(Request& req) {
  if (req.clock.stage == Stage::CqWait)
    sim::report_violation("cqe_twice", syms().path_post, req.id, "a second CQE for the same request");
  sim::current().charge(c_.cqe_post, syms().post);
  ++stats_.cqes_posted;
  ring::to_stage(req, Stage::CqWait);
  trace_step(req, 'f', "CQE");
  const Cqe cqe{req.user_data, req.result, req.cqe_flags, &req};
  // A full CQ never loses a completion: it waits on the overflow list, in order.
  if (!overflow_.empty() || cq_.size() >= static_cast<std::size_t>(k_.cq_entries)) {
    ++stats_.cq_overflowed;
    overflow_.push_back(cqe);
  } else {
    cq_.push_back(cqe);
  }
}

bool CqRing::post_aux(Request& req, int result, unsigned flags) {
  static const sim::Label site = sim::intern("io_req_post_cqe");
  // Completions deferred before this CQE are posted first, so that the CQ keeps their order.
  flush_completions();
  cq_lock(site);
  if (!lockless()) LatencyBreakdown::lock_wait(req, completion_lock_.last_wait_ns());
  // io_fill_cqe_aux: it never goes on the overflow list, nor past CQEs already waiting there.
  const bool fits = overflow_.empty() && cq_.size() < static_cast<std::size_t>(k_.cq_entries);
  if (fits) {
    sim::current().charge(c_.cqe_post, syms().post);
    ++stats_.multishot_cqes;
    trace_step(req, 't', "CQE (F_MORE)");
    cq_.push_back({req.user_data, result, flags, &req});
  }
  cq_unlock();
  if (fits) ev_posted();
  return fits;
}

void CqRing::flush_overflow() {
  if (overflow_.empty()) return;
  cq_lock(syms().site_overflow);
  while (!overflow_.empty() && cq_.size() < static_cast<std::size_t>(k_.cq_entries)) {
    cq_.push_back(overflow_.front());
    overflow_.pop_front();
  }
  cq_unlock();
}

bool CqRing::pop(Cqe& out) {
  if (cq_.empty()) return false;
  out = cq_.front();
  cq_.pop_front();
  return true;
}

void CqRing::ev_posted() {
  if (spinner_) {  // user space spinning on the CQ tail sees it
    sim::Thread* t = spinner_;
    spinner_ = nullptr;
    t->unpark();
  }
  if (should_wake() && !cq_wait_.empty()) cq_wait_.wake_all();
}

bool CqRing::should_wake() const {
  // The waiter is woken only once enough CQEs are there, counting those on the overflow list.
  return wait_nr_ > 0 && static_cast<int>(cq_.size() + overflow_.size()) >= wait_nr_;
}

bool CqRing::wait_done(int min_complete) const {
  if (static_cast<int>(cq_.size()) >= min_complete) return true;
  // Completions are stuck in the overflow list behind a full CQ: the kernel returns -EBUSY
  // instead of waiting for events that cannot be posted until the application reaps.
  return !overflow_.empty();
}

void CqRing::wait(int min_complete) {
  // io_cqring_wait. DEFER_TASKRUN: the ring's own task_work runs here only, first up to
  // max(IO_LOCAL_TW_DEFAULT_MAX, min_complete) items, after each wake-up up to what is still
  // missing; the submitter sleeps with that count published (cq_wait_nr), so that lazy adds
  // wake it only once they can satisfy it.
  constexpr int kLocalTwDefaultMax = 20;  // IO_LOCAL_TW_DEFAULT_MAX (6.13)
  int nr_wait = 0;
  for (bool first = true;; first = false) {
    if (tw_ && tw_->local_pending()) {
      if (first)
        tw_->run_local(*ctx_, min_complete, std::max(kLocalTwDefaultMax, min_complete));
      else
        tw_->run_local(*ctx_, nr_wait, nr_wait);
    }
    owner_.run();
    flush_overflow();
    if (wait_done(min_complete)) break;
    nr_wait = std::max(1, min_complete - static_cast<int>(cq_.size()));
    const bool local = tw_ && tw_->mode() == TwMode::Defer;
    if (local) {
      tw_->set_waiting(nr_wait);
      if (tw_->local_pending()) {  // io_cqring_wait_schedule: work came meanwhile, run it
        tw_->set_waiting(0);
        continue;
      }
    } else {
      wait_nr_ = min_complete;
    }
    owner_.sleeping_on(&cq_wait_);  // a task_work add wakes the sleep too (TWA_SIGNAL)
    cq_wait_.wait();
    owner_.sleeping_on(nullptr);
    wait_nr_ = 0;
    if (local) tw_->set_waiting(0);
  }
}

void CqRing::spin(std::size_t min) {
  auto& self = sim::current();
  while (cq_.size() < min) {
    if (owner_.pending()) {  // TIF_NOTIFY_SIGNAL: into the kernel to run it, then back
      owner_.exit_to_user();
      continue;
    }
    spinner_ = &self;
    owner_.set_kick([this, &self] {
      if (spinner_ != &self) return;
      spinner_ = nullptr;
      self.unpark();
    });
    self.spin_for_ns(kForever, rsyms().user_spin);
    spinner_ = nullptr;
    owner_.set_kick(nullptr);
  }
}

}  // namespace uringsim::models
