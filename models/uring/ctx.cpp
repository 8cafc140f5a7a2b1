#include "models/uring/ctx.hpp"

#include <algorithm>

#include "models/io/file.hpp"
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
}  // namespace

IoRingCtx::IoRingCtx(const KernelConfig& k, const UringCosts& costs, Task& owner, IoWq& wq,
                     const RingSetup& setup)
    : k_(k),
      c_(costs),
      owner_(owner),
      setup_(setup),
      tw_(make_tw_delivery(setup, costs)),
      uring_lock_("ctx->uring_lock"),
      cq_(k_, costs, owner, stats_),
      iopoll_(costs, cq_, uring_lock_, stats_),
      issue_(*this, k_, costs, owner, wq, uring_lock_, cq_, iopoll_, stats_),
      submit_(k_, costs, issue_, cq_, stats_) {
  cq_.attach(*this, *tw_);
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
  const sim::Syscall sys;
  sim::current().charge(c_.syscall, syms().enter);
  if (k_.tw_on_enter) owner_.run();
  cq_.flush_overflow();
  int n = 0;
  if (!sqes.empty()) {
    uring_lock_.lock(syms().site_enter);
    std::size_t next = 0;
    n = submit_.submit_sqes(static_cast<int>(sqes.size()), owner_,
                            [&]() -> Request* { return next < sqes.size() ? sqes[next++] : nullptr; });
    uring_lock_.unlock();
    sqes.erase(sqes.begin(), sqes.begin() + n);
  }
  if (min_complete > 0) cq_.wait(min_complete);
  owner_.exit_to_user();  // task_work runs again on the way back to user space
  return n;
}

bool IoRingCtx::pop_cqe(Cqe& out) {
  if (!cq_.pop(out)) return false;
  if (out.flags & kCqeFMore) return true;  // the request goes on: its stages end at its final CQE
  const auto& e = sim::Engine::get();
  breakdown_->finish(*out.req, sim::current().local_now_ns(), e.window_start_ns(), e.window_end_ns());
  return true;
}

BufRing& IoRingCtx::register_buf_ring(int entries) {
  buf_rings_.push_back(std::make_unique<BufRing>(entries));
  return *buf_rings_.back();
}

void IoRingCtx::sq_push(Request& req) {
  submit_.sq_push(req);
  if (sqd_) sqd_->kick();
}

int IoRingCtx::enter_ring(int to_submit, int min_complete, unsigned flags) {
  const sim::Syscall sys;
  sim::current().charge(c_.syscall, syms().enter);
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
        const int n = submit_.submit_from_sq_ring(std::min(to_submit, k_.sq_submit_cap), owner_);
        stats_.deputy_submitted += static_cast<std::uint64_t>(n);
        uring_lock_.unlock();
      }
    }
    ret = to_submit;  // SQPOLL: io_uring_enter returns to_submit
  } else if (to_submit > 0) {
    uring_lock_.lock(syms().site_enter);
    ret = submit_.submit_from_sq_ring(to_submit, owner_);
    uring_lock_.unlock();
  }
  if ((flags & kEnterGetEvents) && min_complete > 0) {
    if (iopoll() && !sqpoll_)
      iopoll_.check(min_complete);
    else
      cq_.wait(min_complete);
  }
  owner_.exit_to_user();
  return ret;
}

void IoRingCtx::iopoll_device_done(Request& req) {
  (void)req;
  if (sqd_)
    sqd_->kick();  // the SQ thread is the poller
  else
    iopoll_.device_done();
}

bool IoRingCtx::sq_thread_pass(int cap, Task& sq_task) {
  const int to_submit =
      static_cast<int>(std::min<std::size_t>(submit_.sq_pending(), static_cast<std::size_t>(cap)));
  if (to_submit == 0 && !iopoll_.pending()) return false;
  uring_lock_.lock(rsyms().site_sq);
  if (iopoll_.pending()) iopoll_.reap();
  int n = 0;
  if (to_submit > 0) n = submit_.submit_from_sq_ring(to_submit, sq_task);
  stats_.sq_thread_submitted += static_cast<std::uint64_t>(n);
  uring_lock_.unlock();
  return n > 0 || iopoll_.pending();
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

nlohmann::json IoRingCtx::to_json() const {
  const auto& s = stats_;
  nlohmann::json j = {{"sqes_submitted", s.sqes_submitted},
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
                      {"task_work_items", owner_.items_run() + tw_->stats().items_run},
                      {"task_work",
                       {{"delivery", tw_mode_name(tw_->mode())},
                        {"runs", owner_.runs() + tw_->stats().runs},
                        {"ipis", owner_.ipis()},
                        {"local_items", tw_->stats().items_run},
                        {"waiter_wakeups", tw_->stats().wakeups},
                        {"lazy_wakeups_skipped", tw_->stats().lazy_skipped}}}};
  if (!buf_rings_.empty()) {  // only rings with a provided buffer ring (multishot recv) report these
    j["multishot_cqes"] = s.multishot_cqes;
    j["buf_ring_empty"] = s.buf_ring_empty;
  }
  return j;
}

}  // namespace uringsim::models
