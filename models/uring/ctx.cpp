#include "models/uring/ctx.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/uring/file.hpp"
#include "models/uring/iowq.hpp"
#include "models/uring/ring_internal.hpp"
#include "models/uring/sqpoll.hpp"
#include "sim/checks.hpp"
#include "sim/engine.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
using ring::rsyms;
using ring::syms;
using ring::to_stage;
}  // namespace

IoRingCtx::IoRingCtx(const KernelConfig& k, const UringCosts& costs, Task& owner, IoWq& wq)
    : k_(k),
      c_(costs),
      owner_(owner),
      wq_(wq),
      uring_lock_("ctx->uring_lock"),
      cq_(k_, costs, owner, stats_),
      iopoll_(costs, cq_, uring_lock_, stats_) {
  static std::uint32_t rings_built = 0;  // one simulation per process
  ring_no_ = rings_built++;
}

IoRingCtx::~IoRingCtx() = default;

Request& IoRingCtx::new_request() {
  Request* r;
  if (free_.empty()) {
    pool_.push_back(std::make_unique<Request>());
    r = pool_.back().get();
  } else {
    r = free_.back();
    free_.pop_back();
  }
  *r = Request{};
  r->alive = true;
  r->id = next_id_++;
  r->ctx = this;
  LatencyBreakdown::start(*r, sim::current().local_now_ns());
  return *r;
}

void IoRingCtx::release(Request& req) {
  req.alive = false;
  free_.push_back(&req);
}

int IoRingCtx::enter(std::vector<Request*>& sqes, int min_complete) {
  auto& self = sim::current();
  self.charge(c_.syscall, syms().enter);
  if (k_.tw_on_enter) owner_.run();
  cq_.flush_overflow();
  const std::size_t n = std::min<std::size_t>(sqes.size(), static_cast<std::size_t>(k_.sq_entries));
  if (n > 0) {
    uring_lock_.lock(syms().site_enter);
    for (std::size_t i = 0; i < n; ++i) {
      Request& req = *sqes[i];
      self.charge(c_.sqe_submit, syms().submit);
      if (!req.fixed_file) self.charge(c_.file_lookup, syms().fget);
      ++stats_.sqes_submitted;
      to_stage(req, Stage::Issue);
      trace_step(req, 's', op_name(req.op));
      queue_sqe(req);
    }
    cq_.flush_completions();
    uring_lock_.unlock();
    sqes.erase(sqes.begin(), sqes.begin() + static_cast<std::ptrdiff_t>(n));
  }
  if (min_complete > 0) cq_.wait(min_complete);
  owner_.run();  // task_work runs again on the way back to user space
  return static_cast<int>(n);
}

bool IoRingCtx::pop_cqe(Cqe& out) {
  if (!cq_.pop(out)) return false;
  const auto& e = sim::Engine::get();
  breakdown_->finish(*out.req, sim::current().local_now_ns(), e.window_start_ns(), e.window_end_ns());
  return true;
}

void IoRingCtx::queue_sqe(Request& req) {
  if (req.force_async) {
    queue_async_work(req);  // IOSQE_ASYNC: no inline attempt
    return;
  }
  issue_inline(req);
}

void IoRingCtx::issue_inline(Request& req) {
  if (req.file->issue_async(req)) {     // -EIOCBQUEUED: the drive has it
    to_stage(req, Stage::NetOrDevice);  // for polled I/O, until a poller reaps it
    if (iopoll_.enabled()) iopoll_.add(req);
    return;
  }
  if (issue_nonblock(req, kIssueNonblock | kIssueCompleteDefer,
                     owner_in_tw_ ? syms().path_tw_issue : syms().path_issue)) {
    ++stats_.inline_completed;
    cq_.complete_deferred(req);
    return;
  }
  if (!req.file->pollable()) {
    ++stats_.punt_non_pollable;
    queue_async_work(req);
    return;
  }
  switch (arm_poll(req)) {
    case Apoll::Ok:
      return;
    case Apoll::Ready:
      if (k_.apoll_ready == ApollReady::Inline)
        issue_inline(req);  // 5.15: goto issue_sqe
      else {
        to_stage(req, Stage::TaskWorkDelay);
        owner_.add(this, [this, &req] { poll_task_func(req); });  // 5.16+: io_req_task_queue
      }
      return;
    case Apoll::Aborted:
      queue_async_work(req);
      return;
  }
}

void IoRingCtx::queue_async_work(Request& req) {
  sim::current().charge(c_.iowq_prep, syms().prep);
  req.wq_concurrent = req.force_async;
  req.wq_unbound = req.file->pollable();  // sockets and pipes: unbound_nonreg_file
  const std::uint32_t h = req.file->hash_key(req.op);
  req.wq_hashed = h != 0;
  req.wq_hash = h;
  ++stats_.punted;
  to_stage(req, Stage::IoWqQueue);
  trace_step(req, 't', "punt to io-wq");
  wq_.enqueue(req);
}

