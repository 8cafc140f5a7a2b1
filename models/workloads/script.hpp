#pragma once
// The scripted workload (workload.type = "script"): named locks and threads that run a list of
// steps (lock, unlock, compute, sleep, locking rules). For tests and teaching of the design-review
// checks: lock-order cycles, deadlocks, violations. See docs/models/checks.md.
#include <memory>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "models/workloads/script_params.hpp"
#include "sim/lock.hpp"

namespace uringsim::models {

class ScriptModel final : public Model {
 public:
  explicit ScriptModel(ScriptParams p);
  void build(sim::Engine& engine, analysis::RunMetrics& metrics) override;
  void report(nlohmann::json& results) const override;

 private:
  void run_thread(const ScriptParams::Thread& t);

  ScriptParams p_;
  std::vector<std::unique_ptr<sim::Lock>> locks_;
  int finished_ = 0;
};

}  // namespace uringsim::models
