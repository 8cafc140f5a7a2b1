#pragma once
// How fast this CPU runs right now: a fixed chain of dependent adds, timed on the calling thread.
// It touches no memory and enters no kernel, so what changes it is the hardware under us: on a VM,
// the physical core's other hyperthread busy with another tenant, or the package's clock (boost).
// Neither shows in other processes' CPU (host/quiet.hpp), and on this project's VM they move the
// loop by up to 1.5x within seconds. Recorded around every host run and in a calibration, so that a
// twin can say how the machine's speed during its host runs compared with the calibration's.
#include <nlohmann/json.hpp>

namespace uringsim::host {

struct SpeedProbe {
  double ns_per_add = 0;  // median of the runs
  double min_ns_per_add = 0, max_ns_per_add = 0;
  int runs = 0;
  nlohmann::json to_json() const;
};

// 7 runs of 2^20 adds (~0.6 ms each at 0.55 ns): a few milliseconds in all.
SpeedProbe probe_cpu_speed();

}  // namespace uringsim::host
