#include "analysis/chrome_trace.hpp"

#include <algorithm>

namespace uringsim::analysis {
namespace {
constexpr int kPid = 1;  // one simulated machine
double us(double ns) {
  return ns / 1e3;
}  // trace-event timestamps are microseconds
}  // namespace

void ChromeTrace::thread(int tid, const std::string& name, const std::string& comm) {
  threads_.push_back(
      {{"ph", "M"}, {"name", "thread_name"}, {"pid", kPid}, {"tid", tid}, {"args", {{"name", name}}}});
  // Sort tracks by thread class, as perf groups by command.
  threads_.push_back({{"ph", "M"},
                      {"name", "thread_sort_index"},
                      {"pid", kPid},
                      {"tid", tid},
                      {"args", {{"sort_index", tid}}}});
  (void)comm;
}

void ChromeTrace::slice(int tid, std::string_view name, std::string_view category, double t0_ns,
                        double t1_ns) {
  if (!in_window(t0_ns, t1_ns) || t1_ns < t0_ns) return;
  const double a = std::max(t0_ns, start_), b = std::min(t1_ns, end_);
  events_.push_back({{"ph", "X"},
                     {"pid", kPid},
                     {"tid", tid},
                     {"name", name},
                     {"cat", category},
                     {"ts", us(a)},
                     {"dur", us(b - a)}});
}

void ChromeTrace::counter(std::string_view name, double t_ns, double value) {
  if (!in_window(t_ns, t_ns)) return;
  events_.push_back(
      {{"ph", "C"}, {"pid", kPid}, {"name", name}, {"ts", us(t_ns)}, {"args", {{"value", value}}}});
}

void ChromeTrace::flow(std::uint64_t id, char phase, int tid, double t_ns, std::string_view name) {
  if (!in_window(t_ns, t_ns)) return;
  events_.push_back({{"ph", "X"},
                     {"pid", kPid},
                     {"tid", tid},
                     {"name", name},
                     {"cat", kFlowCategory},
                     {"ts", us(t_ns)},
                     {"dur", 0}});
  if (phase == 's') {
    if (!open_flows_.insert(id).second) return;  // one start per flow
  } else if (!open_flows_.count(id)) {
    return;  // its start is outside the window (or it has finished)
  } else if (phase == 'f') {
    open_flows_.erase(id);
  }
  nlohmann::json e = {{"ph", std::string(1, phase)}, {"pid", kPid}, {"tid", tid},    {"name", kFlowName},
                      {"cat", kFlowCategory},        {"id", id},    {"ts", us(t_ns)}};
  if (phase != 's') e["bp"] = "e";  // bind to the enclosing slice: the step's own
  events_.push_back(std::move(e));
}

std::string ChromeTrace::to_json() const {
  nlohmann::json all = threads_;
  // Stable order by time keeps the file deterministic and viewers happy.
  std::vector<const nlohmann::json*> sorted;
  for (const auto& e : events_) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const nlohmann::json* a, const nlohmann::json* b) {
    return a->at("ts").get<double>() < b->at("ts").get<double>();
  });
  for (const auto* e : sorted) all.push_back(*e);
  return nlohmann::json{{"traceEvents", all},
                        {"displayTimeUnit", "ns"},
                        {"otherData", {{"window_ns", {start_, end_}}, {"source", "uringsim"}}}}
      .dump();
}

}  // namespace uringsim::analysis
