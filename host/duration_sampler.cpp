#include "host/duration_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace uringsim::host {
namespace {
double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
}
}  // namespace

DurationSampler::DurationSampler(const nlohmann::json& spec) {
  const std::string kind = spec.at("kind").get<std::string>();
  if (kind == "constant") {
    a_ = spec.at("value_us").get<double>() * 1e3;
  } else if (kind == "exponential") {
    kind_ = Kind::Exponential;
    a_ = spec.at("mean_us").get<double>() * 1e3;
  } else if (kind == "lognormal") {
    kind_ = Kind::Lognormal;
    a_ = spec.at("mean_us").get<double>() * 1e3;
    b_ = spec.at("sigma").get<double>();
  } else if (kind == "empirical") {
    kind_ = Kind::Empirical;
    for (const auto& p : spec.at("points_us"))
      cdf_.emplace_back(p.at(0).get<double>() * 1e3, p.at(1).get<double>());
  } else {
    throw std::logic_error("unknown distribution kind " + kind);
  }
}

double DurationSampler::sample_ns(std::mt19937_64& rng) const {
  switch (kind_) {
    case Kind::Constant:
      return a_;
    case Kind::Exponential:
      return -a_ * std::log1p(-uniform01(rng));
    case Kind::Lognormal: {
      // mean = exp(mu + sigma^2 / 2); a standard normal by Box-Muller.
      const double mu = std::log(a_) - b_ * b_ / 2;
      const double u1 = 1.0 - uniform01(rng), u2 = uniform01(rng);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
      return std::exp(mu + b_ * z);
    }
    case Kind::Empirical: {
      // Inverse CDF, linear between points; below the first point, the first value.
      const double u = uniform01(rng);
      const auto it =
          std::lower_bound(cdf_.begin(), cdf_.end(), u, [](const auto& p, double v) { return p.second < v; });
      if (it == cdf_.begin()) return it->first;
      if (it == cdf_.end()) return cdf_.back().first;
      const auto& lo = *(it - 1);
      return lo.first + (u - lo.second) / (it->second - lo.second) * (it->first - lo.first);
    }
  }
  return 0;
}

double DurationSampler::mean_ns() const {
  if (kind_ != Kind::Empirical) return a_;
  double m = cdf_.front().first * cdf_.front().second;
  for (std::size_t i = 1; i < cdf_.size(); ++i)
    m += 0.5 * (cdf_[i - 1].first + cdf_[i].first) * (cdf_[i].second - cdf_[i - 1].second);
  return m;
}

}  // namespace uringsim::host
