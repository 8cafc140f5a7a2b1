#pragma once
// What a system call costs right now: getppid() timed in a loop, as calibrate's null system call
// (machine.syscall_ns). On this project's PVM guest each system call goes through the hypervisor
// (getppid ~1 us), so its price may follow the host's load, and the model is most sensitive to it
// (syscall_cycles builds on it). The CPU speed probe (host/speed_probe.hpp) enters no kernel and
// would not see it. Recorded before every host run, so that a twin can say how the system calls of
// its host runs compared with the calibration's.
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
