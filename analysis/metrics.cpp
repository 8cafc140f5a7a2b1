#include "analysis/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace uringsim::analysis {

namespace {

constexpr double kNsPerMs = 1e6;

bool reserved_series_name(const std::string& name) {
  return name == "interval_ms" || name == "t_ms" || name == "throughput_ops_per_s";
}

}  // namespace

const std::vector<double>& RunMetrics::default_percentiles() {
  static const std::vector<double> p{50.0, 90.0, 99.0, 99.9};
  return p;
}

RunMetrics::RunMetrics(MetricsConfig cfg) : cfg_(std::move(cfg)) {
  if (!std::isfinite(cfg_.warmup_ns) || !std::isfinite(cfg_.end_ns) || cfg_.warmup_ns < 0.0 ||
      !(cfg_.end_ns > cfg_.warmup_ns))
    throw std::invalid_argument(
        fmt::format("metrics window [{}, {}] ns must be finite, non-empty and start at >= 0", cfg_.warmup_ns,
                    cfg_.end_ns));
  if (!std::isfinite(cfg_.interval_ns) || cfg_.interval_ns < 0.0)
    throw std::invalid_argument("metrics interval must be finite and >= 0");

  percentiles_ = default_percentiles();
  for (double p : cfg_.percentiles) {
    if (!(p > 0.0 && p <= 100.0))
      throw std::invalid_argument(fmt::format("percentile {} not in (0, 100]", p));
    percentiles_.push_back(p);
  }
  std::sort(percentiles_.begin(), percentiles_.end());
  percentiles_.erase(std::unique(percentiles_.begin(), percentiles_.end()), percentiles_.end());

  if (cfg_.interval_ns > 0.0) {
    const double n = std::ceil((cfg_.end_ns - cfg_.warmup_ns) / cfg_.interval_ns);
    if (n > static_cast<double>(kMaxIntervals))
      throw std::invalid_argument(
          fmt::format("metrics interval gives {} intervals, over {}", n, kMaxIntervals));
    interval_completions_.assign(static_cast<std::size_t>(n), 0);
  }
}

std::size_t RunMetrics::interval_of(double t_ns) const {
  const double i = std::floor((t_ns - cfg_.warmup_ns) / cfg_.interval_ns);
  // t == end_ns lands one past the last interval when the window divides evenly; it belongs to the last.
  return std::min(static_cast<std::size_t>(std::max(i, 0.0)), interval_completions_.size() - 1);
}

double RunMetrics::interval_start(std::size_t i) const {
  return cfg_.warmup_ns + i * cfg_.interval_ns;
}

double RunMetrics::interval_end(std::size_t i) const {
  return std::min(cfg_.warmup_ns + (i + 1) * cfg_.interval_ns, cfg_.end_ns);
}

void RunMetrics::submitted(double t_ns) {
  ++submitted_;
  if (in_window(t_ns)) ++window_submitted_;
}

void RunMetrics::completed(double t_ns, double latency_ns) {
  if (!std::isfinite(latency_ns) || latency_ns < 0.0)
    throw std::invalid_argument(fmt::format("completion at {} ns has invalid latency {}", t_ns, latency_ns));
  ++completed_;
  if (!in_window(t_ns)) return;
  latency_.record(latency_ns);
  if (!interval_completions_.empty()) ++interval_completions_[interval_of(t_ns)];
}

void RunMetrics::merge(const RunMetrics& other) {
  const MetricsConfig& o = other.cfg_;
  if (o.warmup_ns != cfg_.warmup_ns || o.end_ns != cfg_.end_ns || o.interval_ns != cfg_.interval_ns ||
      other.percentiles_ != percentiles_)
    throw std::invalid_argument("metrics merge: the two configurations differ");
  if (!other.gauges_.empty()) throw std::invalid_argument("metrics merge: the merged metrics hold gauges");
  latency_.merge(other.latency_);
  submitted_ += other.submitted_;
  completed_ += other.completed_;
  failed_ += other.failed_;
  window_submitted_ += other.window_submitted_;
  for (std::size_t i = 0; i < interval_completions_.size(); ++i)
    interval_completions_[i] += other.interval_completions_[i];
}

