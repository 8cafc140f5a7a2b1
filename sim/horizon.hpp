#pragma once
// The earliest date at which each simulated thread could next act on shared state, and their
// minimum: the engine's lookahead. A thread blocked in SimGrid until date t (a sleep, a timed wait,
// a slice of CPU work) cannot act before t unless another thread releases it, which sets its date
// to the release's; one parked without a timeout has none of its own (+inf); the running thread has
// +inf too, since nobody else runs meanwhile. A thread whose pending work ends before every other
// thread's date may take or release an uncontended lock at that local time without advancing
// SimGrid's clock: no other thread can observe the difference (sim/lock.cpp).
//
// An indexed binary min-heap: each update O(log n), the minimum O(1).
#include <limits>
#include <vector>

#include "sim/types.hpp"

namespace uringsim::sim {

class Horizons {
 public:
  static constexpr TimeNs kNever = std::numeric_limits<TimeNs>::infinity();

  // A new member, known by the index returned.
  int add(TimeNs t) {
    const int id = static_cast<int>(key_.size());
    key_.push_back(t);
    pos_.push_back(static_cast<int>(heap_.size()));
    heap_.push_back(id);
    up(pos_[static_cast<std::size_t>(id)]);
    return id;
  }
  void set(int id, TimeNs t) {
    auto& k = key_[static_cast<std::size_t>(id)];
    if (k == t) return;
    const bool earlier = t < k;
    k = t;
    const int p = pos_[static_cast<std::size_t>(id)];
    earlier ? up(p) : down(p);
  }
  TimeNs get(int id) const { return key_[static_cast<std::size_t>(id)]; }
  TimeNs min() const { return heap_.empty() ? kNever : key_[static_cast<std::size_t>(heap_.front())]; }
  // The member with the minimum over every member but `id` (the asking thread: its own date does
  // not bound it); -1 if there is none.
  int argmin_excluding(int id) const {
    const int n = static_cast<int>(heap_.size());
    if (n == 0) return -1;
    if (heap_.front() != id) return heap_.front();
    if (n == 1) return -1;
    return heap_[n > 2 && at(2) < at(1) ? 2 : 1];
  }
  TimeNs min_excluding(int id) const {
    const int m = argmin_excluding(id);
    return m < 0 ? kNever : key_[static_cast<std::size_t>(m)];
  }

 private:
  TimeNs at(int p) const { return key_[static_cast<std::size_t>(heap_[static_cast<std::size_t>(p)])]; }
  void swap_at(int a, int b) {
    std::swap(heap_[static_cast<std::size_t>(a)], heap_[static_cast<std::size_t>(b)]);
    pos_[static_cast<std::size_t>(heap_[static_cast<std::size_t>(a)])] = a;
    pos_[static_cast<std::size_t>(heap_[static_cast<std::size_t>(b)])] = b;
  }
  void up(int p) {
    while (p > 0) {
      const int parent = (p - 1) / 2;
      if (!(at(p) < at(parent))) return;
      swap_at(p, parent);
      p = parent;
    }
  }
  void down(int p) {
    const int n = static_cast<int>(heap_.size());
    for (;;) {
      int best = p;
      const int l = 2 * p + 1, r = l + 1;
      if (l < n && at(l) < at(best)) best = l;
      if (r < n && at(r) < at(best)) best = r;
      if (best == p) return;
      swap_at(p, best);
      p = best;
    }
  }

  std::vector<TimeNs> key_;
  std::vector<int> pos_;   // member -> heap slot
  std::vector<int> heap_;  // heap slot -> member
};

}  // namespace uringsim::sim
