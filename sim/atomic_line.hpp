#pragma once
// A cache line that threads update with atomic instructions and no lock: the head of a lockless
// list (llist_add's cmpxchg, llist_del_all's xchg), an atomic counter. An update never waits, but
// it is an interaction with the other threads at the caller's date, as an uncontended lock is: it
// happens at the caller's local date when nobody can act first (sim/horizon.hpp), else after its
// pending work. It costs one atomic (spin_lock_fast_cycles: a spinlock's fast path is the same
// locked instruction) plus a cache-line transfer (spin_lock_migrate_cycles) when another CPU
// updated it last.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/label.hpp"

namespace uringsim::sim {

class AtomicLine {
 public:
  explicit AtomicLine(std::string name);
  ~AtomicLine();
  AtomicLine(const AtomicLine&) = delete;
  AtomicLine& operator=(const AtomicLine&) = delete;

  // One atomic read-modify-write by the current thread at code path `site`, its cycles charged
  // to that symbol.
  void update(Label site);

  const std::string& name() const { return name_; }
  struct Counts {
    std::uint64_t updates = 0, bounces = 0;  // bounces: updates that took the line from another CPU
  };
  // Since the window start, per site (in the order sites first updated the line).
  std::vector<std::pair<Label, Counts>> window_sites() const;
  void mark_window_start();

 private:
  std::string name_;
  int last_cpu_ = -1;
  std::vector<std::pair<Label, Counts>> sites_, base_;  // a line has a few sites: a scan is enough
};

}  // namespace uringsim::sim
