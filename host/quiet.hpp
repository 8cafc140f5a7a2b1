#pragma once
// Waiting for the machine to be quiet before a real-kernel run: other processes' CPU disturbs
// what is measured, so `uringsim host --wait-quiet S` waits up to S seconds for it to settle; with
// `--wait-speed NS` also for the CPU speed probe (host/speed_probe.hpp) to read at most NS ns per
// add, since on a VM a busy neighbour slows the CPU without showing in any process's CPU.
#include <nlohmann/json.hpp>

#include "host/guard.hpp"

namespace uringsim::host {

// "Quiet": other processes use less than this much of one CPU, in %.
inline constexpr double kQuietOtherCpuPct = 10;

struct QuietOutcome {
  double waited_s = 0;  // how long it waited
  double other_cpu_pct =
      -1;              // other processes' CPU in the last 200 ms sample (% of one CPU); -1 = not sampled
  bool quiet = false;  // that sample was below the threshold (and the speed probe within its bound)
  int samples = 0;
  double ns_per_add = -1;     // the last sample's speed probe; -1 = not probed
  double max_ns_per_add = 0;  // the bound it was held to; 0 = none

  nlohmann::json to_json() const;  // other_cpu_pct null when not sampled
};

// Samples other processes' CPU (machine busy time minus this process's) over 200 ms, again and
// again, until one sample is below max_other_cpu_pct (and, with max_ns_per_add > 0, the speed
// probe taken after it reads at most that) or max_wait_s has passed (max_wait_s = 0: no sample at
// all). Returns early, unquiet, when the guard is told to stop.
QuietOutcome wait_for_quiet(double max_wait_s, double max_other_cpu_pct, const RunGuard& guard,
                            double max_ns_per_add = 0);

}  // namespace uringsim::host
