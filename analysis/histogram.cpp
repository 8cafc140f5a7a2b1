#include "analysis/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace uringsim::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double ns_to_us(double ns) {
  return ns / 1e3;
}

// 1-based nearest rank for percentile p of n observations. The tiny relative slack stops a product
// like 99.9 * 1000 / 100 = 999.0000000000001 from rounding up to the next rank.
std::uint64_t nearest_rank(double p, std::uint64_t n) {
  const double x = p * static_cast<double>(n) / 100.0;
  auto r = static_cast<std::uint64_t>(std::ceil(x - x * 1e-12));
  return std::clamp<std::uint64_t>(r, 1, n);
}

void check_percentile(double p) {
  if (!(p > 0.0 && p <= 100.0)) throw std::invalid_argument(fmt::format("percentile {} not in (0, 100]", p));
}

}  // namespace

std::string percentile_key(double p) {
  // fmt's "{}" gives the shortest round-trip form, so 99.9 prints as "99.9", not "99.900000000000006".
  std::string s = fmt::format("{}", p);
  s.erase(std::remove(s.begin(), s.end(), '.'), s.end());
  return "p" + s;
}

double LatencyHistogram::max_relative_error() {
  const double log_width = std::log(kHighestNs / kLowestNs) / kBins;
  return std::expm1(log_width / 2.0);
}

LatencyHistogram::LatencyHistogram()
    : hist_(boost::histogram::make_histogram_with(std::vector<std::uint64_t>(),
                                                  Axis(kBins, kLowestNs, kHighestNs))),
      min_(std::numeric_limits<double>::infinity()),
      max_(-std::numeric_limits<double>::infinity()) {}

void LatencyHistogram::record(double value_ns) {
  if (!(value_ns >= 0.0) || !std::isfinite(value_ns))
    throw std::invalid_argument(fmt::format("latency {} ns is not a finite non-negative value", value_ns));
  hist_(value_ns);
  ++count_;
  sum_ += value_ns;
  min_ = std::min(min_, value_ns);
  max_ = std::max(max_, value_ns);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  hist_ += other.hist_;
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double LatencyHistogram::mean() const {
  return empty() ? kNaN : sum_ / static_cast<double>(count_);
}
double LatencyHistogram::min() const {
  return empty() ? kNaN : min_;
}
double LatencyHistogram::max() const {
  return empty() ? kNaN : max_;
}

double LatencyHistogram::percentile(double p) const {
  check_percentile(p);
  if (empty()) return kNaN;
  if (p == 100.0) return max_;
  return cdf_at_ranks({nearest_rank(p, count_)}).front();
}

std::vector<double> LatencyHistogram::cdf_at_ranks(const std::vector<std::uint64_t>& ranks) const {
  // One pass over underflow, regular bins and overflow; ranks must be non-decreasing.
  std::vector<double> out;
  out.reserve(ranks.size());
  const auto& axis = hist_.axis();
  const int n_bins = static_cast<int>(kBins);
  int idx = -1;
  std::uint64_t cum = hist_.at(-1);
  for (std::uint64_t r : ranks) {
    while (cum < r && idx < n_bins) {
      ++idx;
      cum += hist_.at(idx);
    }
    double v;
    if (idx < 0)
      v = min_;  // underflow holds [0, 1 ns): the exact min is within 1 ns of any of them
    else if (idx >= n_bins)
      v = max_;  // overflow is unbounded above: only the exact max is meaningful
    else
      v = axis.bin(idx).center();  // geometric centre, because the axis is linear in log(value)
    // Extreme bins may straddle the observed range; clamping can only move the answer closer.
    out.push_back(std::clamp(v, min_, max_));
  }
  return out;
}

std::vector<std::pair<double, double>> LatencyHistogram::cdf_points(std::size_t n) const {
  std::vector<std::pair<double, double>> pts;
  if (empty() || n == 0) return pts;
  std::vector<std::uint64_t> ranks;
  ranks.reserve(n);
  for (std::size_t i = 1; i <= n; ++i) ranks.push_back(nearest_rank(100.0 * i / n, count_));
  std::vector<double> values = cdf_at_ranks(ranks);
  values.back() = max_;
  pts.reserve(n);
  for (std::size_t i = 1; i <= n; ++i)
    pts.emplace_back(values[i - 1], static_cast<double>(i) / static_cast<double>(n));
  return pts;
}

nlohmann::json LatencyHistogram::to_json(const std::vector<double>& percentiles) const {
  nlohmann::json j;
  j["count"] = count_;
  auto us_or_null = [&](double ns) {
    return empty() ? nlohmann::json(nullptr) : nlohmann::json(ns_to_us(ns));
  };
  j["mean"] = us_or_null(mean());
  j["min"] = us_or_null(min());
  j["max"] = us_or_null(max());
  for (double p : percentiles) {
    check_percentile(p);
    j[percentile_key(p)] = us_or_null(percentile(p));
  }
  return j;
}

nlohmann::json LatencyHistogram::bins_json() const {
  auto six_digits = [](double us) { return std::stod(fmt::format("{:.6g}", us)); };
  nlohmann::json out = nlohmann::json::array();
  const int n_bins = static_cast<int>(kBins);
  for (int idx = -1; idx <= n_bins; ++idx) {
    const std::uint64_t c = hist_.at(idx);
    if (c == 0) continue;
    double upper_ns;
    if (idx < 0)
      upper_ns = kLowestNs;
    else if (idx >= n_bins)
      upper_ns = max_;  // unbounded above: only the exact max bounds it
    else
      upper_ns = hist_.axis().bin(idx).upper();
    out.push_back({six_digits(ns_to_us(upper_ns)), c});
  }
  return out;
}

}  // namespace uringsim::analysis
