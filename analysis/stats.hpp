// Confidence intervals for simulation output.
#pragma once

#include <cstddef>
#include <vector>

namespace uringsim::analysis {

struct MeanCI {
  double mean;        // NaN when n == 0
  double half_width;  // +infinity when fewer than 2 points: nothing is known about the spread
  double lo;          // mean - half_width
  double hi;          // mean + half_width
  std::size_t n;      // number of points the t-interval was built from
};

// Student-t interval for the mean of i.i.d. observations. With n < 2 the half width is +infinity (not
// NaN) so that "half_width < tolerance" checks fail safely; writers render it as null.
// confidence must lie in (0, 1), else std::invalid_argument.
MeanCI student_t_ci(const std::vector<double>& xs, double confidence = 0.95);

// Non-overlapping batch means for autocorrelated output given in time order: the series is cut into
// `batches` equal consecutive batches and a Student-t interval is built over the batch averages, which
// are close to independent once a batch is much longer than the correlation time. When the length is
// not a multiple of `batches`, the surplus is dropped from the *start* (closest to warm-up). With fewer
// observations than batches each observation is its own batch. The returned n is the number of batches.
// batches must be >= 2, else std::invalid_argument.
MeanCI batch_means_ci(const std::vector<double>& observations_in_time_order, std::size_t batches = 20,
                      double confidence = 0.95);

struct DiffCI {
  double diff;        // mean(b) - mean(a)
  double half_width;  // +infinity when either sample has fewer than 2 points
  bool significant;   // the interval diff +- half_width excludes 0
};

// Welch interval for mean(b) - mean(a) with Welch-Satterthwaite degrees of freedom (unequal variances).
// When both samples have zero variance the half width is 0 and any non-zero difference is significant.
DiffCI welch_diff_ci(const std::vector<double>& a, const std::vector<double>& b, double confidence = 0.95);

}  // namespace uringsim::analysis
