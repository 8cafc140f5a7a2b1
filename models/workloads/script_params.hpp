#pragma once
// The scripted workload's parameters (scenario `workload`, type "script"): its locks and threads,
// each thread's steps resolved to lock indices and interned call sites.
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "sim/label.hpp"

namespace uringsim::models {

struct ScriptParams {
  enum class Op { Lock, Unlock, Compute, Sleep, RequireHeld, RequireNotHeld, MaySleep };
  struct Step {
    Op op;
    int lock = -1;  // index into locks
    sim::Label site = sim::kNoLabel;
    double value = 0;  // cycles (compute) or ns (sleep)
  };
  struct Thread {
    std::string name;
    int cpu = 0;
    double start_ns = 0;
    int repeat = 1;
    std::vector<Step> steps;
  };
  struct Lock {
    std::string name;
    bool spin;
  };
  std::vector<Lock> locks;
  std::vector<Thread> threads;

  // config::InputError for unknown or duplicate names and CPUs at or above machine.cores.
  static ScriptParams from(const config::Scenario& s);
};

}  // namespace uringsim::models
