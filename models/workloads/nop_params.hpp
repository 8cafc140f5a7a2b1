#pragma once
// The NOP workload's parameters (scenario `workload`, type "nop"), read and checked once.
#include "config/scenario.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/ring_setup.hpp"

namespace uringsim::models {

struct NopParams {
  RingSetup setup;      // the ring's setup flags and wait_nr
  KernelConfig kernel;  // the submitter's ring
  int depth = 0;        // NOPs per batch
  bool force_async = false;
  int cpu = -1;  // -1 = not pinned

  // config::InputError for a CPU at or above machine.cores or a batch larger than the SQ ring.
  static NopParams from(const config::Scenario& s);
};

}  // namespace uringsim::models
