#include "models/uring/issue.hpp"

#include "models/io/file.hpp"
#include "models/uring/ctx.hpp"
#include "models/uring/iowq.hpp"
#include "models/uring/ring_internal.hpp"
#include "models/uring/task.hpp"
#include "sim/checks.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
using ring::rsyms;
using ring::syms;
using ring::to_stage;
}  // namespace

IssuePaths::IssuePaths(IoRingCtx& ctx, const KernelConfig& k, const UringCosts& costs, Task& owner, IoWq& wq,
                       sim::Mutex& uring_lock, CqRing& cq, Iopoll& iopoll, UringStats& stats)
    : ctx_(ctx),
      k_(k),
      c_(costs),
      owner_(owner),
      wq_(wq),
      uring_lock_(uring_lock),
      cq_(cq),
      iopoll_(iopoll),
      stats_(stats),
      reissue_(PollReissue::pick(k, *this)),
      multishot_(*this, costs, cq, uring_lock, stats) {}

IssuePaths::~IssuePaths() = default;

void IssuePaths::queue_sqe(Request& req) {
  if (req.force_async) {
    queue_async_work(req);  // IOSQE_ASYNC: no inline attempt
    return;
  }
  issue_inline(req);
}

void IssuePaths::issue_inline(Request& req) {
  if (iopoll_.enabled()) iopoll_.issuing(req);
  if (req.file->issue_async(req)) {     // -EIOCBQUEUED: the drive has it
    to_stage(req, Stage::NetOrDevice);  // for polled I/O, until a poller reaps it
    if (iopoll_.enabled()) iopoll_.add(req);
    return;
  }
  const sim::Label path = owner_in_tw_ ? syms().path_tw_issue : syms().path_issue;
  if (req.multishot) {
    if (!multishot_.issue(req, path)) return;  // it ended at once (e.g. -ENOBUFS)
  } else if (issue_nonblock(req, kIssueNonblock | kIssueCompleteDefer, path)) {
    ++stats_.inline_completed;
    recycle_net_hdr(req);
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
      reissue_->found_ready(req);
      return;
    case Apoll::Aborted:
      queue_async_work(req);
      return;
  }
}

