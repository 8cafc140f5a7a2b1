#pragma once
// The scripted workload (workload.type = "script"): named locks and threads that run a list of
// steps (lock, unlock, compute, sleep, locking rules). For tests and teaching of the design-review
// checks: lock-order cycles, deadlocks, violations. See docs/models/checks.md.
#include <memory>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "sim/lock.hpp"

namespace uringsim::models {

class ScriptModel final : public Model {
 public:
  explicit ScriptModel(const config::Scenario& s);  // config::InputError for unknown or duplicate names
  void build(sim::Engine& engine, analysis::RunMetrics& metrics) override;
  void report(nlohmann::json& results) const override;

 private:
  enum class Op { Lock, Unlock, Compute, Sleep, RequireHeld, RequireNotHeld, MaySleep };
  struct Step {
    Op op;
    int lock = -1;  // index into locks_
    sim::Label site = sim::kNoLabel;
    double value = 0;  // cycles (compute) or ns (sleep)
  };
  struct ThreadSpec {
    std::string name;
    int cpu = 0;
    double start_ns = 0;
    int repeat = 1;
    std::vector<Step> steps;
  };
  struct LockSpec {
    std::string name;
    bool spin;
  };
  void run_thread(const ThreadSpec& t);

  std::vector<LockSpec> lock_specs_;
  std::vector<ThreadSpec> threads_;
  std::vector<std::unique_ptr<sim::Lock>> locks_;
  int finished_ = 0;
};

}  // namespace uringsim::models
