#pragma once
// A timeline in the Chrome trace-event JSON format, which ui.perfetto.dev and chrome://tracing
// open: one track per simulated thread, slices for code paths and waits, counters, flow arrows.
//
// Flow arrows: Perfetto joins the steps of a flow by (id, cat, name), so every flow event of a
// request is named kFlowName in category kFlowCategory. Each step is also a zero-length slice
// named after the step ("punt to io-wq"), written just before its flow event at the same time
// and on the same thread: the slice the step binds to. Steps of requests whose start fell outside
// the window are left out (a flow must begin with its start); their slices stay.
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/trace_sink.hpp"

namespace uringsim::analysis {

class ChromeTrace final : public sim::TraceSink {
 public:
  static constexpr const char* kFlowName = "request";
  static constexpr const char* kFlowCategory = "request";

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
  std::set<std::uint64_t> open_flows_;  // started in the window, not finished
};

}  // namespace uringsim::analysis
