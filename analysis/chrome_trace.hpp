#pragma once
// A timeline in the Chrome trace-event JSON format, which ui.perfetto.dev and chrome://tracing
// open: one track per simulated thread, slices for code paths and waits, counters, flow arrows.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/trace_sink.hpp"

namespace uringsim::analysis {

class ChromeTrace final : public sim::TraceSink {
 public:
  ChromeTrace(double start_ns, double end_ns) : start_(start_ns), end_(end_ns) {}
  bool in_window(double t0_ns, double t1_ns) const override { return t1_ns >= start_ && t0_ns <= end_; }
  void thread(int tid, const std::string& name, const std::string& comm) override;
  void slice(int tid, std::string_view name, std::string_view category, double t0_ns, double t1_ns) override;
  void counter(std::string_view name, double t_ns, double value) override;
  void flow(std::uint64_t id, char phase, int tid, double t_ns, std::string_view name) override;
  std::string to_json() const;  // {"traceEvents": [...], "displayTimeUnit": "ns", ...}
  std::size_t size() const { return events_.size(); }

 private:
  double start_, end_;
  nlohmann::json threads_ = nlohmann::json::array();
  std::vector<nlohmann::json> events_;
};

}  // namespace uringsim::analysis