void RunMetrics::sample(const std::string& series, double t_ns, double value) {
  if (series.empty() || reserved_series_name(series))
    throw std::invalid_argument(fmt::format("invalid gauge series name '{}'", series));
  // Create the entry first so the output's key set does not depend on when a gauge was sampled.
  Gauge& g = gauges_[series];
  if (t_ns > cfg_.end_ns) return;
  if (t_ns < cfg_.warmup_ns) {
    g.has_before = true;
    g.before = value;
    return;
  }
  g.window_max = g.has_window ? std::max(g.window_max, value) : value;
  g.window_last = value;
  g.has_window = true;
  if (interval_completions_.empty()) return;
  if (g.seen.empty()) {
    g.last.assign(interval_completions_.size(), 0.0);
    g.max.assign(interval_completions_.size(), 0.0);
    g.seen.assign(interval_completions_.size(), 0);
  }
  const std::size_t i = interval_of(t_ns);
  g.max[i] = g.seen[i] ? std::max(g.max[i], value) : value;
  g.last[i] = value;
  g.seen[i] = 1;
}

nlohmann::json RunMetrics::to_json() const {
  using nlohmann::json;
  json j;
  j["throughput"]["ops_per_s"] = throughput_ops_per_s();
  j["latency_us"] = latency_.to_json(percentiles_);
  j["latency_us"]["bins"] = latency_.bins_json();
  j["requests"] = {{"submitted", submitted_},
                   {"completed", completed_},
                   {"failed", failed_},
                   {"in_flight_at_end", in_flight()}};
  j["window"] = {{"start_ms", cfg_.warmup_ns / kNsPerMs},
                 {"end_ms", cfg_.end_ns / kNsPerMs},
                 {"seconds", window_seconds()},
                 {"completions", window_completions()},
                 {"submitted", window_submitted_}};

  json ts = json::object();
  ts["interval_ms"] = cfg_.interval_ns / kNsPerMs;
  json t_ms = json::array();
  json tput = json::array();
  for (std::size_t i = 0; i < interval_completions_.size(); ++i) {
    t_ms.push_back(interval_start(i) / kNsPerMs);
    const double secs = (interval_end(i) - interval_start(i)) / 1e9;
    tput.push_back(static_cast<double>(interval_completions_[i]) / secs);
  }
  ts["t_ms"] = std::move(t_ms);
  ts["throughput_ops_per_s"] = std::move(tput);

  json ts_max = json::object();
  json summary = json::object();
  for (const auto& [name, g] : gauges_) {
    // Walk intervals carrying the gauge's value forward, as a step function would.
    bool have = g.has_before;
    double carry = g.before;
    json lasts = json::array();
    json maxes = json::array();
    for (std::size_t i = 0; i < interval_completions_.size(); ++i) {
      if (!g.seen.empty() && g.seen[i]) {
        maxes.push_back(have ? std::max(carry, g.max[i]) : g.max[i]);
        carry = g.last[i];
        have = true;
        lasts.push_back(carry);
      } else if (have) {
        lasts.push_back(carry);
        maxes.push_back(carry);
      } else {
        lasts.push_back(nullptr);
        maxes.push_back(nullptr);
      }
    }
    ts[name] = std::move(lasts);
    ts_max[name] = std::move(maxes);

    json s;
    if (g.has_window) {
      s["max"] = g.has_before ? std::max(g.before, g.window_max) : g.window_max;
      s["last"] = g.window_last;
    } else if (g.has_before) {
      s["max"] = g.before;
      s["last"] = g.before;
    } else {
      s["max"] = nullptr;  // only samples after the window: nothing inside it
      s["last"] = nullptr;
    }
    summary[name] = std::move(s);
  }
  j["timeseries"] = std::move(ts);
  j["timeseries_max"] = std::move(ts_max);
  j["gauges"] = std::move(summary);
  return j;
}

}  // namespace uringsim::analysis
