#pragma once
// Multishot receive (IORING_RECV_MULTISHOT with IOSQE_BUFFER_SELECT, 6.0; docs/models/multishot.md):
// one recv request that posts a CQE per arrival, each into a buffer of a provided buffer ring,
// without completing. Its poll is armed once and stays on the socket's wait queue; each wake-up
// queues the poll's task_work, which receives what is there (io_poll_check_events ->
// io_poll_issue -> io_recv) and leaves the poll armed. It ends with a final CQE, without
// IORING_CQE_F_MORE: -ENOBUFS when the ring had no buffer, or the data itself when the CQ had no
// room for another CQE.
#include "models/uring/cq_ring.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/request.hpp"
#include "models/uring/uring_stats.hpp"
#include "sim/label.hpp"
#include "sim/lock.hpp"

namespace uringsim::models {

class IssuePaths;

class MultishotRecv {
 public:
  MultishotRecv(IssuePaths& paths, const UringCosts& costs, CqRing& cq, sim::Mutex& uring_lock,
                UringStats& stats);

  // io_recv from io_queue_sqe or a task_work re-submission (not the poll's own task_work),
  // uring_lock held. True for -EAGAIN: the caller arms the poll. False: the request ended, its
  // completion is deferred.
  bool issue(Request& req, sim::Label path);
  // io_arm_poll_handler without EPOLLONESHOT (poll_arm charged by the caller): the poll goes on
  // the file's wait queue and stays there when it fires. If the file is readable already, it is
  // armed all the same and its task_work is queued at once.
  void arm(Request& req);
  // io_poll_get_ownership in the poll's wake function: true if this wake-up is to queue the
  // task_work; false if the task_work is already queued or running, and will look again.
  bool own(Request& req) { return req.poll_refs++ == 0; }
  // The armed poll's task_work (io_apoll_task_func), uring_lock held.
  void poll_task(Request& req);

 private:
  enum class Recv { Again, Requeue, Done };
  // io_recv's loop: select a buffer, receive, post a CQE with F_MORE; again while the socket
  // still holds data, up to MULTISHOT_MAX_RETRY times.
  Recv recv(Request& req, bool from_poll, sim::Label path);
  void end(Request& req);  // off the wait queue (if armed), then the deferred completion

  IssuePaths& paths_;
  const UringCosts& c_;
  CqRing& cq_;
  sim::Mutex& uring_lock_;
  UringStats& stats_;
};

}  // namespace uringsim::models
