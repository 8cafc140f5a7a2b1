#pragma once
// Where a scenario's threads start, and a thread created outside the scheduler's view: the CPU
// with the fewest threads. Threads created while the simulation runs start where the scheduler
// puts them (CpuScheduler::fork_target); from there it moves unpinned threads as they wake.
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
