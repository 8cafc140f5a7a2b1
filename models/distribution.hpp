#pragma once
// Random durations as scenarios describe them: constant, exponential, log-normal, empirical CDF.
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/random.hpp"
#include "sim/types.hpp"

namespace uringsim::models {

class Distribution {
 public:
  enum class Kind { Constant, Exponential, Lognormal, Empirical };
  static Distribution from_json(const nlohmann::json& spec);  // a validated scenario distribution

  sim::TimeNs sample_ns(sim::Rng& rng) const;
  sim::TimeNs mean_ns() const;
  double second_moment_ns2() const;  // E[X^2], for M/G/1 closed forms
  Kind kind() const { return kind_; }

 private:
  Kind kind_ = Kind::Constant;
  double a_ = 0, b_ = 0;                        // value/mean (ns) and sigma
  std::vector<std::pair<double, double>> cdf_;  // (value_ns, cumulative probability), increasing
};

}  // namespace uringsim::models
