#include "models/distribution.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace uringsim::models {

Distribution Distribution::from_json(const nlohmann::json& spec) {
  Distribution d;
  const std::string kind = spec.at("kind").get<std::string>();
  if (kind == "constant") {
    d.kind_ = Kind::Constant;
    d.a_ = spec.at("value_us").get<double>() * 1e3;
  } else if (kind == "exponential") {
    d.kind_ = Kind::Exponential;
    d.a_ = spec.at("mean_us").get<double>() * 1e3;
  } else if (kind == "lognormal") {
    d.kind_ = Kind::Lognormal;
    d.a_ = spec.at("mean_us").get<double>() * 1e3;
    d.b_ = spec.at("sigma").get<double>();
  } else if (kind == "empirical") {
    d.kind_ = Kind::Empirical;
    for (const auto& p : spec.at("points_us"))
      d.cdf_.emplace_back(p.at(0).get<double>() * 1e3, p.at(1).get<double>());
  } else {
    throw std::logic_error("unknown distribution kind " + kind);  // the schema rejects it earlier
  }
  return d;
}

sim::TimeNs Distribution::sample_ns(sim::Rng& rng) const {
  switch (kind_) {
    case Kind::Constant:
      return a_;
    case Kind::Exponential:
      return rng.exponential(a_);
    case Kind::Lognormal:
      return rng.lognormal_mean(a_, b_);
    case Kind::Empirical: {
      // Inverse CDF, linear between points; below the first point the first value.
      const double u = rng.uniform01();
      auto it =
          std::lower_bound(cdf_.begin(), cdf_.end(), u, [](const auto& p, double v) { return p.second < v; });
      if (it == cdf_.begin()) return it->first;
      if (it == cdf_.end()) return cdf_.back().first;
      const auto& lo = *(it - 1);
      const double f = (u - lo.second) / (it->second - lo.second);
      return lo.first + f * (it->first - lo.first);
    }
  }
  return 0;
}

sim::TimeNs Distribution::mean_ns() const {
  switch (kind_) {
    case Kind::Constant:
    case Kind::Exponential:
    case Kind::Lognormal:
      return a_;
    case Kind::Empirical: {
      double m = cdf_.front().first * cdf_.front().second, prev_v = cdf_.front().first,
             prev_p = cdf_.front().second;
      for (std::size_t i = 1; i < cdf_.size(); ++i) {
        m += 0.5 * (prev_v + cdf_[i].first) * (cdf_[i].second - prev_p);
        prev_v = cdf_[i].first;
        prev_p = cdf_[i].second;
      }
      return m;
    }
  }
  return 0;
}

double Distribution::second_moment_ns2() const {
  switch (kind_) {
    case Kind::Constant:
      return a_ * a_;
    case Kind::Exponential:
      return 2 * a_ * a_;
    case Kind::Lognormal:
      return a_ * a_ * std::exp(b_ * b_);
    case Kind::Empirical: {
      // Uniform within each segment: E[X^2] = (a^2 + ab + b^2) / 3.
      double m = cdf_.front().first * cdf_.front().first * cdf_.front().second;
      for (std::size_t i = 1; i < cdf_.size(); ++i) {
        const double a = cdf_[i - 1].first, b = cdf_[i].first;
        m += (a * a + a * b + b * b) / 3.0 * (cdf_[i].second - cdf_[i - 1].second);
      }
      return m;
    }
  }
  return 0;
}

}  // namespace uringsim::models
