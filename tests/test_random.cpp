#include <catch2/catch.hpp>

#include <cmath>

#include "sim/random.hpp"

using uringsim::sim::Rng;

TEST_CASE("random: a stream does not depend on other streams or on draw order elsewhere") {
  Rng a1(42, "client.think"), b(42, "worker.service");
  for (int i = 0; i < 10; ++i) b.next_u64();
  Rng a2(42, "client.think");
  for (int i = 0; i < 100; ++i) REQUIRE(a1.next_u64() == a2.next_u64());
}

TEST_CASE("random: different seeds and different stream names give different numbers") {
  Rng a(1, "x"), b(2, "x"), c(1, "y");
  const auto va = a.next_u64();
  CHECK(va != b.next_u64());
  CHECK(va != c.next_u64());
}

TEST_CASE("random: exponential and lognormal have the requested means") {
  Rng r(7, "moments");
  const int n = 400000;
  double se = 0, sl = 0;
  for (int i = 0; i < n; ++i) {
    se += r.exponential(10.0);
    sl += r.lognormal_mean(10.0, 1.0);
  }
  // Standard errors: 10/sqrt(n) = 0.016 and 10*sqrt(e-1)/sqrt(n) = 0.021; allow 5 sigma.
  CHECK(std::abs(se / n - 10.0) < 0.08);
  CHECK(std::abs(sl / n - 10.0) < 0.11);
}
