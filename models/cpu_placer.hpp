#pragma once
// Where a new thread starts (the fork placement, find_idlest_cpu): the least-loaded CPU. From
// there the scheduler (sim/cpu_sched.hpp) moves unpinned threads as they wake.
#include <vector>

namespace uringsim::models {

class CpuPlacer {
 public:
  explicit CpuPlacer(int cores) : load_(cores, 0) {}
  int pin(int cpu) {
    ++load_.at(cpu);
    return cpu;
  }
  // Least-loaded CPU, lowest index on ties.
  int pick() {
    int best = 0;
    for (int c = 1; c < static_cast<int>(load_.size()); ++c)
      if (load_[c] < load_[best]) best = c;
    ++load_[best];
    return best;
  }
  void release(int cpu) { --load_.at(cpu); }

 private:
  std::vector<int> load_;
};

}  // namespace uringsim::models
