#pragma once
// How often a busy CPU stalls, and for how long: time its running thread does not run though
// nothing else is scheduled there (the timer tick's handler, and on a VM the host taking the vCPU
// away). The calling thread reads CLOCK_MONOTONIC in a loop; each gap over 1 us between two
// readings is a stall. Measured by `calibrate` on each CPU (machine.stall_every_ns, stall_ns);
// bench/cpu_gaps.c is the same loop as a stand-alone program.
namespace uringsim::host {

struct StallProbe {
  double seconds = 0;     // spun for
  long stalls = 0;        // gaps over 1 us
  double stalled_ns = 0;  // their sum
  double every_ns() const { return stalls > 0 ? seconds * 1e9 / static_cast<double>(stalls) : 0; }
  double mean_ns() const { return stalls > 0 ? stalled_ns / static_cast<double>(stalls) : 0; }
};

// Spins on the calling thread (pin it first) for `seconds`.
StallProbe probe_cpu_stalls(double seconds);

}  // namespace uringsim::host
