#pragma once
// A kernel wait queue: threads sleep on it; wake_one / wake_all wake them in FIFO order.
#include <deque>

#include "sim/thread.hpp"

namespace uringsim::sim {

class WaitQueue {
 public:
  void wait();                       // current thread sleeps until woken
  bool wait_for_ns(TimeNs timeout);  // false on timeout
  bool wake_one();                   // false if nobody was waiting
  std::size_t wake_all();
  bool wake(Thread& t);  // wake this waiter only (a signal to one task); false if it was not waiting
  std::size_t waiters() const { return waiters_.size(); }
  bool empty() const { return waiters_.empty(); }

 private:
  std::deque<Thread*> waiters_;
};

}  // namespace uringsim::sim
