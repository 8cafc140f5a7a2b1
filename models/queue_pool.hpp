#pragma once
// The first model: a queue served by a worker pool (workload.type = "queue").
// A producer thread generates jobs; they go on a work list under a spinlock; c workers take them
// and execute the service time as CPU work; idle workers sleep on a wait queue. With exponential
// times and zero lock/wake costs this is M/M/c; with constant service, M/D/c. Used to validate the
// engine and the primitives against closed forms.
#include <deque>
#include <memory>
#include <vector>

#include "models/distribution.hpp"
#include "models/model.hpp"
#include "sim/lock.hpp"
#include "sim/waitqueue.hpp"

namespace uringsim::models {

class QueuePool final : public Model {
 public:
  explicit QueuePool(const config::Scenario& s);
  void build(sim::Engine& engine, analysis::RunMetrics& metrics) override;
  void report(nlohmann::json& results) const override;
  std::vector<std::pair<std::string, std::string>> summary() const override;
  std::string latency_measure() const override;

 private:
  struct Job {
    sim::TimeNs arrival_ns;
    sim::TimeNs service_ns;
  };
  void producer();
  void worker();
  nlohmann::json theory() const;

  int servers_;
  int cores_;
  std::uint64_t seed_;
  Distribution arrival_, service_;
  sim::Engine* engine_ = nullptr;
  analysis::RunMetrics* metrics_ = nullptr;
  std::unique_ptr<sim::SpinLock> lock_;
  std::unique_ptr<sim::WaitQueue> idle_;  // made in build(): named queues register with the engine
  std::deque<Job> list_;
  // Per job completed inside the measurement window, in completion order (for batch-means CIs).
  // Whether it waited is one bit: the batch means of a 0/1 series are counts (waited_ci()).
  std::vector<double> response_ns_;
  std::vector<bool> waited_;
  std::size_t peak_queue_ = 0;
};

}  // namespace uringsim::models
