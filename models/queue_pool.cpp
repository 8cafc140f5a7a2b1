#include "models/queue_pool.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/queueing.hpp"
#include "analysis/stats.hpp"
#include "sim/random.hpp"

namespace uringsim::models {
namespace {
// A job "waited" if it started later than it arrived; this tolerance only absorbs float rounding.
constexpr double kWaitEpsilonNs = 1e-3;
}  // namespace

QueuePool::QueuePool(const config::Scenario& s)
    : servers_(s.at("/workload/servers").get<int>()),
      cores_(s.at("/machine/cores").get<int>()),
      seed_(s.at("/seed").get<std::uint64_t>()),
      arrival_(Distribution::from_json(s.at("/workload/arrival"))),
      service_(Distribution::from_json(s.at("/workload/service"))) {}

void QueuePool::build(sim::Engine& engine, analysis::RunMetrics& metrics) {
  engine_ = &engine;
  metrics_ = &metrics;
  lock_ = std::make_unique<sim::SpinLock>("queue.list_lock");
  idle_ = std::make_unique<sim::WaitQueue>("queue.idle_workers");
  // CPU 0 runs the producer; workers take the next CPUs, wrapping around if there are fewer cores.
  engine.spawn("producer", "producer", 0, [this] { producer(); });
  for (int i = 0; i < servers_; ++i)
    engine.spawn(fmt::format("worker-{}", i), "worker", cores_ > 1 ? 1 + i % (cores_ - 1) : 0,
                 [this] { worker(); });

  // Topology (uringsim graph --kind topology).
  engine.declare("queue", "queue.list");
  engine.declare_edge("queue.list", "queue.list_lock", "protected by");
  engine.declare_edge("producer", "queue.list", "queue_enqueue");
  engine.declare_edge("producer", "queue.idle_workers", "wake_one");
  for (int i = 0; i < servers_; ++i) {
    const auto w = fmt::format("worker-{}", i);
    engine.declare_edge(w, "queue.list", "queue_get_work");
    engine.declare_edge(w, "queue.idle_workers", "sleeps when empty");
  }
}

void QueuePool::producer() {
  static const sim::Label site = sim::intern("queue_enqueue");
  sim::Rng arrivals(seed_, "queue.arrival"), services(seed_, "queue.service");
  auto& self = sim::current();
  for (;;) {
    self.sleep_ns(arrival_.sample_ns(arrivals));
    const sim::TimeNs t = sim::now_ns();
    lock_->lock(site);
    list_.push_back({t, service_.sample_ns(services)});
    peak_queue_ = std::max(peak_queue_, list_.size());
    lock_->unlock();
    metrics_->submitted(t);
    idle_->wake_one();
  }
}

void QueuePool::worker() {
  static const sim::Label site = sim::intern("queue_get_work"), serve = sim::intern("service");
  auto& self = sim::current();
  for (;;) {
    lock_->lock(site);
    if (list_.empty()) {
      lock_->unlock();
      idle_->wait(site);
      continue;
    }
    const Job job = list_.front();
    list_.pop_front();
    lock_->unlock();
    const sim::TimeNs start = sim::now_ns();
    self.compute(engine_->ns_to_cycles(job.service_ns), serve);
    const sim::TimeNs end = sim::now_ns();
    metrics_->completed(end, end - job.arrival_ns);
    if (end >= engine_->window_start_ns() && end <= engine_->window_end_ns()) {
      response_ns_.push_back(end - job.arrival_ns);
      waited_.push_back(start - job.arrival_ns > kWaitEpsilonNs);
    }
  }
}

namespace {
// analysis::batch_means_ci of the 0/1 series, from counts: a sum of 0.0s and 1.0s is exact in
// double, so count / size is bit for bit the batch mean of the doubles.
analysis::MeanCI waited_ci(const std::vector<bool>& obs, std::size_t batches, double confidence) {
  if (obs.size() < batches)
    return analysis::student_t_ci(std::vector<double>(obs.begin(), obs.end()), confidence);
  const std::size_t size = obs.size() / batches;
  const std::size_t skip = obs.size() - size * batches;
  std::vector<double> means;
  means.reserve(batches);
  for (std::size_t b = 0; b < batches; ++b) {
    const auto begin = obs.begin() + static_cast<std::ptrdiff_t>(skip + b * size);
    const auto ones = std::count(begin, begin + static_cast<std::ptrdiff_t>(size), true);
    means.push_back(static_cast<double>(ones) / static_cast<double>(size));
  }
  return analysis::student_t_ci(means, confidence);
}
}  // namespace

nlohmann::json QueuePool::theory() const {
  // Closed forms exist for Poisson arrivals: M/M/c (exponential service), M/G/1 (any service).
  if (arrival_.kind() != Distribution::Kind::Exponential) return nullptr;
  const double lambda = 1.0 / arrival_.mean_ns();
  const double rho = lambda * service_.mean_ns() / servers_;
  if (rho >= 1) return nullptr;
  analysis::QueueTheory q;
  std::string model;
  if (service_.kind() == Distribution::Kind::Exponential) {
    q = analysis::mmc(lambda, 1.0 / service_.mean_ns(), servers_);
    model = fmt::format("M/M/{}", servers_);
  } else if (servers_ == 1) {
    q = analysis::mg1(lambda, service_.mean_ns(), service_.second_moment_ns2());
    model = service_.kind() == Distribution::Kind::Constant ? "M/D/1" : "M/G/1";
  } else {
    return nullptr;
  }
  return {{"model", model},
          {"utilisation", q.utilisation},
          {"p_wait", q.p_wait},
          {"mean_wait_us", q.mean_wait / 1e3},
          {"mean_response_us", q.mean_response / 1e3}};
}

void QueuePool::report(nlohmann::json& results) const {
  auto& q = results["queue"];
  q["servers"] = servers_;
  q["peak_queue_length"] = peak_queue_;
  q["window_jobs"] = response_ns_.size();
  if (response_ns_.size() >= 40) {
    const auto r = analysis::batch_means_ci(response_ns_, 20, 0.95);
    const auto w = waited_ci(waited_, 20, 0.95);
    q["measured"] = {{"mean_response_us", r.mean / 1e3},
                     {"mean_response_ci95_us", r.half_width / 1e3},
                     {"p_wait", w.mean},
                     {"p_wait_ci95", w.half_width}};
  }
  if (auto t = theory(); !t.is_null()) q["theory"] = t;
}

std::string QueuePool::latency_measure() const {
  return "response time per job: arrival -> end of service";
}

std::vector<std::pair<std::string, std::string>> QueuePool::summary() const {
  std::vector<std::pair<std::string, std::string>> out;
  if (response_ns_.size() >= 40) {
    const auto r = analysis::batch_means_ci(response_ns_, 20, 0.95);
    out.emplace_back("mean response", fmt::format("{:.3f} us ± {:.3f}", r.mean / 1e3, r.half_width / 1e3));
  }
  if (auto t = theory(); !t.is_null())
    out.emplace_back("theory (" + t["model"].get<std::string>() + ")",
                     fmt::format("{:.3f} us, P(wait) {:.4f}", t["mean_response_us"].get<double>(),
                                 t["p_wait"].get<double>()));
  return out;
}

}  // namespace uringsim::models
