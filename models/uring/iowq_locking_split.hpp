#pragma once
// io-wq locking from 5.18 (seed 003, "io-wq acct->lock split"): each account's work list and
// hashing under its own acct->lock; wqe->lock keeps the free list, counts and creation. The sleep
// hook takes no wqe->lock: io_wqe_dec_running peeks at the work list under acct->lock. From 6.6
// (`rcu_wake`) the enqueue looks for a free worker under RCU, without wq->lock.
#include <array>

#include "models/uring/iowq_locking.hpp"

namespace uringsim::models {

class IoWqLockingSplit final : public IoWqLocking {
 public:
  explicit IoWqLockingSplit(bool rcu_wake) : rcu_wake_(rcu_wake) {}
  sim::SpinLock& list_lock(int acct) override { return acct_[acct]; }
  sim::SpinLock& workers_lock(int) override { return wqe_; }
  bool sleep_hook_holds_workers_lock() const override { return false; }
  bool wake_under_workers_lock() const override { return !rcu_wake_; }

 private:
  // wqe->lock first: locks register with the engine, and get their lock-order ids, as they are made.
  sim::SpinLock wqe_{"wqe->lock"};
  std::array<sim::SpinLock, 2> acct_{sim::SpinLock("acct->lock[bound]"),
                                     sim::SpinLock("acct->lock[unbound]")};
  bool rcu_wake_;
};

}  // namespace uringsim::models
