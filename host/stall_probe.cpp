#include "host/stall_probe.hpp"

#include <time.h>

namespace uringsim::host {
namespace {

double now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

}  // namespace

StallProbe probe_cpu_stalls(double seconds) {
  StallProbe p;
  p.seconds = seconds;
  const double start = now_ns(), end = start + seconds * 1e9;
  double prev = start;
  // A clock read takes tens of ns: a gap over 1 us is time this thread did not run.
  constexpr double kGapNs = 1000;
  while (prev < end) {
    const double t = now_ns();
    if (t - prev > kGapNs) {
      ++p.stalls;
      p.stalled_ns += t - prev;
    }
    prev = t;
  }
  return p;
}

}  // namespace uringsim::host
