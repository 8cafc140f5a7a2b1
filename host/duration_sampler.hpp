#pragma once
// Drawing durations from a scenario distribution (schema.json definitions/distribution) on the
// host: the echo clients' think time. host/ does not use models/ (that is the simulator's), and
// the host is not deterministic anyway, so this uses the standard library's generator.
#include <random>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace uringsim::host {

class DurationSampler {
 public:
  // spec: a validated distribution; std::logic_error for an unknown kind (the schema rejects it).
  explicit DurationSampler(const nlohmann::json& spec);
  double sample_ns(std::mt19937_64& rng) const;
  double mean_ns() const;

 private:
  enum class Kind { Constant, Exponential, Lognormal, Empirical };
  Kind kind_ = Kind::Constant;
  double a_ = 0, b_ = 0;                        // value or mean (ns); lognormal sigma
  std::vector<std::pair<double, double>> cdf_;  // (value_ns, cumulative probability)
};

}  // namespace uringsim::host
