#include "host/kick_probe.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/calibrate_bench.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host {
namespace {
constexpr int kWarmup = 10, kSamples = 30;
}  // namespace

nlohmann::json KickProbe::to_json() const {
  return {{"delivery_ns", delivery_ns},
          {"min_ns", min_ns},
          {"max_ns", max_ns},
          {"send_extra_ns", send_extra_ns},
          {"samples", samples}};
}

nlohmann::json kick_probe_json(const std::optional<KickProbe>& p) {
  return p ? p->to_json() : nlohmann::json();
}

std::optional<KickProbe> probe_kick(const RunGuard& guard) {
  const std::vector<int> cpus = calib::allowed_cpus();
  if (cpus.size() < 2) return std::nullopt;
  const calib::Bench b{guard, false, cpus[0], cpus[1], 0, {}};
  calib::KickRound r;
  std::string unavailable;
  try {
    calib::run_pinned(b, b.cpu_a, [&] {
      calib::kick_round(b, kWarmup, unavailable);
      if (unavailable.empty()) r = calib::kick_round(b, kSamples, unavailable);
    });
  } catch (const std::exception&) {
    if (guard.stop_requested()) return std::nullopt;
    throw;
  }
  if (!unavailable.empty() || r.onset.empty()) return std::nullopt;
  std::vector<double> delivery, extra;
  for (std::size_t i = 0; i < r.onset.size(); ++i) {
    delivery.push_back(r.onset[i] - r.send_plain[i]);
    extra.push_back(r.send_kick[i] - r.send_plain[i]);
  }
  const auto [lo, hi] = std::minmax_element(delivery.begin(), delivery.end());
  return KickProbe{calib::median(delivery), *lo, *hi, calib::median(extra),
                   static_cast<int>(delivery.size())};
}

}  // namespace uringsim::host