IoRingCtx::Apoll IoRingCtx::arm_poll(Request& req) {
  // 5.15 refuses to poll a request twice (REQ_F_POLLED): a spurious wake-up punts it to io-wq.
  if (k_.poll_once && req.polled) return Apoll::Aborted;
  sim::current().charge(c_.poll_arm, syms().arm);
  req.polled = true;
  if (req.file->poll_ready(req)) {
    ++stats_.poll_ready_at_arm;
    return Apoll::Ready;
  }
  ++stats_.poll_armed;
  to_stage(req, Stage::PollWait);
  trace_step(req, 't', "poll armed");
  req.file->add_poll(req);
  return Apoll::Ok;
}

void IoRingCtx::poll_wake(Request& req) {
  sim::current().charge(c_.poll_wake, syms().wake);
  ++stats_.poll_woken;
  to_stage(req, Stage::TaskWorkDelay);
  owner_.add(this, [this, &req] { poll_task_func(req); });
}

void IoRingCtx::poll_task_func(Request& req) {
  // Runs in the owner's task_work with uring_lock held: a fresh non-blocking issue.
  const Task& t = req.task ? *req.task : owner_;
  if (&sim::current() != &t.thread())
    sim::report_violation("wrong_context", syms().path_tw_issue, req.id,
                          "task_work of " + t.thread().name() + " run by another thread");
  to_stage(req, Stage::Issue);
  if (req.force_async && k_.forced_reissue_iowq) {  // io_req_task_submit -> io_queue_iowq
    trace_step(req, 't', "task_work: back to io-wq");
    ++stats_.reissued_to_iowq;
    queue_async_work(req);
    return;
  }
  trace_step(req, 't', "task_work re-issue");
  issue_inline(req);
}

void IoRingCtx::tw_begin() {
  if (!owner_in_tw_) {
    uring_lock_.lock(syms().site_tw);
    owner_in_tw_ = true;
  }
}

void IoRingCtx::tw_end() {
  if (owner_in_tw_) {
    cq_.flush_completions();
    owner_in_tw_ = false;
    uring_lock_.unlock();
  }
}

void IoRingCtx::io_wq_submit_work(Request& req, BlockHooks& worker) {
  // Hybrid (5.16+): a forced-async request on a pollable file is first tried without blocking;
  // on -EAGAIN the worker arms poll and is free; task_work re-issues the request later.
  // HybridV1 (the first posting, seed 004) issues with NONBLOCK alone, which in its era also says
  // "uring_lock is held" — and the worker does not hold it.
  const bool hybrid = k_.async_mode == AsyncMode::Hybrid || k_.async_mode == AsyncMode::HybridV1;
  if (hybrid && req.force_async && req.file->pollable()) {
    const unsigned flags =
        k_.async_mode == AsyncMode::HybridV1 ? kIssueNonblock : (kIssueNonblock | kIssueUnlocked);
    if (issue_nonblock(req, flags, syms().path_wq_issue)) {
      ++stats_.iowq_completed;
      cq_.complete_post(req);
      return;
    }
    switch (arm_poll(req)) {
      case Apoll::Ok:
        return;
      case Apoll::Ready:
      case Apoll::Aborted:
        break;  // fall back to a blocking issue
    }
  }
  const bool had_data = req.file->poll_ready(req);
  if (!had_data) ++stats_.worker_blocked;
  // A blocking issue may sleep: never under a spinlock, and never holding uring_lock (the
  // submitter would stall behind a worker asleep in a recv).
  sim::require_may_sleep(syms().path_wq_block, req.id);
  sim::require_not_held(uring_lock_, syms().path_wq_block, req.id);
  req.file->issue_blocking(req, &worker);
  ++stats_.iowq_completed;
  cq_.complete_post(req);
}

void IoRingCtx::io_wq_cancel(Request& req) {
  // io_run_cancel -> io_req_task_queue_fail: the failure is posted from the owner's task_work.
  ++stats_.iowq_cancelled;
  to_stage(req, Stage::TaskWorkDelay);
  trace_step(req, 't', "cancelled in io-wq");
  owner_.add(this, [this, &req] {
    req.result = kECanceled;
    cq_.complete_deferred(req);
  });
}

bool IoRingCtx::issue_nonblock(Request& req, unsigned flags, sim::Label path) {
  // The op's code trusts the flags: if they say uring_lock is held, it touches ring state that
  // uring_lock protects (provided buffers, the deferred-completion batch) without taking it.
  if (claims_uring_lock(flags)) sim::require_held(uring_lock_, path, req.id);
  return req.file->try_issue(req);
}

void IoRingCtx::final_checks() const {
  std::uint64_t owned = 0;
  for (const auto& r : pool_)
    if (r->alive && r->clock.stage != Stage::SqWait && r->clock.stage != Stage::CqWait) ++owned;
  if (owned != stats_.sqes_submitted - stats_.cqes_posted) {
    sim::Violation v;
    v.t_ns = sim::Engine::get().clock_ns();
    v.kind = "cqe_lost";
    v.thread = "-";
    v.path = sim::label_name(syms().path_end);
    v.message = "submitted " + std::to_string(stats_.sqes_submitted) + ", CQEs posted " +
                std::to_string(stats_.cqes_posted) + ", but " + std::to_string(owned) +
                " requests are still owned by a kernel path";
    sim::Engine::get().checks().add(std::move(v));
  }
}

}  // namespace uringsim::models

