#pragma once
// A kernel wait queue: threads sleep on it; wake_one / wake_all wake them in FIFO order.
#include <cstddef>
#include <string>
#include <vector>

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
  bool wake_one(Wake how = Wake::Normal);                   // false if nobody was waiting
  std::size_t wake_all(Wake how = Wake::Normal);
  bool wake(Thread& t);  // wake this waiter only (a signal to one task); false if it was not waiting
  std::size_t waiters() const { return waiters_.size() - head_; }
  bool empty() const { return head_ == waiters_.size(); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  bool registered_ = false;
  // The waiters in FIFO order: waiters_[head_..]. A vector and the index of its front, so that a
  // queue nobody has waited on allocates nothing (every socket has one; a std::deque allocated
  // 576 bytes, 57 MB for 100 000 connections).
  std::vector<Thread*> waiters_;
  std::size_t head_ = 0;
  Thread* pop_front();
  void reset() {  // empty: start again at the front of the vector, keeping its capacity
    waiters_.clear();
    head_ = 0;
  }
};

}  // namespace uringsim::sim
