#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/histogram.hpp"

using uringsim::analysis::LatencyHistogram;
using uringsim::analysis::percentile_key;

namespace {

// Exact nearest-rank order statistic, with the rank computed in integers (p given in tenths of a
// percent) so the reference does not share the histogram's floating-point rank code.
double exact_percentile(std::vector<double> sorted, int p_tenths) {
  const auto n = static_cast<long long>(sorted.size());
  long long rank = (p_tenths * n + 999) / 1000;  // ceil(p/100 * n)
  rank = std::clamp(rank, 1LL, n);
  return sorted[static_cast<std::size_t>(rank - 1)];
}

void check_against_exact(const std::vector<double>& xs) {
  LatencyHistogram h;
  for (double x : xs) h.record(x);
  std::vector<double> sorted = xs;
  std::sort(sorted.begin(), sorted.end());
  for (int pt : {10, 250, 500, 750, 900, 950, 990, 999}) {
    const double exact = exact_percentile(sorted, pt);
    INFO("p=" << pt / 10.0 << " exact=" << exact << " got=" << h.percentile(pt / 10.0));
    CHECK(std::fabs(h.percentile(pt / 10.0) - exact) <= 0.01 * exact);
  }
  CHECK(h.percentile(100) == sorted.back());
  CHECK(h.min() == sorted.front());
  CHECK(h.max() == sorted.back());
  CHECK(h.count() == xs.size());
}

}  // namespace

TEST_CASE("analysis: histogram error bound is under one percent") {
  CHECK(LatencyHistogram::max_relative_error() < 0.005);
}

TEST_CASE("analysis: histogram percentiles of a uniform sample within 1% of order statistics") {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(1e3, 1e6);
  std::vector<double> xs(100000);
  for (double& x : xs) x = u(rng);
  check_against_exact(xs);
}

TEST_CASE("analysis: histogram percentiles of an exponential sample within 1% of order statistics") {
  std::mt19937_64 rng(777);
  std::exponential_distribution<double> e(1.0 / 50e3);  // mean 50 us
  std::vector<double> xs(200000);
  for (double& x : xs) x = 1.0 + e(rng);  // keep above the 1 ns floor where the 1 % bound applies
  check_against_exact(xs);
}

TEST_CASE("analysis: histogram spans 1 ns to 1e12 ns with bounded error") {
  for (double v : {1.0, 7.0, 123.0, 4.5e4, 9.9e8, 3.3e11}) {
    LatencyHistogram one;
    one.record(v);
    one.record(v);  // two copies so p50 is not the exact-max shortcut
    CHECK(std::fabs(one.percentile(50) - v) <= 0.01 * v);
  }
}

TEST_CASE("analysis: histogram mean, min, max and count are exact") {
  LatencyHistogram h;
  for (double v : {10.0, 20.0, 30.0, 40.0}) h.record(v);
  CHECK(h.count() == 4);
  CHECK(h.mean() == 25.0);
  CHECK(h.min() == 10.0);
  CHECK(h.max() == 40.0);
}

TEST_CASE("analysis: histogram handles zero, sub-ns and overflow values") {
  LatencyHistogram h;
  h.record(0.0);
  h.record(0.0);
  h.record(0.5);
  h.record(2e12);  // above the axis
  CHECK(h.count() == 4);
  CHECK(h.min() == 0.0);
  CHECK(h.percentile(50) == 0.0);   // underflow reports the exact min
  CHECK(h.percentile(75) == 0.0);   // still underflow; absolute error < 1 ns
  CHECK(h.percentile(99) == 2e12);  // overflow reports the exact max
  CHECK(h.percentile(100) == 2e12);
  CHECK(h.mean() == Approx((0.5 + 2e12) / 4));
}

