#pragma once
// Where a timeline goes, if one is recorded: the engine and the models report thread slices,
// counters and request flows to a sink; analysis/ writes them as a Chrome/Perfetto trace.
// Times are simulated ns. A sink only receives events inside its window.
#include <cstdint>
#include <string>
#include <string_view>

namespace uringsim::sim {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual bool in_window(double t0_ns, double t1_ns) const = 0;
  virtual void thread(int tid, const std::string& name, const std::string& comm) = 0;
  virtual void slice(int tid, std::string_view name, std::string_view category, double t0_ns,
                     double t1_ns) = 0;
  virtual void counter(std::string_view name, double t_ns, double value) = 0;
  // A request's path across threads: phase 's' (start), 't' (step) or 'f' (finish), same id.
  virtual void flow(std::uint64_t id, char phase, int tid, double t_ns, std::string_view name) = 0;
};

}  // namespace uringsim::sim
