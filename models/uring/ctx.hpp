#pragma once
// One io_uring instance (struct io_ring_ctx), the facade workloads, devices and tests call. It
// holds uring_lock, the request pool and the counters, and the ring's pieces: the CQ ring
// (cq_ring.hpp), submission (submit.hpp), the issue paths (issue.hpp, with the poll re-issue rule
// of poll_reissue.hpp) and IOPOLL (iopoll.hpp). It runs io_uring_enter and the SQ thread's pass.
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/uring/breakdown.hpp"
#include "models/uring/buf_ring.hpp"
#include "models/uring/cq_ring.hpp"
#include "models/uring/iopoll.hpp"
#include "models/uring/issue.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/request.hpp"
#include "models/uring/ring_setup.hpp"
#include "models/uring/submit.hpp"
#include "models/uring/task.hpp"
#include "models/uring/tw_delivery.hpp"
#include "models/uring/uring_stats.hpp"
#include "sim/lock.hpp"

namespace uringsim::models {

class IoWq;
class BlockHooks;
class SqThread;

// io_uring_enter flags (the ones modelled).
constexpr unsigned kEnterGetEvents = 1u << 0;  // IORING_ENTER_GETEVENTS
constexpr unsigned kEnterSqWakeup = 1u << 1;   // IORING_ENTER_SQ_WAKEUP

class IoRingCtx {
 public:
  // `setup`: the application's setup flags (who runs the ring's task_work, and when).
  IoRingCtx(const KernelConfig& k, const UringCosts& costs, Task& owner, IoWq& wq,
            const RingSetup& setup = RingSetup{});
  ~IoRingCtx();

  // --- application side (the owner task's thread) ---
  Request& new_request();  // a fresh request; the application fills it and submits it
  void release(Request& req);
  // io_uring_enter(to_submit, min_complete, GETEVENTS): submits up to sq_entries of `sqes`
  // (removing them from the vector) and waits for min_complete CQEs. Returns the number submitted.
  int enter(std::vector<Request*>& sqes, int min_complete);
  bool pop_cqe(Cqe& out);  // user space: read the next CQE (advances the CQ head)
  std::size_t cq_ready() const { return cq_.ready(); }
  // IORING_REGISTER_PBUF_RING: a provided buffer ring of `entries` buffers (a power of two), empty
  // until user space gives it buffers. Multishot recvs select from it (Request::buf_ring).
  BufRing& register_buf_ring(int entries);

  // --- rings whose SQEs user space writes into the SQ ring (SQPOLL and/or IOPOLL set up) ---
  void setup(bool sqpoll, bool iopoll) {
    sqpoll_ = sqpoll;
    iopoll_.set_enabled(iopoll);
  }
  // IORING_SETUP_HYBRID_IOPOLL: the polling task sleeps before it spins (iopoll_wait.hpp).
  void set_hybrid_iopoll(bool on) { iopoll_.set_wait(make_iopoll_wait(on)); }
  const IopollWait& iopoll_wait() const { return iopoll_.wait(); }
  void attach_sq_thread(SqThread* sqd) { sqd_ = sqd; }
  bool sqpoll() const { return sqpoll_; }
  bool iopoll() const { return iopoll_.enabled(); }
  // User space: write an SQE and publish the SQ tail (a spinning SQ thread notices it).
  void sq_push(Request& req);
  std::size_t sq_pending() const { return submit_.sq_pending(); }
  // IORING_SQ_NEED_WAKEUP in sq_flags, as user space reads it after a full barrier.
  bool sq_need_wakeup() const { return need_wakeup_; }
  // io_uring_enter(to_submit, min_complete, flags) on such a ring: SQPOLL rings only wake the
  // SQ thread (and, with the deputy, submit); others submit from the SQ ring; GETEVENTS polls on
  // IOPOLL rings without SQPOLL, else waits for CQEs. Returns the count io_uring_enter returns.
  int enter_ring(int to_submit, int min_complete, unsigned flags);
  // User space busy-waits until `min` CQEs are ready (fio's reap loop on SQPOLL rings never
  // enters the kernel); task_work signalled to the task runs on the way back to user space.
  void spin_for_cqes(std::size_t min) { cq_.spin(min); }

