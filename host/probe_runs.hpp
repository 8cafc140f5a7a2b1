#pragma once
// The probes' shared shape (host/speed_probe.hpp, host/syscall_probe.hpp): a short timed loop run
// a few times, summarised by its median (robust to one run disturbed by an interrupt) and spread.
#include <algorithm>
#include <vector>

namespace uringsim::host {

struct ProbeRuns {
  double median = 0, min = 0, max = 0;
  int runs = 0;
};

// Calls `one_run` (returning one run's figure) `runs` times, with runs >= 1.
template <class OneRun>
ProbeRuns repeat_probe(int runs, OneRun one_run) {
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(runs));
  for (int k = 0; k < runs; ++k) v.push_back(one_run());
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back(), runs};
}

}  // namespace uringsim::host
