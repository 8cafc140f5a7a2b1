#pragma once
// io-wq locking from 6.15 (Max Kellermann, "io_uring/io-wq: move worker lists to struct
// io_wq_acct", 751eedc4b4b7): each account keeps its own free list and list of all workers under
// its own acct->workers_lock; wq->lock is gone. The work list stays under acct->lock, the sleep
// hook peeks at it under acct->lock, and the enqueue finds a free worker under RCU alone (6.6).
#include <array>

#include "models/uring/iowq_locking.hpp"

namespace uringsim::models {

class IoWqLockingWorkers final : public IoWqLocking {
 public:
  sim::SpinLock& list_lock(int acct) override { return acct_[acct]; }
  sim::SpinLock& workers_lock(int acct) override { return workers_[acct]; }
  bool sleep_hook_holds_workers_lock() const override { return false; }
  bool wake_under_workers_lock() const override { return false; }

 private:
  // io_wq_create initialises each account's workers_lock before its lock.
  std::array<sim::SpinLock, 2> workers_{sim::SpinLock("acct->workers_lock[bound]"),
                                        sim::SpinLock("acct->workers_lock[unbound]")};
  std::array<sim::SpinLock, 2> acct_{sim::SpinLock("acct->lock[bound]"),
                                     sim::SpinLock("acct->lock[unbound]")};
};

}  // namespace uringsim::models