TEST_CASE("analysis: histogram rejects bad input") {
  LatencyHistogram h;
  CHECK_THROWS_AS(h.record(-1.0), std::invalid_argument);
  CHECK_THROWS_AS(h.record(std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(h.record(INFINITY), std::invalid_argument);
  CHECK_THROWS_AS(h.percentile(0.0), std::invalid_argument);
  CHECK_THROWS_AS(h.percentile(100.1), std::invalid_argument);
  CHECK(h.count() == 0);
  CHECK(std::isnan(h.percentile(50)));
  CHECK(std::isnan(h.mean()));
}

TEST_CASE("analysis: histogram merge equals recording both samples") {
  std::mt19937_64 rng(99);
  std::lognormal_distribution<double> ln(10.0, 1.5);
  LatencyHistogram a, b, both;
  for (int i = 0; i < 20000; ++i) {
    const double x = ln(rng);
    (i % 3 == 0 ? a : b).record(x);
    both.record(x);
  }
  a.merge(b);
  CHECK(a.count() == both.count());
  CHECK(a.min() == both.min());
  CHECK(a.max() == both.max());
  CHECK(a.mean() == Approx(both.mean()).epsilon(1e-12));
  for (double p : {1.0, 50.0, 90.0, 99.0, 99.9, 100.0}) CHECK(a.percentile(p) == both.percentile(p));

  LatencyHistogram empty;
  both.merge(empty);  // merging an empty histogram must not disturb min/max
  CHECK(both.min() == a.min());
  CHECK(both.max() == a.max());
}

TEST_CASE("analysis: histogram cdf points are monotone and end at the max") {
  LatencyHistogram h;
  for (int i = 1; i <= 1000; ++i) h.record(i * 100.0);
  const auto pts = h.cdf_points(10);
  REQUIRE(pts.size() == 10);
  for (std::size_t i = 1; i < pts.size(); ++i) {
    CHECK(pts[i].first >= pts[i - 1].first);
    CHECK(pts[i].second > pts[i - 1].second);
  }
  CHECK(pts.front().second == Approx(0.1));
  CHECK(std::fabs(pts.front().first - 10000.0) <= 100.0);  // 10 % of 1000 values -> 100th = 10000 ns
  CHECK(pts.back().first == 100000.0);
  CHECK(pts.back().second == 1.0);
  CHECK(LatencyHistogram().cdf_points(10).empty());
  CHECK(h.cdf_points(0).empty());
}

TEST_CASE("analysis: percentile keys drop the decimal point") {
  CHECK(percentile_key(50) == "p50");
  CHECK(percentile_key(90) == "p90");
  CHECK(percentile_key(99) == "p99");
  CHECK(percentile_key(99.9) == "p999");
  CHECK(percentile_key(99.99) == "p9999");
  CHECK(percentile_key(99.5) == "p995");
  CHECK(percentile_key(100) == "p100");
}

TEST_CASE("analysis: histogram json is in microseconds with the requested keys") {
  LatencyHistogram h;
  for (int i = 0; i < 1000; ++i) h.record(2000.0);  // 2 us
  h.record(10000.0);                                // 10 us max
  const auto j = h.to_json({50, 90, 99, 99.9, 99.99});
  CHECK(j["count"] == 1001);
  CHECK(j["min"].get<double>() == 2.0);
  CHECK(j["max"].get<double>() == 10.0);
  CHECK(j["mean"].get<double>() == Approx((1000 * 2.0 + 10.0) / 1001));
  CHECK(j["p50"].get<double>() == Approx(2.0).epsilon(0.01));
  CHECK(j["p999"].get<double>() == Approx(2.0).epsilon(0.01));
  CHECK(j["p9999"].get<double>() == Approx(10.0).epsilon(0.01));
  for (const char* k : {"count", "mean", "min", "max", "p50", "p90", "p99", "p999", "p9999"})
    CHECK(j.contains(k));

  const auto e = LatencyHistogram().to_json({50});
  CHECK(e["count"] == 0);
  CHECK(e["p50"].is_null());
  CHECK(e["mean"].is_null());
}
