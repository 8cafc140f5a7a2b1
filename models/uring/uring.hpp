#pragma once
// One application thread's io_uring: the task (whose task_work it runs), the io-wq its punted
// requests go to, and the ring. A workload owns one per submitting thread.
#include <nlohmann/json.hpp>

#include "models/cpu_placer.hpp"
#include "models/uring/ctx.hpp"
#include "models/uring/iowq.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/task.hpp"

namespace uringsim::models {

struct Uring {
  Uring(sim::Engine& engine, const KernelConfig& k, const UringCosts& costs, CpuPlacer& placer,
        const RingSetup& setup = RingSetup{})
      : task(costs, k), wq(engine, k, costs, task, placer), ctx(k, costs, task, wq, setup) {}
  Uring(const Uring&) = delete;
  Uring& operator=(const Uring&) = delete;

  // The "iowq", "uring" and "breakdown" sections of results.json.
  void report(nlohmann::json& r) const {
    r["iowq"] = wq.to_json();
    r["uring"] = ctx.to_json();
    r["breakdown"] = ctx.breakdown().to_json();
  }

  Task task;
  IoWq wq;
  IoRingCtx ctx;
};

}  // namespace uringsim::models
