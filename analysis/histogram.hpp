// Latency histogram with bounded relative error, mergeable across runs.
#pragma once

#include <boost/histogram/axis/regular.hpp>
#include <boost/histogram/histogram.hpp>
#include <boost/histogram/make_histogram.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace uringsim::analysis {

// JSON key for a percentile: "p" followed by the shortest decimal form of p with the dot removed
// (50 -> "p50", 99.9 -> "p999", 99.99 -> "p9999").
std::string percentile_key(double p);

// Records durations in ns. Layout: a Boost.Histogram regular axis over log(value) on [1 ns, 1e12 ns).
// Bins of constant width in log space have constant *relative* width, so reporting a bin's geometric
// centre bounds the relative error by exp(w/2) - 1 for every magnitude; with kBins bins that is < 0.5 %,
// leaving headroom under the 1 % requirement. The layout is fixed, so any two histograms merge by adding
// counts. Values below 1 ns (including 0) fall in the underflow bin and are reported as the exact
// minimum (absolute error < 1 ns); values >= 1e12 ns fall in the overflow bin and are reported as the
// exact maximum. Count, sum, min and max are kept exactly beside the bins.
class LatencyHistogram {
 public:
  static constexpr unsigned kBins = 2800;
  static constexpr double kLowestNs = 1.0;
  static constexpr double kHighestNs = 1e12;
  // Upper bound on the relative error of percentile() for values inside [kLowestNs, kHighestNs).
  static double max_relative_error();

  LatencyHistogram();

  // value_ns must be finite and >= 0, else std::invalid_argument.
  void record(double value_ns);
  // Adds all of other's observations; the result equals having recorded both sample sets here.
  void merge(const LatencyHistogram& other);

  std::uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Exact statistics; NaN when empty.
  double mean() const;
  double min() const;
  double max() const;

  // Nearest-rank percentile in ns for p in (0, 100]; p == 100 returns the exact max. NaN when empty.
  // Throws std::invalid_argument for p outside (0, 100].
  double percentile(double p) const;

  // n points (value_ns, cumulative fraction) at fractions 1/n, 2/n, ..., 1 for plotting a CDF;
  // the last point is (max, 1). Empty when the histogram is empty or n == 0.
  std::vector<std::pair<double, double>> cdf_points(std::size_t n) const;

  // {"count", "mean", "min", "max", "p<..>"...} with all durations in microseconds; durations are null
  // when empty.
  nlohmann::json to_json(const std::vector<double>& percentiles) const;

  // The non-empty bins in ascending order as [upper_edge_us, count] pairs: every value counted in a
  // pair is below its edge and at or above the previous bin's edge, so the cumulative count at an
  // edge is the number of values below it. The underflow bin's edge is 1 ns (0.001 us), the
  // overflow bin's the exact max. Edges are rounded to 6 significant digits (the bins are ~1 % wide:
  // the rounding moves an edge by < 1e-4 of a bin), which keeps the list short. The counts sum to
  // count().
  nlohmann::json bins_json() const;

 private:
  using Axis = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;
  using Hist = decltype(boost::histogram::make_histogram_with(std::vector<std::uint64_t>(), Axis{}));

  // Reported value for each 1-based rank (ranks non-decreasing), in one pass over the bins.
  std::vector<double> cdf_at_ranks(const std::vector<std::uint64_t>& ranks) const;

  Hist hist_;
  std::uint64_t count_ = 0;
  double sum_ = 0.0;
  double min_;
  double max_;
};

}  // namespace uringsim::analysis
