#include "models/uring/multishot.hpp"

#include "models/io/file.hpp"
#include "models/uring/buf_ring.hpp"
#include "models/uring/issue.hpp"
#include "models/uring/ring_internal.hpp"
#include "sim/checks.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
// Receives in a row from one socket that still has data before the request yields to others
// (MULTISHOT_MAX_RETRY in io_uring/net.c, 6.8).
constexpr int kMaxRetry = 32;

sim::Label sym_select() {
  static const sim::Label l = sim::intern("io_ring_buffer_select");
  return l;
}
sim::Label path_poll_issue() {
  static const sim::Label l = sim::intern("io_apoll_task_func -> io_recv (multishot)");
  return l;
}
}  // namespace

MultishotRecv::MultishotRecv(IssuePaths& paths, const UringCosts& costs, CqRing& cq, sim::Mutex& uring_lock,
                             UringStats& stats)
    : paths_(paths), c_(costs), cq_(cq), uring_lock_(uring_lock), stats_(stats) {}

bool MultishotRecv::issue(Request& req, sim::Label path) {
  switch (recv(req, false, path)) {
    case Recv::Again:
    case Recv::Requeue:  // from here the kernel returns -EAGAIN either way: the poll is armed
      return true;
    case Recv::Done:
      break;
  }
  end(req);
  return false;
}

void MultishotRecv::arm(Request& req) {
  ++stats_.poll_armed;
  ring::to_stage(req, Stage::PollWait);
  trace_step(req, 't', "multishot poll armed");
  req.mshot_armed = true;
  req.poll_refs = 0;
  req.file->add_poll(req);
  if (req.file->poll_ready(req)) {  // __io_poll_execute: the task_work receives what is there
    ++stats_.poll_ready_at_arm;
    own(req);
    paths_.queue_poll_task(req);
  }
}

void MultishotRecv::poll_task(Request& req) {
  // io_poll_check_events: answer every wake-up counted so far; those that come while this runs
  // make it look again before it lets the poll go.
  for (;;) {
    const int seen = req.poll_refs;
    if (req.file->poll_ready(req)) {  // vfs_poll: the wake-ups may all have been answered already
      switch (recv(req, true, path_poll_issue())) {
        case Recv::Again:
          break;
        case Recv::Requeue:  // IOU_REQUEUE: to the back of the task_work list, still owned
          paths_.queue_poll_task(req);
          return;
        case Recv::Done:  // IOU_STOP_MULTISHOT
          end(req);
          return;
      }
    }
    req.poll_refs -= seen;
    if (req.poll_refs == 0) break;
  }
  ring::to_stage(req, Stage::PollWait);  // still armed: no re-arm, no poll_arm cost
}

MultishotRecv::Recv MultishotRecv::recv(Request& req, bool from_poll, sim::Label path) {
  // The buffer ring is uring_lock's to protect: only the issue paths that hold it select.
  sim::require_held(uring_lock_, path, req.id);
  auto& self = sim::current();
  for (;;) {
    // The buffer is selected before the socket is looked at: an empty ring ends the request
    // whether or not data is waiting.
    self.charge(c_.buf_ring_select, sym_select());
    const auto bid = req.buf_ring->peek();
    if (!bid) {
      ++stats_.buf_ring_empty;
      req.result = kENoBufs;
      req.cqe_flags = 0;
      return Recv::Done;
    }
    if (!req.file->try_issue(req)) return Recv::Again;  // -EAGAIN: the buffer stays in the ring
    if (req.result <= 0) {                              // nothing received: the buffer is not used
      req.cqe_flags = 0;
      return Recv::Done;
    }
    req.buf_ring->commit();
    const bool nonempty = req.file->poll_ready(req);  // msg_inq > 0 after the receive
    const unsigned flags =
        kCqeFBuffer | (unsigned{*bid} << kCqeBufferShift) | (nonempty ? kCqeFSockNonempty : 0);
    if (!cq_.post_aux(req, req.result, flags | kCqeFMore)) {
      req.cqe_flags = flags;  // no room in the CQ: this result is the final CQE's
      return Recv::Done;
    }
    if (!nonempty) return Recv::Again;
    if (req.mshot_loops++ < kMaxRetry) continue;
    req.mshot_loops = 0;
    return from_poll ? Recv::Requeue : Recv::Again;
  }
}

void MultishotRecv::end(Request& req) {
  if (req.mshot_armed) {
    req.file->remove_poll(req);
    req.mshot_armed = false;
  }
  req.poll_refs = 0;
  cq_.complete_deferred(req);
}

}  // namespace uringsim::models