// --- SQ-ring paths: SQPOLL, IOPOLL, the deputy (docs/models/sqpoll.md) ---
namespace uringsim::models {

void IoRingCtx::sq_push(Request& req) {
  // The SQE becomes visible at the application's own time, not at the clock of its pending work.
  sim::current().flush();
  sq_ring_.push_back(&req);
  if (sqd_) sqd_->kick();
}

int IoRingCtx::submit_sqes(int nr, Task& submitter) {
  auto& self = sim::current();
  int n = 0;
  while (n < nr && !sq_ring_.empty() && n < k_.sq_entries) {
    Request& req = *sq_ring_.front();
    sq_ring_.pop_front();
    self.charge(c_.sqe_submit, syms().submit);
    if (!req.fixed_file) self.charge(c_.file_lookup, syms().fget);
    req.task = &submitter;
    ++stats_.sqes_submitted;
    to_stage(req, Stage::Issue);
    trace_step(req, 's', op_name(req.op));
    queue_sqe(req);
    ++n;
  }
  cq_.flush_completions();
  return n;
}

int IoRingCtx::enter_ring(int to_submit, int min_complete, unsigned flags) {
  auto& self = sim::current();
  self.charge(c_.syscall, syms().enter);
  if (k_.tw_on_enter) owner_.run();
  cq_.flush_overflow();
  int ret = 0;
  if (sqpoll_) {
    if ((flags & kEnterSqWakeup) && sqd_) {
      ++stats_.sq_wakeup_enters;
      sqd_->wake();
      // Seed 001 (never merged): the waker submits a few SQEs itself, after the wake, unless the
      // ring polls for completions.
      if (k_.sq_deputy && (!iopoll() || k_.sq_deputy_under_iopoll) && to_submit > 0) {
        ++stats_.deputy_calls;
        uring_lock_.lock(rsyms().site_deputy);
        const int n = submit_sqes(std::min(to_submit, k_.sq_submit_cap), owner_);
        stats_.deputy_submitted += static_cast<std::uint64_t>(n);
        uring_lock_.unlock();
      }
    }
    ret = to_submit;  // SQPOLL: io_uring_enter returns to_submit
  } else if (to_submit > 0) {
    uring_lock_.lock(syms().site_enter);
    ret = submit_sqes(to_submit, owner_);
    uring_lock_.unlock();
  }
  if ((flags & kEnterGetEvents) && min_complete > 0) {
    if (iopoll() && !sqpoll_)
      iopoll_.check(min_complete);
    else
      cq_.wait(min_complete);
  }
  owner_.run();
  return ret;
}

void IoRingCtx::iopoll_device_done(Request& req) {
  (void)req;
  if (sqd_)
    sqd_->kick();  // the SQ thread is the poller
  else
    iopoll_.device_done();
}

void IoRingCtx::rw_complete_irq(Request& req) {
  sim::current().charge(c_.rw_complete, rsyms().complete);
  ++stats_.irq_completions;
  to_stage(req, Stage::TaskWorkDelay);
  Task* t = req.task ? req.task : &owner_;
  t->add(this, [this, &req] { cq_.complete_deferred(req); });
}

bool IoRingCtx::sq_thread_pass(int cap, Task& sq_task) {
  const int to_submit =
      static_cast<int>(std::min<std::size_t>(sq_ring_.size(), static_cast<std::size_t>(cap)));
  if (to_submit == 0 && !iopoll_.pending()) return false;
  uring_lock_.lock(rsyms().site_sq);
  if (iopoll_.pending()) iopoll_.reap();
  int n = 0;
  if (to_submit > 0) n = submit_sqes(to_submit, sq_task);
  stats_.sq_thread_submitted += static_cast<std::uint64_t>(n);
  uring_lock_.unlock();
  return n > 0 || iopoll_.pending();
}

nlohmann::json IoRingCtx::to_json() const {
  const auto& s = stats_;
  return {{"sqes_submitted", s.sqes_submitted},
          {"cqes_posted", s.cqes_posted},
          {"in_flight_at_end", in_flight()},
          {"cq_overflowed", s.cq_overflowed},
          {"overflow_at_end", overflow_len()},
          {"inline_completed", s.inline_completed},
          {"poll_armed", s.poll_armed},
          {"poll_ready_at_arm", s.poll_ready_at_arm},
          {"poll_woken", s.poll_woken},
          {"punted", s.punted},
          {"reissued_to_iowq", s.reissued_to_iowq},
          {"iowq_completed", s.iowq_completed},
          {"worker_blocking_issues", s.worker_blocked},
          {"iowq_cancelled", s.iowq_cancelled},
          {"task_work_items", owner_.items_run()}};
}

}  // namespace uringsim::models
