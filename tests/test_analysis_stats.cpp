#include <cmath>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/stats.hpp"

using namespace uringsim::analysis;

TEST_CASE("analysis: student t interval matches a hand computation") {
  const std::vector<double> xs{3, 4, 5, 6, 7};  // mean 5, s^2 = 10/4 = 2.5
  const MeanCI ci = student_t_ci(xs, 0.95);
  CHECK(ci.n == 5);
  CHECK(ci.mean == Approx(5.0));
  // t_{0.975, 4} = 2.776445105
  CHECK(ci.half_width == Approx(2.776445105 * std::sqrt(2.5 / 5)).epsilon(1e-8));
  CHECK(ci.lo == Approx(ci.mean - ci.half_width));
  CHECK(ci.hi == Approx(ci.mean + ci.half_width));
  // Higher confidence, wider interval.
  CHECK(student_t_ci(xs, 0.99).half_width > ci.half_width);
}

TEST_CASE("analysis: student t interval with fewer than two points is unbounded") {
  const MeanCI one = student_t_ci({42.0});
  CHECK(one.mean == 42.0);
  CHECK(std::isinf(one.half_width));
  CHECK(one.n == 1);
  const MeanCI none = student_t_ci({});
  CHECK(std::isnan(none.mean));
  CHECK(std::isinf(none.half_width));
  CHECK_THROWS_AS(student_t_ci({1, 2}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(student_t_ci({1, 2}, 0.0), std::invalid_argument);
}

TEST_CASE("analysis: student t 95% interval covers the true mean about 95% of the time") {
  std::mt19937_64 rng(2024);
  std::normal_distribution<double> nd(10.0, 3.0);
  const int trials = 4000;
  int covered = 0;
  std::vector<double> xs(8);
  for (int t = 0; t < trials; ++t) {
    for (double& x : xs) x = nd(rng);
    const MeanCI ci = student_t_ci(xs, 0.95);
    if (ci.lo <= 10.0 && 10.0 <= ci.hi) ++covered;
  }
  const double coverage = static_cast<double>(covered) / trials;
  // Binomial sd is 0.0034 here; the band is about 6 sd wide on each side.
  CHECK(coverage > 0.93);
  CHECK(coverage < 0.97);
}

namespace {

std::vector<double> ar1(std::mt19937_64& rng, std::size_t n, double phi, double mean) {
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<double> xs(n);
  // Start from the stationary distribution so there is no warm-up bias.
  double x = nd(rng) / std::sqrt(1.0 - phi * phi);
  for (double& v : xs) {
    v = mean + x;
    x = phi * x + nd(rng);
  }
  return xs;
}

}  // namespace

TEST_CASE("analysis: batch means on an AR(1) series is wider than the naive interval") {
  std::mt19937_64 rng(5);
  const auto xs = ar1(rng, 100000, 0.9, 3.0);
  const MeanCI naive = student_t_ci(xs);
  const MeanCI bm = batch_means_ci(xs, 20);
  CHECK(bm.n == 20);
  // Theory: the variance of the mean is inflated by (1+phi)/(1-phi) = 19, so about sqrt(19) ~ 4.4 wider.
  CHECK(bm.half_width > 2.5 * naive.half_width);
  CHECK(bm.half_width < 8.0 * naive.half_width);
  CHECK(bm.mean == Approx(naive.mean).epsilon(1e-9));  // 100000 divides evenly: same observations
}

TEST_CASE("analysis: batch means covers the AR(1) mean where the naive interval does not") {
  std::mt19937_64 rng(11);
  const int trials = 300;
  int bm_cov = 0, naive_cov = 0;
  for (int t = 0; t < trials; ++t) {
    const auto xs = ar1(rng, 20000, 0.9, 0.0);
    const MeanCI bm = batch_means_ci(xs, 20);
    const MeanCI nv = student_t_ci(xs);
    bm_cov += (bm.lo <= 0.0 && 0.0 <= bm.hi);
    naive_cov += (nv.lo <= 0.0 && 0.0 <= nv.hi);
  }
  const double bm_rate = static_cast<double>(bm_cov) / trials;
  const double naive_rate = static_cast<double>(naive_cov) / trials;
  INFO("batch means coverage " << bm_rate << ", naive " << naive_rate);
  CHECK(bm_rate > 0.89);
  CHECK(bm_rate < 0.99);
  CHECK(naive_rate < 0.6);  // theory: P(|Z| < 1.96/sqrt(19)) ~ 0.35
}

TEST_CASE("analysis: batch means drops the surplus from the start and handles short series") {
  // 23 values, 4 batches of 5: the first 3 values (huge) must be ignored.
  std::vector<double> xs{1000, 1000, 1000};
  for (int i = 0; i < 20; ++i) xs.push_back(i < 10 ? 1.0 : 3.0);
  const MeanCI ci = batch_means_ci(xs, 4);
  CHECK(ci.n == 4);
  CHECK(ci.mean == Approx(2.0));
  // Fewer observations than batches: every observation is its own batch.
  const MeanCI shortci = batch_means_ci({1.0, 2.0, 3.0}, 20);
  CHECK(shortci.n == 3);
  CHECK(shortci.mean == Approx(2.0));
  CHECK_THROWS_AS(batch_means_ci(xs, 1), std::invalid_argument);
}

TEST_CASE("analysis: welch difference interval matches a hand computation") {
  const std::vector<double> a{1, 2, 3, 4, 5};       // mean 3, s^2 2.5
  const std::vector<double> b{2, 4, 6, 8, 10, 12};  // mean 7, s^2 14
  const DiffCI d = welch_diff_ci(a, b, 0.95);
  CHECK(d.diff == Approx(4.0));
  const double va = 2.5 / 5, vb = 14.0 / 6;
  const double df = (va + vb) * (va + vb) / (va * va / 4 + vb * vb / 5);
  REQUIRE(df == Approx(6.97226).epsilon(1e-5));
  // t_{0.975, 6.3295} interpolated from tables lies between t_6 = 2.447 and t_7 = 2.365.
  const double half = d.half_width / std::sqrt(va + vb);
  CHECK(half > 2.365);
  CHECK(half < 2.447);
  // t ~ 2.3665 gives a half width ~ 3.984, just below the difference of 4.
  CHECK(d.half_width == Approx(3.984).epsilon(1e-3));
  CHECK(d.significant);
}

TEST_CASE("analysis: welch detects real differences and not equal samples") {
  std::mt19937_64 rng(8);
  std::normal_distribution<double> a_d(100.0, 5.0), b_d(110.0, 15.0);
  std::vector<double> a(30), b(30), a2(30);
  for (double& x : a) x = a_d(rng);
  for (double& x : b) x = b_d(rng);
  for (double& x : a2) x = a_d(rng);
  CHECK(welch_diff_ci(a, b).significant);
  CHECK(welch_diff_ci(a, b).diff > 0);  // b - a
  CHECK_FALSE(welch_diff_ci(a, a).significant);
  CHECK_FALSE(welch_diff_ci(a, a2).significant);  // same distribution

  const DiffCI constant = welch_diff_ci({1, 1, 1}, {2, 2, 2});
  CHECK(constant.half_width == 0.0);
  CHECK(constant.significant);
  const DiffCI tiny = welch_diff_ci({1}, {2, 3});
  CHECK(std::isinf(tiny.half_width));
  CHECK_FALSE(tiny.significant);
}
