#include <cmath>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/queueing.hpp"

using namespace uringsim::analysis;

namespace {

// Textbook Erlang C as a direct sum, in log space (lgamma) so it also works for large c. This is an
// independent path from the library's Erlang B recursion.
double erlang_c_direct(int c, double a) {
  std::vector<double> logs;  // log(a^k / k!) for k < c, then the waiting term
  for (int k = 0; k < c; ++k) logs.push_back(k * std::log(a) - std::lgamma(k + 1.0));
  const double log_wait = c * std::log(a) - std::lgamma(c + 1.0) + std::log(c / (c - a));
  double m = log_wait;
  for (double l : logs) m = std::max(m, l);
  double denom = std::exp(log_wait - m);
  for (double l : logs) denom += std::exp(l - m);
  return std::exp(log_wait - m) / denom;
}

}  // namespace

TEST_CASE("analysis: erlang C for c = 1 and c = 2 by hand") {
  // M/M/1: P(wait) = rho.
  CHECK(erlang_c(1, 0.5) == Approx(0.5));
  CHECK(erlang_c(1, 0.9) == Approx(0.9));
  // c = 2, a = 1: (a^2/2 * 2/(2-1)) / (1 + a + 1) = 1/3.
  CHECK(erlang_c(2, 1.0) == Approx(1.0 / 3.0));
  // c = 2, a = 1.5: top = 1.125 * 4 = 4.5, denominator 1 + 1.5 + 4.5 = 7.
  CHECK(erlang_c(2, 1.5) == Approx(4.5 / 7.0));
  CHECK(erlang_c(3, 0.0) == 0.0);
  CHECK(erlang_c(2, 2.0) == 1.0);  // unstable: everyone waits
  CHECK(erlang_c(2, 5.0) == 1.0);
}

TEST_CASE("analysis: erlang C agrees with the direct sum, including c = 20 and c = 1000") {
  CHECK(erlang_c(20, 16.0) == Approx(erlang_c_direct(20, 16.0)).epsilon(1e-10));
  CHECK(erlang_c(20, 16.0) == Approx(0.25608).epsilon(1e-4));
  for (int c : {1, 2, 3, 5, 8, 16, 64, 100}) {
    for (double rho : {0.1, 0.5, 0.8, 0.95, 0.99}) {
      INFO("c=" << c << " rho=" << rho);
      CHECK(erlang_c(c, rho * c) == Approx(erlang_c_direct(c, rho * c)).epsilon(1e-9));
    }
  }
  // Large c: a^c and c! overflow a double, the recursion must not.
  for (double rho : {0.9, 0.95, 0.99}) {
    const double v = erlang_c(1000, rho * 1000);
    INFO("rho=" << rho << " C=" << v);
    CHECK(std::isfinite(v));
    CHECK(v > 0.0);
    CHECK(v < 1.0);
    CHECK(v == Approx(erlang_c_direct(1000, rho * 1000)).epsilon(1e-8));
  }
  CHECK_THROWS_AS(erlang_c(0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(erlang_c(2, -1.0), std::invalid_argument);
}

TEST_CASE("analysis: M/M/1 and M/M/c closed forms") {
  // M/M/1, rho 0.5: W = 1/(mu - lambda), Wq = rho/(mu - lambda).
  const QueueTheory m1 = mmc(1.0, 2.0, 1);
  CHECK(m1.mean_response == Approx(1.0 / (2.0 - 1.0)));
  CHECK(m1.mean_wait == Approx(0.5 / (2.0 - 1.0)));
  CHECK(m1.p_wait == Approx(0.5));
  CHECK(m1.utilisation == Approx(0.5));

  // M/M/2, lambda = mu = 1: C = 1/3, Wq = C / (c mu - lambda) = 1/3.
  const QueueTheory m2 = mmc(1.0, 1.0, 2);
  CHECK(m2.p_wait == Approx(1.0 / 3.0));
  CHECK(m2.mean_wait == Approx(1.0 / 3.0));
  CHECK(m2.mean_response == Approx(4.0 / 3.0));
  CHECK(m2.utilisation == Approx(0.5));

  // Little's law check on the queue: Lq = lambda Wq = C rho / (1 - rho).
  const QueueTheory m20 = mmc(16.0, 1.0, 20);
  CHECK(16.0 * m20.mean_wait == Approx(m20.p_wait * 0.8 / 0.2));

  CHECK_THROWS_AS(mmc(2.0, 1.0, 2), std::invalid_argument);  // rho = 1
  CHECK_THROWS_AS(mmc(3.0, 1.0, 2), std::invalid_argument);
  CHECK_THROWS_AS(mmc(1.0, 0.0, 2), std::invalid_argument);
  CHECK_THROWS_AS(mmc(1.0, 1.0, 0), std::invalid_argument);
}

TEST_CASE("analysis: M/D/1 and M/G/1 Pollaczek-Khinchine") {
  // M/D/1, rho 0.5, S = 1: Wq = rho S / (2 (1 - rho)) = 0.5.
  const QueueTheory d = md1(0.5, 1.0);
  CHECK(d.mean_wait == Approx(0.5));
  CHECK(d.mean_response == Approx(1.5));
  CHECK(d.p_wait == Approx(0.5));
  CHECK(d.utilisation == Approx(0.5));
  // Deterministic service waits half as long as exponential service at the same load.
  CHECK(d.mean_wait == Approx(mmc(0.5, 1.0, 1).mean_wait / 2.0));

  // M/G/1 with exponential moments (E[S^2] = 2/mu^2) must equal M/M/1.
  const double lambda = 3.0, mu = 4.0;
  const QueueTheory g = mg1(lambda, 1.0 / mu, 2.0 / (mu * mu));
  const QueueTheory m = mmc(lambda, mu, 1);
  CHECK(g.mean_wait == Approx(m.mean_wait));
  CHECK(g.mean_response == Approx(m.mean_response));
  CHECK(g.p_wait == Approx(m.p_wait));

  CHECK_THROWS_AS(md1(1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(mg1(0.5, 1.0, 0.5), std::invalid_argument);  // E[S^2] < E[S]^2
}