void IssuePaths::queue_async_work(Request& req) {
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

void IssuePaths::prep_net_hdr(Request& req) {
  if (!k_.net_msg_cache || req.multishot || (req.op != Op::Send && req.op != Op::Recv)) return;
  if (!netmsg_.take()) sim::current().charge(c_.net_msg_alloc, syms().kmalloc);
  req.net_hdr = true;
}

void IssuePaths::recycle_net_hdr(Request& req) {
  if (!req.net_hdr) return;
  if (netmsg_.put())
    req.net_hdr = false;
  else
    cq_.free_net_hdr(req);  // the cache is full: freed with the request, in this context
}

IssuePaths::Apoll IssuePaths::arm_poll(Request& req) {
  // 5.15 refuses to poll a request twice (REQ_F_POLLED): a spurious wake-up punts it to io-wq.
  if (k_.poll_once && req.polled) return Apoll::Aborted;
  sim::current().charge(c_.poll_arm, syms().arm);
  req.polled = true;
  if (req.multishot) {  // without EPOLLONESHOT: armed even if the data is there already
    multishot_.arm(req);
    return Apoll::Ok;
  }
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

void IssuePaths::poll_wake(Request& req) {
  sim::current().charge(c_.poll_wake, syms().wake);
  ++stats_.poll_woken;
  if (req.multishot && !multishot_.own(req)) return;  // its task_work will see this wake-up
  queue_poll_task(req, true);
}

void IssuePaths::queue_poll_task(Request& req, bool lazy) {
  to_stage(req, Stage::TaskWorkDelay);
  ctx_.tw().add(
      owner_, ctx_, [this, &req] { poll_task_func(req); }, lazy);
}

void IssuePaths::poll_task_func(Request& req) {
  // Runs in the owner's task_work with uring_lock held.
  const Task& t = req.task ? *req.task : owner_;
  if (&sim::current() != &t.thread())
    sim::report_violation("wrong_context", syms().path_tw_issue, req.id,
                          "task_work of " + t.thread().name() + " run by another thread");
  to_stage(req, Stage::Issue);
  if (req.mshot_armed) {  // the armed multishot poll's own task_work (io_apoll_task_func)
    multishot_.poll_task(req);
    return;
  }
  reissue_->task_submit(req);
}

void IssuePaths::reissue_inline(Request& req) {
  trace_step(req, 't', "task_work re-issue");
  issue_inline(req);  // a fresh non-blocking issue
}

void IssuePaths::reissue_to_iowq(Request& req) {
  trace_step(req, 't', "task_work: back to io-wq");
  ++stats_.reissued_to_iowq;
  queue_async_work(req);
}

void IssuePaths::tw_begin() {
  if (!owner_in_tw_) {
    uring_lock_.lock(syms().site_tw);
    owner_in_tw_ = true;
  }
}

void IssuePaths::tw_end() {
  if (owner_in_tw_) {
    cq_.flush_completions();
    owner_in_tw_ = false;
    uring_lock_.unlock();
  }
}

void IssuePaths::io_wq_submit_work(Request& req, BlockHooks& worker) {
  // Multishot requests never run in io-wq (their CQEs must be posted by the submitter): the
  // worker only arms the poll, and fails the request if it cannot.
  if (req.multishot) {
    if (!req.file->pollable())
      fail_in_task(req, kEBadFd);
    else if (arm_poll(req) != Apoll::Ok)
      fail_in_task(req, kECanceled);
    return;
  }
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
      cq_.iowq_release(req);
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
  cq_.iowq_release(req);
}

void IssuePaths::io_wq_cancel(Request& req) {
  // io_run_cancel -> io_req_task_queue_fail: the failure is posted from the owner's task_work.
  ++stats_.iowq_cancelled;
  to_stage(req, Stage::TaskWorkDelay);
  trace_step(req, 't', "cancelled in io-wq");
  ctx_.tw().add(
      owner_, ctx_,
      [this, &req] {
        req.result = kECanceled;
        cq_.free_net_hdr(req);
        cq_.complete_deferred(req);
      },
      false);
}

void IssuePaths::fail_in_task(Request& req, int err) {
  to_stage(req, Stage::TaskWorkDelay);
  trace_step(req, 't', "failed in io-wq");
  ctx_.tw().add(
      owner_, ctx_,
      [this, &req, err] {
        req.result = err;
        req.cqe_flags = 0;
        cq_.free_net_hdr(req);
        cq_.complete_deferred(req);
      },
      false);
}

void IssuePaths::rw_complete_irq(Request& req) {
  sim::current().charge(c_.rw_complete, rsyms().complete);
  ++stats_.irq_completions;
  to_stage(req, Stage::TaskWorkDelay);
  Task* t = req.task ? req.task : &owner_;
  // io_complete_rw: __io_req_task_work_add(req, IOU_F_TWQ_LAZY_WAKE).
  ctx_.tw().add(
      *t, ctx_,
      [this, &req] {
        // IOCB_DIO_CALLER_COMP: the file's completion work (kiocb->dio_complete) runs here first.
        static const sim::Label dio_sym = sim::intern("iomap_dio_complete");
        if (req.caller_completion_cycles > 0) sim::current().charge(req.caller_completion_cycles, dio_sym);
        cq_.complete_deferred(req);
      },
      true);
}

bool IssuePaths::issue_nonblock(Request& req, unsigned flags, sim::Label path) {
  // The op's code trusts the flags: if they say uring_lock is held, it touches ring state that
  // uring_lock protects (provided buffers, the deferred-completion batch) without taking it.
  if (claims_uring_lock(flags)) sim::require_held(uring_lock_, path, req.id);
  return req.file->try_issue(req);
}

}  // namespace uringsim::models