  // --- the SQ thread (io_sq_thread) ---
  // __io_sq_thread: reap polled completions, submit up to `cap` SQEs for `sq_task`. True if it
  // submitted or polled requests are in flight (the thread keeps spinning).
  bool sq_thread_pass(int cap, Task& sq_task);
  bool sq_thread_has_work() const { return submit_.sq_pending() > 0 || iopoll_.any_done(); }
  bool iopoll_pending() const { return iopoll_.pending(); }
  void set_need_wakeup(bool on) { need_wakeup_ = on; }

  // --- the drive's completions ---
  void iopoll_device_done(Request& req);  // a polled command is done (drive context): tell the poller
  void rw_complete_irq(Request& req) { issue_.rw_complete_irq(req); }  // interrupt context

  // --- kernel paths used by other components ---
  void poll_wake(Request& req) { issue_.poll_wake(req); }  // a file's wake callback (waker's context)
  void io_wq_submit_work(Request& req, BlockHooks& worker) { issue_.io_wq_submit_work(req, worker); }
  void io_wq_cancel(Request& req) { issue_.io_wq_cancel(req); }  // fail it with -ECANCELED
  void tw_begin() { issue_.tw_begin(); }  // task_work batch on this ring: take uring_lock
  void tw_end() {                         // flush deferred completions, unlock
    issue_.tw_end();
    tw_->ran();
  }
  // Where the ring's request task_work goes (tw_delivery.hpp), as its setup flags say.
  TaskWorkDelivery& tw() { return *tw_; }
  const TaskWorkDelivery& tw() const { return *tw_; }
  const RingSetup& ring_setup() const { return setup_; }

  const UringStats& stats() const { return stats_; }
  // A request's id on the timeline: request ids count per ring, flows need one id per request of
  // the run. Rings are numbered in the order they are built (deterministic).
  std::uint64_t trace_id(const Request& r) const { return (std::uint64_t{ring_no_} << 40) | r.id; }
  nlohmann::json to_json() const;  // the "uring" section of results.json
  const LatencyBreakdown& breakdown() const { return *breakdown_; }
  // Report this ring's requests into `other`'s breakdown (fio's numjobs rings, reported as one
  // group): one stream in completion order, so the p99 tail is that of all of them.
  void share_breakdown_of(const IoRingCtx& other) { breakdown_ = other.breakdown_; }
  // Requests submitted whose final CQE is not posted: a multishot recv counts one until it ends.
  std::uint64_t in_flight() const { return stats_.sqes_submitted - stats_.cqes_posted; }
  std::size_t overflow_len() const { return cq_.overflow_len(); }
  Task& owner() { return owner_; }
  const KernelConfig& kernel() const { return k_; }

  // End of run: every submitted request is either completed or still owned by a kernel path.
  void final_checks() const;

 private:
  KernelConfig k_;
  const UringCosts& c_;
  Task& owner_;
  RingSetup setup_;
  std::unique_ptr<TaskWorkDelivery> tw_;
  sim::Mutex uring_lock_;  // built before the CQ ring's completion_lock: locks register in order
  UringStats stats_;
  CqRing cq_;
  Iopoll iopoll_;
  IssuePaths issue_;
  Submitter submit_;
  std::vector<std::unique_ptr<Request>> pool_;
  std::vector<std::unique_ptr<BufRing>> buf_rings_;
  std::vector<Request*> free_;
  std::uint64_t next_id_ = 1;
  std::uint32_t ring_no_ = 0;
  LatencyBreakdown own_breakdown_;
  LatencyBreakdown* breakdown_ = &own_breakdown_;
  bool sqpoll_ = false, need_wakeup_ = false;
  SqThread* sqd_ = nullptr;
};

}  // namespace uringsim::models
