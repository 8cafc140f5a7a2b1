#pragma once
// What the pieces of a ring (ctx, CQ ring, submission, issue paths, IOPOLL) share internally: the
// profile symbols and lock sites they charge and lock at, and moving a request between stages.
// The labels stay in the two tables they were in before the ring was split, each interned whole
// on first use: label ids follow interning order, and the CPU profile sums in id order.
#include "models/uring/breakdown.hpp"
#include "models/uring/request.hpp"
#include "sim/label.hpp"
#include "sim/thread.hpp"

namespace uringsim::models::ring {

// The submission, issue and completion paths.
struct Syms {
  sim::Label enter = sim::intern("io_uring_enter"), submit = sim::intern("io_submit_sqes"),
             fget = sim::intern("fget"), arm = sim::intern("io_arm_poll_handler"),
             wake = sim::intern("io_async_wake"), prep = sim::intern("io_prep_async_work"),
             post = sim::intern("io_fill_cqe"), app = sim::intern("[app] event loop"),
             kmalloc = sim::intern("__kmalloc_noprof"), kfree = sim::intern("kfree");
  sim::Label site_enter = sim::intern("io_uring_enter"),
             site_flush = sim::intern("io_submit_flush_completions"),
             site_post = sim::intern("io_req_complete_post"), site_tw = sim::intern("tctx_task_work"),
             site_overflow = sim::intern("io_cqring_overflow_flush");
  // Code paths named in the design-review checks.
  sim::Label path_issue = sim::intern("io_submit_sqes -> io_issue_sqe"),
             path_tw_issue = sim::intern("io_poll_task_func -> io_issue_sqe"),
             path_wq_issue = sim::intern("io_wq_submit_work -> io_issue_sqe"),
             path_wq_block = sim::intern("io_wq_submit_work (blocking issue)"),
             path_post = sim::intern("io_fill_cqe"), path_end = sim::intern("end of run");
};
const Syms& syms();

// The SQ-ring paths: SQPOLL, IOPOLL, the deputy.
struct RingSyms {
  sim::Label iopoll = sim::intern("io_do_iopoll"), iopoll_spin = sim::intern("io_iopoll_check (spin)"),
             user_spin = sim::intern("[app] reap spin (CQ)"), complete = sim::intern("io_complete_rw"),
             sq_push = sim::intern("[app] io_uring SQ write");
  sim::Label site_deputy = sim::intern("io_uring_enter (SQ deputy)"), site_sq = sim::intern("io_sq_thread"),
             site_iopoll = sim::intern("io_iopoll_check");
};
const RingSyms& rsyms();

// Moves a request to another stage of its latency breakdown at the caller's local time.
inline void to_stage(Request& req, Stage s) {
  LatencyBreakdown::move(req, s, sim::current().local_now_ns());
}

}  // namespace uringsim::models::ring
