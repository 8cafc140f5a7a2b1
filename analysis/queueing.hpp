// Closed-form queueing results used to validate the simulator. Times are in whatever unit lambda and
// the service parameters use (rates are per that unit).
#pragma once

namespace uringsim::analysis {

// Erlang C: probability that an arrival waits in an M/M/c queue with offered load a = lambda/mu.
// Computed from the Erlang B recursion B_k = a*B_{k-1} / (k + a*B_{k-1}), which never forms a^c or c!
// and so stays finite and accurate for c in the thousands. Returns 1 when a >= c (unstable: everyone
// waits). Throws std::invalid_argument for c < 1 or a < 0 / non-finite.
double erlang_c(int c, double offered_load_a);

struct QueueTheory {
  double mean_wait;      // mean time in queue, Wq
  double mean_response;  // Wq + mean service time
  double p_wait;         // probability an arrival has to wait
  double utilisation;    // per-server utilisation rho
};

// M/M/c. Throws std::invalid_argument if rho = lambda/(c*mu) >= 1 or a parameter is out of range.
QueueTheory mmc(double lambda, double mu, int c);
// M/D/1 (Pollaczek-Khinchine with zero service variance); p_wait = rho.
QueueTheory md1(double lambda, double service_time);
// M/G/1 (Pollaczek-Khinchine): Wq = lambda * E[S^2] / (2 (1 - rho)); p_wait = rho.
// Throws std::invalid_argument if rho >= 1 or second_moment_s < mean_s^2.
QueueTheory mg1(double lambda, double mean_s, double second_moment_s);

}  // namespace uringsim::analysis
