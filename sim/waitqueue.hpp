#pragma once
// A kernel wait queue: threads sleep on it; wake_one / wake_all wake them in FIFO order.
#include <deque>
#include <string>

#include "sim/thread.hpp"

namespace uringsim::sim {

class WaitQueue {
 public:
  static constexpr const char* kDefaultName = "waitqueue";
  // The name appears in the wait-for graph of a deadlock. A queue with a name of its own, created
  // while an engine exists, is also a node of the scenario's topology graph.
  explicit WaitQueue(std::string name = kDefaultName);
  ~WaitQueue();
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;

  // `path`: the sleeping code path, for the checks (sleeping holding a spinlock is a violation).
  void wait(Label path = kNoLabel);                         // current thread sleeps until woken
  bool wait_for_ns(TimeNs timeout, Label path = kNoLabel);  // false on timeout
  bool wake_one();                                          // false if nobody was waiting
  std::size_t wake_all();
  bool wake(Thread& t);  // wake this waiter only (a signal to one task); false if it was not waiting
  std::size_t waiters() const { return waiters_.size(); }
  bool empty() const { return waiters_.empty(); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  bool registered_ = false;
  std::deque<Thread*> waiters_;
};

}  // namespace uringsim::sim
