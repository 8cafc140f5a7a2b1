#include "analysis/queueing.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace uringsim::analysis {

namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

void require_stable(double rho) {
  if (!(rho < 1.0)) throw std::invalid_argument(fmt::format("queue is unstable: utilisation {} >= 1", rho));
}

}  // namespace

double erlang_c(int c, double a) {
  require(c >= 1, "erlang_c: c must be >= 1");
  require(std::isfinite(a) && a >= 0.0, "erlang_c: offered load must be finite and >= 0");
  if (a >= c) return 1.0;
  double b = 1.0;  // B(0, a)
  for (int k = 1; k <= c; ++k) b = a * b / (k + a * b);
  // Standard identity C = c*B / (c - a*(1 - B)); the denominator is > 0 because a < c.
  return c * b / (c - a * (1.0 - b));
}

QueueTheory mmc(double lambda, double mu, int c) {
  require(std::isfinite(lambda) && lambda >= 0.0, "mmc: lambda must be finite and >= 0");
  require(std::isfinite(mu) && mu > 0.0, "mmc: mu must be finite and > 0");
  require(c >= 1, "mmc: c must be >= 1");
  const double a = lambda / mu;
  const double rho = a / c;
  require_stable(rho);
  const double pw = erlang_c(c, a);
  const double wq = pw / (c * mu - lambda);
  return QueueTheory{wq, wq + 1.0 / mu, pw, rho};
}

QueueTheory mg1(double lambda, double mean_s, double second_moment_s) {
  require(std::isfinite(lambda) && lambda >= 0.0, "mg1: lambda must be finite and >= 0");
  require(std::isfinite(mean_s) && mean_s > 0.0, "mg1: mean service time must be finite and > 0");
  // Allow rounding noise when the caller passes E[S]^2 for a deterministic service.
  require(std::isfinite(second_moment_s) && second_moment_s >= mean_s * mean_s * (1.0 - 1e-12),
          "mg1: second moment must be >= mean^2");
  const double rho = lambda * mean_s;
  require_stable(rho);
  const double wq = lambda * second_moment_s / (2.0 * (1.0 - rho));
  return QueueTheory{wq, wq + mean_s, rho, rho};
}

QueueTheory md1(double lambda, double service_time) {
  return mg1(lambda, service_time, service_time * service_time);
}

}  // namespace uringsim::analysis
