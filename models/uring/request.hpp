#pragma once
// A request (struct io_kiocb): one SQE's journey through the issue paths to its CQE.
#include <cstdint>

#include "models/io/request.hpp"
#include "models/uring/breakdown.hpp"
#include "sim/types.hpp"

namespace uringsim::models {

class BufRing;
class File;
class IoRingCtx;
class Task;

constexpr int kECanceled = -125;  // -ECANCELED: the result of work cancelled before it ran
constexpr int kENoBufs = -105;    // -ENOBUFS: a buffer select found the provided buffer ring empty
constexpr int kEBadFd = -77;      // -EBADFD: a multishot request on a file that cannot be polled

// Marks a step of the request's path on the timeline, if one is recorded ('s' start, 't' step,
// 'f' finish), at the current thread's local time.
void trace_step(const struct Request& req, char phase, const char* what);

// The file's view (op, bytes, result) is the IoRequest base; its callbacks go to the ring.
struct Request final : IoRequest {
  std::uint64_t id = 0;
  std::uint64_t user_data = 0;
  File* file = nullptr;
  IoRingCtx* ctx = nullptr;
  bool force_async = false;  // IOSQE_ASYNC
  bool fixed_file = true;

  // io-wq work flags (io_prep_async_work)
  bool wq_concurrent = false;  // IO_WQ_WORK_CONCURRENT: from IOSQE_ASYNC
  bool wq_unbound = false;     // IO_WQ_WORK_UNBOUND: sockets, pipes
  bool wq_hashed = false;      // IO_WQ_WORK_HASHED: buffered writes, serialised per file
  std::uint32_t wq_hash = 0;

  bool polled = false;  // REQ_F_POLLED: async poll was armed once
  // A send or recv holding a struct io_async_msghdr (6.x, models/uring/netmsg_cache.hpp) that has
  // not gone back to the ring's cache: it is kfree'd when the request is freed.
  bool net_hdr = false;

  // Multishot receive (IORING_RECV_MULTISHOT with IOSQE_BUFFER_SELECT, docs/models/multishot.md).
  bool multishot = false;       // REQ_F_APOLL_MULTISHOT: one CQE per arrival until it ends
  BufRing* buf_ring = nullptr;  // the provided buffer ring it selects its buffers from
  bool mshot_armed = false;     // its poll is on the file's wait queue, and stays there when it fires
  int poll_refs = 0;            // wake-ups since its task_work was queued (0: no one owns the poll)
  int mshot_loops = 0;          // receives in a row on a socket still holding data (MULTISHOT_MAX_RETRY)
  unsigned cqe_flags = 0;       // the flags of its final CQE (io_req_set_res' cflags)

  StageClock clock;  // where its latency goes (breakdown.hpp)
  // Handed out by new_request() and not yet released (for the end-of-run check). Whether it was
  // submitted or its CQE posted is its stage (clock.stage): past SqWait, at CqWait.
  bool alive = false;
  Task* task = nullptr;      // the submitting task (req->task): where its task_work goes
  bool iopoll_done = false;  // IOPOLL: the drive has completed it; a poller has not reaped it yet
  // HYBRID_IOPOLL: when it was issued (req->iopoll_start), and its one sleep (REQ_F_IOPOLL_STATE).
  sim::TimeNs iopoll_start_ns = 0, iopoll_sleep_ns = 0;
  bool iopoll_slept = false;

  bool hipri() const override;  // the ring is IOPOLL
  void poll_wake() override;    // io_async_wake: task_work for the owner
  bool poll_multishot() const override { return multishot && mshot_armed; }
  void async_done() override;  // io_complete_rw_iopoll (IOPOLL rings) or io_complete_rw
};

}  // namespace uringsim::models
