#pragma once
// How often a busy CPU stalls, and for how long: time its running thread does not run though
// nothing else is scheduled there (the timer tick's handler, and on a VM the host taking the vCPU
// away). The calling thread reads CLOCK_MONOTONIC in a loop; each gap over 1 us between two
// readings is a stall, counted in bins a quarter decade wide. Measured by `calibrate` with every
// CPU spinning at once, as a machine under load runs (machine.stall_lengths): a VM's host takes a
// vCPU away for milliseconds far more often when all of its vCPUs are busy. bench/cpu_gaps.c is
// the same loop as a stand-alone program.
#include <array>
#include <utility>
#include <vector>

namespace uringsim::host {

struct StallProbe {
  static constexpr int kBins = 24;  // 1 us to 1 s, four per decade (the last takes all beyond)
  double seconds = 0;               // spun for (summed over the probes merged)
  std::array<long, kBins> count{};
  std::array<double, kBins> sum_ns{};

  void add(double gap_ns);
  void merge(const StallProbe& other);
  long stalls() const;
  long stalls_over(double ns) const;  // in bins that start at ns or later
  double stalled_ns() const;
  double every_ns() const { return stalls() > 0 ? seconds * 1e9 / static_cast<double>(stalls()) : 0; }
  double mean_ns() const { return stalls() > 0 ? stalled_ns() / static_cast<double>(stalls()) : 0; }
  // The share of the spinning time lost to stalls, and stalls per second: the sums over lengths().
  double share() const { return seconds > 0 ? stalled_ns() / (seconds * 1e9) : 0; }
  double per_s() const { return seconds > 0 ? static_cast<double>(stalls()) / seconds : 0; }
  // (mean length ns, stalls per second) of each bin that saw one, lengths increasing.
  std::vector<std::pair<double, double>> lengths() const;
};

// Spins on the calling thread (pin it first) for `seconds`.
StallProbe probe_cpu_stalls(double seconds);

}  // namespace uringsim::host
