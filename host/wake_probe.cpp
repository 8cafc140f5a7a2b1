#include "host/wake_probe.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "host/calibrate_bench.hpp"

namespace uringsim::host {
namespace {
constexpr int kSamples = 15;
constexpr double kIdleNs = 100e3;  // as calibrate's wake to an idle CPU (machine.wake_idle_ns)
}  // namespace

nlohmann::json WakeProbe::to_json() const {
  return {{"one_way_ns", one_way_ns}, {"min_ns", min_ns}, {"max_ns", max_ns}, {"samples", samples}};
}

nlohmann::json wake_probe_json(const std::optional<WakeProbe>& p) {
  return p ? p->to_json() : nlohmann::json();
}

std::optional<WakeProbe> probe_idle_wake(const RunGuard& guard) {
  const std::vector<int> cpus = calib::allowed_cpus();
  if (cpus.size() < 2) return std::nullopt;
  const calib::Bench b{guard, false, cpus[0], cpus[1], 0, {}};
  std::vector<double> v;
  try {
    calib::run_pinned(b, b.cpu_a, [&] { v = calib::idle_wake_one_way(b, kSamples, kIdleNs); });
  } catch (const std::exception&) {
    if (guard.stop_requested()) return std::nullopt;
    throw;
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  return WakeProbe{v[v.size() / 2], v.front(), v.back(), static_cast<int>(v.size())};
}

}  // namespace uringsim::host
