#include "sim/random.hpp"

#include <cmath>

namespace uringsim::sim {
namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}
std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

Rng::Rng(std::uint64_t seed, std::string_view stream) {
  std::uint64_t x = seed ^ rotl(fnv1a(stream), 17);
  for (auto& s : s_) s = splitmix64(x);
}

// xoshiro256** (Blackman & Vigna).
std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() {
  return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53;
}

double Rng::exponential(double mean) {
  return -mean * std::log(uniform01());
}

double Rng::normal() {
  const double u1 = uniform01(), u2 = uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double Rng::lognormal_mean(double mean, double sigma) {
  // E[exp(mu + sigma Z)] = exp(mu + sigma^2/2) = mean
  const double mu = std::log(mean) - 0.5 * sigma * sigma;
  return std::exp(mu + sigma * normal());
}

std::uint64_t Rng::below(std::uint64_t n) {
  return n ? next_u64() % n : 0;
}

}  // namespace uringsim::sim
