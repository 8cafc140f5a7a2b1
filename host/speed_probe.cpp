#include "host/speed_probe.hpp"

#include <chrono>
#include <cstdint>

#include "host/probe_runs.hpp"

namespace uringsim::host {
namespace {

constexpr int kRuns = 7;
constexpr std::uint64_t kAdds = 1u << 20;

double one_run_ns_per_add() {
  using Clock = std::chrono::steady_clock;
  // volatile: each add waits for the previous one's store, so the chain cannot be vectorised or
  // folded; its speed is the core's.
  volatile std::uint64_t x = 0;
  const auto t0 = Clock::now();
  for (std::uint64_t i = 0; i < kAdds; ++i) x = x + i;
  const auto t1 = Clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(kAdds);
}

}  // namespace

nlohmann::json SpeedProbe::to_json() const {
  return {{"ns_per_add", ns_per_add},
          {"min_ns_per_add", min_ns_per_add},
          {"max_ns_per_add", max_ns_per_add},
          {"runs", runs}};
}

SpeedProbe probe_cpu_speed() {
  const ProbeRuns r = repeat_probe(kRuns, one_run_ns_per_add);
  return {r.median, r.min, r.max, r.runs};
}

}  // namespace uringsim::host
