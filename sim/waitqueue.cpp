#include "sim/waitqueue.hpp"

#include <algorithm>

#include "sim/engine.hpp"
#include "sim/sched.hpp"

namespace uringsim::sim {

WaitQueue::WaitQueue(std::string name) : name_(std::move(name)) {
  if (Engine* e = Engine::get_if(); e && name_ != kDefaultName) {
    e->register_waitqueue(this);
    registered_ = true;
  }
}

WaitQueue::~WaitQueue() {
  if (Engine* e = Engine::get_if(); e && registered_) e->unregister_waitqueue(this);
}

// prepare_to_wait: on the queue first, then the caller's pending work, then the sleep. A waker
// that comes while that work runs finds the waiter queued and leaves it a permit; taking the
// queue only after the work would lose that wake-up (the caller checked its condition before).
void WaitQueue::wait(Label path) {
  Thread& self = current();
  waiters_.push_back(&self);
  self.waiting_queue_ = this;
  self.flush();
  sleep_until_woken(path);
  self.waiting_queue_ = nullptr;
}

bool WaitQueue::wait_for_ns(TimeNs timeout, Label path) {
  Thread& self = current();
  waiters_.push_back(&self);
  self.waiting_queue_ = this;
  self.flush();  // as in wait()
  const bool woken = self.park_for_ns(timeout, path);
  self.waiting_queue_ = nullptr;
  // On a timeout nobody dequeued us: leave the queue before anything else can pick us.
  if (!woken) {
    const auto front = waiters_.begin() + static_cast<std::ptrdiff_t>(head_);
    waiters_.erase(std::remove(front, waiters_.end(), &self), waiters_.end());
    if (empty()) reset();
  }
  switch_in_after_sleep();  // a timer expiry wakes the thread like any other wake-up
  return woken;
}

Thread* WaitQueue::pop_front() {
  Thread* t = waiters_[head_++];
  if (empty()) {
    reset();
  } else if (head_ >= 32 && 2 * head_ >= waiters_.size()) {  // drop the consumed front: O(1) amortized
    waiters_.erase(waiters_.begin(), waiters_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  return t;
}

bool WaitQueue::wake_one(Wake how) {
  if (empty()) return false;
  wake_up_process(*pop_front(), how);
  return true;
}

std::size_t WaitQueue::wake_all(Wake how) {
  std::size_t n = 0;
  while (wake_one(how)) ++n;
  return n;
}

bool WaitQueue::wake(Thread& t) {
  auto it = std::find(waiters_.begin() + static_cast<std::ptrdiff_t>(head_), waiters_.end(), &t);
  if (it == waiters_.end()) return false;
  waiters_.erase(it);
  if (empty()) reset();
  wake_up_process(t);
  return true;
}

}  // namespace uringsim::sim
