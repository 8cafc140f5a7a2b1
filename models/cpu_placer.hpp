#pragma once
// Where a new thread runs: the scheduler's placement reduced to "least-loaded allowed CPU". Threads
// stay on the CPU they were placed on (no migration is modelled).
#include <vector>

namespace uringsim::models {

class CpuPlacer {
 public:
  explicit CpuPlacer(int cores) : load_(cores, 0), allowed_(cores, true) {}
  void reserve(int cpu) { allowed_.at(cpu) = false; }  // e.g. pinned clients
  int pin(int cpu) {
    ++load_.at(cpu);
    return cpu;
  }
  // Least-loaded allowed CPU, lowest index on ties; all CPUs if none is allowed.
  int pick() {
    int best = -1;
    for (int c = 0; c < static_cast<int>(load_.size()); ++c)
      if (allowed_[c] && (best < 0 || load_[c] < load_[best])) best = c;
    if (best < 0) best = 0;
    ++load_[best];
    return best;
  }
  void release(int cpu) { --load_.at(cpu); }

 private:
  std::vector<int> load_;
  std::vector<bool> allowed_;
};

}  // namespace uringsim::models
