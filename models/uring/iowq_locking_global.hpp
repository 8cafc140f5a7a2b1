#pragma once
// io-wq locking up to 5.17: the one raw spinlock wqe->lock guards both accounts' work lists,
// hashing, counts and the free list. io_wq_worker_sleeping holds it around io_wqe_dec_running.
#include "models/uring/iowq_locking.hpp"

namespace uringsim::models {

class IoWqLockingGlobal final : public IoWqLocking {
 public:
  sim::SpinLock& list_lock(int) override { return wqe_; }
  sim::SpinLock& workers_lock(int) override { return wqe_; }
  bool sleep_hook_holds_workers_lock() const override { return true; }
  // One lock: the enqueue wakes a worker in the hold that inserted the work.
  bool wake_under_workers_lock() const override { return true; }

 private:
  sim::SpinLock wqe_{"wqe->lock"};
};

}  // namespace uringsim::models
