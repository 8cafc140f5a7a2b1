#pragma once
// Statistics of calibration samples: pure functions, no kernel (unit-tested on synthetic data).
#include <string>
#include <vector>

namespace uringsim::host::calib {

struct Summary {
  std::size_t n = 0;
  double median = 0, p25 = 0, p75 = 0;  // quantiles by linear interpolation between order statistics
};
// std::invalid_argument if xs is empty.
Summary summarize(std::vector<double> xs);
double median(const std::vector<double>& xs);
// "p25-p75 A-B" (A, B to `digits` significant digits): how calibration files state a spread.
std::string spread_text(const Summary& s, int digits = 4);

// Least-squares line y = a + b x. It separates a fixed cost a from a per-item cost b, e.g. an
// io_uring_enter of n NOPs: T(n) = syscall + n x per-SQE. std::invalid_argument unless x and y have
// the same size and x has at least two distinct values.
struct Line {
  double a = 0, b = 0;
};
Line fit_line(const std::vector<double>& x, const std::vector<double>& y);

// Least-squares fit of y = m x max(0, 1 - k / n), the share of an n-item working set that a cache
// holding k items cannot keep (models/net/conn_cache.hpp), with k searched over [1, max n] and m
// its best value for that k. y: the extra cost over n = 1. m = 0 (k = max n) when nothing rises.
// std::invalid_argument unless n and y have the same, non-zero size and every n >= 1.
struct CacheFit {
  double m = 0, k = 0;
};
CacheFit fit_cache(const std::vector<double>& n, const std::vector<double>& y);
// The best m for a given k (0 where no n exceeds k); the inner step of fit_cache.
double fit_cache_m(const std::vector<double>& n, const std::vector<double>& y, double k);

}  // namespace uringsim::host::calib
