#pragma once
// Requests that runner threads record (ns since t0), handed to the coordinator, which feeds them
// into analysis::RunMetrics (not thread-safe) every sampling step, so memory stays bounded however
// long the run. A runner collects into its own Events and appends them in bulk (once per loop
// iteration), so the hot path takes no lock.
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "analysis/metrics.hpp"

namespace uringsim::host {

struct Events {
  std::vector<double> submitted;                     // t_ns
  std::vector<std::pair<double, double>> completed;  // (t_ns, latency_ns)
  std::uint64_t failed = 0;
  bool empty() const { return submitted.empty() && completed.empty() && failed == 0; }
};

class EventLog {
 public:
  // Moves what `local` holds into the log; `local` is left empty.
  void append(Events& local) {
    if (local.empty()) return;
    std::lock_guard lk(m_);
    shared_.submitted.insert(shared_.submitted.end(), local.submitted.begin(), local.submitted.end());
    shared_.completed.insert(shared_.completed.end(), local.completed.begin(), local.completed.end());
    shared_.failed += local.failed;
    local.submitted.clear();
    local.completed.clear();
    local.failed = 0;
  }
  // Coordinator: everything appended so far goes into metrics.
  // The drained buffers go back as the next ones to fill, capacity kept: runners' appends do
  // not allocate once the log has grown to a sampling step's worth (this is time the host runs
  // spend outside the kernel, which the model does not have).
  void drain_into(analysis::RunMetrics& metrics) {
    {
      std::lock_guard lk(m_);
      std::swap(spare_, shared_);
    }
    for (const double t : spare_.submitted) metrics.submitted(t);
    for (const auto& [t, lat] : spare_.completed) metrics.completed(t, lat);
    for (; spare_.failed > 0; --spare_.failed) metrics.failed();
    spare_.submitted.clear();
    spare_.completed.clear();
  }

 private:
  std::mutex m_;
  Events shared_;
  Events spare_;  // the coordinator's: drained, then handed back to the runners
};

}  // namespace uringsim::host
