// Per-run measurement: request counters, windowed latency/throughput and gauge time series.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/histogram.hpp"

namespace uringsim::analysis {

struct MetricsConfig {
  double warmup_ns;                 // measurement window starts here (inclusive)
  double end_ns;                    // ... and ends here (inclusive); must be > warmup_ns
  std::vector<double> percentiles;  // reported in addition to the fixed 50, 90, 99, 99.9
  double interval_ns;               // time-series bucket width; 0 disables the time series
};

// Fed by the simulator in simulated ns. Latency and throughput only count completions whose completion
// time lies in [warmup_ns, end_ns]; request counters cover the whole run. Output is deterministic for a
// deterministic call sequence (series are kept in sorted maps, ties resolve by call order).
class RunMetrics {
 public:
  // Percentiles always reported, whatever the config adds.
  static const std::vector<double>& default_percentiles();
  // Guards against a tiny interval allocating unbounded memory.
  static constexpr std::size_t kMaxIntervals = 10'000'000;

  // Throws std::invalid_argument for a non-finite or empty window, negative warm-up, a negative interval,
  // more than kMaxIntervals intervals, or a percentile outside (0, 100].
  explicit RunMetrics(MetricsConfig cfg);

  // A request entered the system.
  void submitted(double t_ns);
  // A request finished after latency_ns (finite, >= 0, else std::invalid_argument). Always counted in
  // requests; recorded in latency/throughput only inside the window.
  void completed(double t_ns, double latency_ns);
  // A request finished with an error (e.g. -ECANCELED): it leaves the system but is not a
  // completion (no latency, no throughput).
  void failed() { ++failed_; }
  // Gauge sample (e.g. "iowq.workers_running"). A gauge holds its value until the next sample, so each
  // interval reports the last value set by its end and the max over the interval including the value
  // carried in from before it. Samples after end_ns are ignored; samples before warmup_ns only set the
  // carried-in value. Names must be non-empty and not clash with the fixed time-series keys.
  void sample(const std::string& series, double t_ns, double value);

  // Keys: throughput.ops_per_s; latency_us.{count,mean,min,max,p50,p90,p99,p999,...,bins};
  // requests.{submitted,completed,failed,in_flight_at_end};
  // window.{start_ms,end_ms,seconds,completions,submitted};
  // timeseries.{interval_ms,t_ms,throughput_ops_per_s,<gauge>...} (t_ms = interval start, absolute
  // simulated time; gauge arrays hold the last value, null before the first sample);
  // timeseries_max.<gauge> (per-interval max); gauges.<gauge>.{max,last} over the window.
  nlohmann::json to_json() const;

  const MetricsConfig& config() const { return cfg_; }
  // All reported percentiles: the defaults plus the configured ones, sorted, without duplicates.
  const std::vector<double>& reported_percentiles() const { return percentiles_; }
  const LatencyHistogram& latency() const { return latency_; }
  std::uint64_t submitted_count() const { return submitted_; }
  std::uint64_t completed_count() const { return completed_; }
  // Signed so that a caller bug (more completions than submissions) shows instead of wrapping.
  std::int64_t in_flight() const {
    return static_cast<std::int64_t>(submitted_) - static_cast<std::int64_t>(completed_) -
           static_cast<std::int64_t>(failed_);
  }
  std::uint64_t window_completions() const { return latency_.count(); }
  // Submissions whose time lies in the window (the measured arrival count).
  std::uint64_t window_submissions() const { return window_submitted_; }
  double window_seconds() const { return (cfg_.end_ns - cfg_.warmup_ns) / 1e9; }
  double throughput_ops_per_s() const { return static_cast<double>(window_completions()) / window_seconds(); }
  std::size_t interval_count() const { return interval_completions_.size(); }

  // Adds other's requests, latencies and completions per interval, as if they had been recorded
  // here: each host runner thread records its own (no buffer shared across CPUs, which slowed the
  // runners), and the run's metrics are merged after they stop. Throws std::invalid_argument when
  // the configurations differ or other holds gauges (only the coordinator samples those).
  void merge(const RunMetrics& other);

 private:
  struct Gauge {
    bool has_before = false;  // a value was set before the window opened
    double before = 0.0;
    bool has_window = false;  // at least one sample inside the window
    double window_last = 0.0;
    double window_max = 0.0;
    std::vector<double> last;         // per interval, valid where seen[i]
    std::vector<double> max;          // per interval, samples only (carry-in is added on output)
    std::vector<unsigned char> seen;  // per interval
  };

  bool in_window(double t_ns) const { return t_ns >= cfg_.warmup_ns && t_ns <= cfg_.end_ns; }
  std::size_t interval_of(double t_ns) const;
  double interval_start(std::size_t i) const;
  double interval_end(std::size_t i) const;

  MetricsConfig cfg_;
  std::vector<double> percentiles_;
  LatencyHistogram latency_;
  std::uint64_t submitted_ = 0;
  std::uint64_t completed_ = 0;
  std::uint64_t failed_ = 0;
  std::uint64_t window_submitted_ = 0;
  std::vector<std::uint64_t> interval_completions_;
  std::map<std::string, Gauge> gauges_;
};

}  // namespace uringsim::analysis
