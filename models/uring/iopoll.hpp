#pragma once
// IOPOLL (IORING_SETUP_IOPOLL): requests the drive has taken (-EIOCBQUEUED) wait on the ring's
// iopoll list; nothing completes them until a poller reaps the list (io_do_iopoll): the SQ thread,
// or the task in io_uring_enter(GETEVENTS), which spins until the drive is done (io_iopoll_check);
// how that task waits (classic or hybrid polling) is an IopollWait (iopoll_wait.hpp).
#include <memory>
#include <vector>

#include "models/uring/cq_ring.hpp"
#include "models/uring/iopoll_wait.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/request.hpp"
#include "models/uring/uring_stats.hpp"
#include "sim/lock.hpp"

namespace uringsim::models {

class Iopoll {
 public:
  Iopoll(const UringCosts& costs, CqRing& cq, sim::Mutex& uring_lock, UringStats& stats);

  void set_enabled(bool on) { enabled_ = on; }  // the ring was set up with IOPOLL
  bool enabled() const { return enabled_; }
  void set_wait(std::unique_ptr<IopollWait> w) { wait_ = std::move(w); }  // HYBRID_IOPOLL or not
  const IopollWait& wait() const { return *wait_; }
  void issuing(Request& req) { wait_->issued(req); }  // io_rw_init_file, before the drive has it
  void add(Request& req) { list_.push_back(&req); }   // issued to the drive, to be polled for
  bool pending() const { return !list_.empty(); }
  bool any_done() const;  // a pass would reap something

  int reap();                    // io_do_iopoll, uring_lock held: completes what the drive has done
  void check(int min_complete);  // io_iopoll_check: GETEVENTS on an IOPOLL ring without SQPOLL
  void device_done();            // the drive completed a polled command: the spinning task sees it

 private:
  const UringCosts& c_;
  CqRing& cq_;
  sim::Mutex& uring_lock_;
  UringStats& stats_;
  bool enabled_ = false;
  std::unique_ptr<IopollWait> wait_ = make_iopoll_wait(false);
  std::vector<Request*> list_;
  sim::Thread* spinner_ = nullptr;  // the task spinning in io_iopoll_check
};

}  // namespace uringsim::models
