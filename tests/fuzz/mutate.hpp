#pragma once
// Deterministic mutations for the fuzz driver: the same seed gives the same inputs on every
// machine (splitmix64 and plain modulo, no std:: distribution, whose output is not specified).
#include <cstdint>
#include <string>
#include <vector>

namespace uringsim::fuzz {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next();
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  bool chance(unsigned percent) { return below(100) < percent; }

 private:
  std::uint64_t s_;
};

// What the text is, so the mutations can aim at its tokens.
enum class Syntax { Json, FioJob, Line };

// One to four stacked mutations of `input`; `others` are the target's other seeds, for splicing.
std::string mutate(const std::string& input, Syntax syntax, const std::vector<std::string>& others, Rng& rng);

}  // namespace uringsim::fuzz
