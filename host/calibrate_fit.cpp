#include "host/calibrate_fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace uringsim::host::calib {
namespace {

double quantile_sorted(const std::vector<double>& s, double q) {
  const double pos = q * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

}  // namespace

Summary summarize(std::vector<double> xs) {
  if (xs.empty()) throw std::invalid_argument("summarize: no samples");
  std::sort(xs.begin(), xs.end());
  return {xs.size(), quantile_sorted(xs, 0.5), quantile_sorted(xs, 0.25), quantile_sorted(xs, 0.75)};
}

double median(const std::vector<double>& xs) {
  return summarize(xs).median;
}

std::string spread_text(const Summary& s, int digits) {
  return fmt::format("p25-p75 {:.{}g}-{:.{}g}", s.p25, digits, s.p75, digits);
}

Line fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::invalid_argument("fit_line: x and y differ in size");
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  if (x.empty()) throw std::invalid_argument("fit_line: no points");
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  if (!(sxx > 0)) throw std::invalid_argument("fit_line: x needs at least two distinct values");
  const double b = sxy / sxx;
  return {my - b * mx, b};
}

double fit_cache_m(const std::vector<double>& n, const std::vector<double>& y, double k) {
  double fy = 0, ff = 0;
  for (std::size_t i = 0; i < n.size() && i < y.size(); ++i) {
    const double f = std::max(0.0, 1 - k / n[i]);
    fy += f * y[i];
    ff += f * f;
  }
  return ff > 0 ? fy / ff : 0;
}

CacheFit fit_cache(const std::vector<double>& n, const std::vector<double>& y) {
  if (n.empty() || n.size() != y.size()) throw std::invalid_argument("fit_cache: n and y differ in size");
  if (std::any_of(n.begin(), n.end(), [](double v) { return !(v >= 1); }))
    throw std::invalid_argument("fit_cache: every n must be >= 1");
  const double top = *std::max_element(n.begin(), n.end());
  CacheFit best{0, top};
  double best_sse = 0;
  for (double v : y) best_sse += v * v;  // m = 0
  for (double k = 1; k <= top; k += 1) {
    const double m = fit_cache_m(n, y, k);
    if (m <= 0) continue;
    double sse = 0;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const double r = y[i] - m * std::max(0.0, 1 - k / n[i]);
      sse += r * r;
    }
    if (sse < best_sse) {
      best_sse = sse;
      best = {m, k};
    }
  }
  return best;
}

}  // namespace uringsim::host::calib
