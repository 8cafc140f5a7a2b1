#pragma once
// Deterministic random streams. Each stream is derived from (scenario seed, stream name), so adding
// an actor or a purpose never perturbs the numbers another stream draws. The generator and the
// transforms are our own, so results do not depend on the standard library's distributions.
#include <cstdint>
#include <string_view>

namespace uringsim::sim {

class Rng {
 public:
  Rng(std::uint64_t seed, std::string_view stream);
  std::uint64_t next_u64();
  double uniform01();  // in (0, 1)
  double exponential(double mean);
  double normal();                                   // standard normal (Box-Muller, no caching)
  double lognormal_mean(double mean, double sigma);  // lognormal with this mean and log-sd
  std::uint64_t below(std::uint64_t n);              // uniform in [0, n)

 private:
  std::uint64_t s_[4];
};

}  // namespace uringsim::sim
