#pragma once
// What a system call costs right now: getppid() timed in a loop, as calibrate's null system call
// (machine.syscall_ns). On this project's guest a system call traps to the hypervisor, and what it
// costs follows the host's load: a model run's most telling price (syscall_cycles builds on it)
// drifted by up to 2x within an hour. The CPU speed probe (host/speed_probe.hpp) enters no kernel
// and does not see it. Recorded before every host run, so that a twin can say how the system calls
// of its host runs compared with the calibration's.
#include <nlohmann/json.hpp>

namespace uringsim::host {

struct SyscallProbe {
  double ns = 0;  // median of the runs' means
  double min_ns = 0, max_ns = 0;
  int runs = 0;
  nlohmann::json to_json() const;
};

// 7 runs of 1000 getppid() calls (a few milliseconds in all).
SyscallProbe probe_syscall();

}  // namespace uringsim::host
