#include "analysis/stats.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>

namespace uringsim::analysis {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check_confidence(double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0)) throw std::invalid_argument("confidence must lie in (0, 1)");
}

// Two-sided critical value t_{(1+confidence)/2, df}.
double t_critical(double df, double confidence) {
  boost::math::students_t dist(df);
  return boost::math::quantile(dist, 0.5 + confidence / 2.0);
}

struct Moments {
  double mean;
  double var;  // unbiased sample variance; NaN when n < 2
  std::size_t n;
};

// Two passes: subtracting the mean first avoids the cancellation of the sum-of-squares formula, which
// matters for latencies with a large mean and a small spread.
Moments moments(const std::vector<double>& xs) {
  Moments m{kNaN, kNaN, xs.size()};
  if (xs.empty()) return m;
  double sum = 0.0;
  for (double x : xs) sum += x;
  m.mean = sum / static_cast<double>(xs.size());
  if (xs.size() < 2) return m;
  double ss = 0.0;
  for (double x : xs) ss += (x - m.mean) * (x - m.mean);
  m.var = ss / static_cast<double>(xs.size() - 1);
  return m;
}

}  // namespace

MeanCI student_t_ci(const std::vector<double>& xs, double confidence) {
  check_confidence(confidence);
  const Moments m = moments(xs);
  double half = kInf;
  if (m.n >= 2) half = t_critical(static_cast<double>(m.n - 1), confidence) * std::sqrt(m.var / m.n);
  return MeanCI{m.mean, half, m.mean - half, m.mean + half, m.n};
}

MeanCI batch_means_ci(const std::vector<double>& obs, std::size_t batches, double confidence) {
  check_confidence(confidence);
  if (batches < 2) throw std::invalid_argument("batch_means_ci needs at least 2 batches");
  if (obs.size() < batches) return student_t_ci(obs, confidence);
  const std::size_t size = obs.size() / batches;
  const std::size_t skip = obs.size() - size * batches;
  std::vector<double> means;
  means.reserve(batches);
  for (std::size_t b = 0; b < batches; ++b) {
    double sum = 0.0;
    const std::size_t begin = skip + b * size;
    for (std::size_t i = begin; i < begin + size; ++i) sum += obs[i];
    means.push_back(sum / static_cast<double>(size));
  }
  return student_t_ci(means, confidence);
}

DiffCI welch_diff_ci(const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  check_confidence(confidence);
  const Moments ma = moments(a);
  const Moments mb = moments(b);
  const double diff = mb.mean - ma.mean;
  if (ma.n < 2 || mb.n < 2) return DiffCI{diff, kInf, false};
  const double va = ma.var / ma.n;
  const double vb = mb.var / mb.n;
  const double se2 = va + vb;
  // Deterministic replications can have zero spread; the df formula is then 0/0, so decide directly.
  if (se2 == 0.0) return DiffCI{diff, 0.0, diff != 0.0};
  const double df = se2 * se2 / (va * va / (ma.n - 1) + vb * vb / (mb.n - 1));
  const double half = t_critical(df, confidence) * std::sqrt(se2);
  return DiffCI{diff, half, std::fabs(diff) > half};
}

}  // namespace uringsim::analysis
