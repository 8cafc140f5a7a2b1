#pragma once
// Which preemption model the running kernel uses (CONFIG_PREEMPT_*, or preempt= under
// PREEMPT_DYNAMIC): the simulator's machine.preempt. Read from what the kernel exposes, in order of
// authority: debugfs sched/preempt (the live setting), the boot command line, the build config.
#include <string>

namespace uringsim::host {

struct PreemptModel {
  std::string model;   // "none", "voluntary", "full", "lazy"; "" when nothing says
  std::string source;  // where it was read, e.g. "/proc/config.gz CONFIG_PREEMPT_NONE=y"
};

// The current choice in debugfs's "none voluntary (full) lazy" (the one in parentheses), or "".
std::string parse_debugfs_preempt(const std::string& text);
// preempt=... on a kernel command line, or "".
std::string parse_cmdline_preempt(const std::string& cmdline);
// From a kernel .config: the CONFIG_PREEMPT_* choice that is =y, or "". dynamic: whether
// CONFIG_PREEMPT_DYNAMIC=y (then preempt= on the command line overrides the built-in default).
std::string parse_config_preempt(const std::string& config, bool* dynamic = nullptr);

PreemptModel read_preempt_model();

}  // namespace uringsim::host
