#include "host/stall_probe.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>

namespace uringsim::host {
namespace {

double now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// A clock read takes tens of ns: a gap over 1 us is time this thread did not run.
constexpr double kGapNs = 1000;

}  // namespace

void StallProbe::add(double gap_ns) {
  const int bin = static_cast<int>(std::floor(4 * std::log10(gap_ns / kGapNs)));
  const auto i = static_cast<std::size_t>(std::clamp(bin, 0, kBins - 1));
  ++count[i];
  sum_ns[i] += gap_ns;
}

void StallProbe::merge(const StallProbe& other) {
  seconds += other.seconds;
  for (std::size_t i = 0; i < count.size(); ++i) {
    count[i] += other.count[i];
    sum_ns[i] += other.sum_ns[i];
  }
}

long StallProbe::stalls() const {
  long n = 0;
  for (const long c : count) n += c;
  return n;
}

long StallProbe::stalls_over(double ns) const {
  long n = 0;
  for (std::size_t i = 0; i < count.size(); ++i)
    if (kGapNs * std::pow(10.0, static_cast<double>(i) / 4) >= ns * (1 - 1e-9)) n += count[i];
  return n;
}

double StallProbe::stalled_ns() const {
  double s = 0;
  for (const double x : sum_ns) s += x;
  return s;
}

std::vector<std::pair<double, double>> StallProbe::lengths() const {
  std::vector<std::pair<double, double>> out;
  if (seconds <= 0) return out;
  for (std::size_t i = 0; i < count.size(); ++i)
    if (count[i] > 0)
      out.emplace_back(sum_ns[i] / static_cast<double>(count[i]), static_cast<double>(count[i]) / seconds);
  return out;
}

StallProbe probe_cpu_stalls(double seconds) {
  StallProbe p;
  p.seconds = seconds;
  const double start = now_ns(), end = start + seconds * 1e9;
  double prev = start;
  while (prev < end) {
    const double t = now_ns();
    if (t - prev > kGapNs) p.add(t - prev);
    prev = t;
  }
  return p;
}

}  // namespace uringsim::host
