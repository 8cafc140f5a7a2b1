#include "host/quiet.hpp"

#include "host/proc_stats.hpp"
#include "host/speed_probe.hpp"

namespace uringsim::host {

nlohmann::json QuietOutcome::to_json() const {
  return {{"waited_s", waited_s},
          {"other_cpu_pct", other_cpu_pct >= 0 ? nlohmann::json(other_cpu_pct) : nlohmann::json(nullptr)},
          {"quiet", quiet},
          {"samples", samples},
          {"ns_per_add", ns_per_add >= 0 ? nlohmann::json(ns_per_add) : nlohmann::json(nullptr)},
          {"max_ns_per_add", max_ns_per_add > 0 ? nlohmann::json(max_ns_per_add) : nlohmann::json(nullptr)}};
}

QuietOutcome wait_for_quiet(double max_wait_s, double max_other_cpu_pct, const RunGuard& guard,
                            double max_ns_per_add) {
  using Clock = RunGuard::Clock;
  constexpr auto kSample = std::chrono::milliseconds(200);
  QuietOutcome q;
  q.max_ns_per_add = max_ns_per_add;
  if (max_wait_s <= 0) return q;
  const auto start = Clock::now();
  const auto give_up =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(max_wait_s));
  do {
    const auto t0 = Clock::now();
    const std::int64_t busy0 = machine_busy_ns(), self0 = process_cpu_ns();
    if (!guard.sleep_until(t0 + kSample)) break;
    const std::int64_t busy1 = machine_busy_ns(), self1 = process_cpu_ns();
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    const double other_ns = static_cast<double>((busy1 - busy0) - (self1 - self0));
    q.other_cpu_pct = std::max(0.0, 100.0 * other_ns / (secs * 1e9));
    ++q.samples;
    q.quiet = q.other_cpu_pct < max_other_cpu_pct;
    if (q.quiet && max_ns_per_add > 0) {  // quiet around us: is the CPU itself at speed?
      q.ns_per_add = probe_cpu_speed().ns_per_add;
      q.quiet = q.ns_per_add <= max_ns_per_add;
    }
  } while (!q.quiet && Clock::now() < give_up);
  q.waited_s = std::chrono::duration<double>(Clock::now() - start).count();
  return q;
}

}  // namespace uringsim::host
