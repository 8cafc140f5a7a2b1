#pragma once
// What `uringsim host` records about the machine it runs on (run_info.json), and whether this
// kernel lets us use io_uring with the operations a workload needs.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

struct io_uring_probe;

namespace uringsim::host {

struct MachineInfo {
  std::string kernel_release;  // uname -r
  int kernel_major = 0, kernel_minor = 0;
  std::string cpu_model;  // /proc/cpuinfo "model name" (first CPU), "" if absent
  int nproc = 0;          // online CPUs
  double ghz_nominal = 0;
  std::string ghz_source;               // "model name" (its "@ x.xxGHz") or "cpu MHz" (the current clock)
  std::string date;                     // UTC, ISO-8601, e.g. 2025-01-31T12:00:00Z
  std::string preempt, preempt_source;  // the kernel's preemption model (host/preempt_model.hpp)

  nlohmann::json to_json() const;
};

MachineInfo machine_info();

// A small text file's contents (/proc, /sys), "" if it cannot be read.
std::string read_text(const std::string& path);

// "major.minor" at the start of a kernel release string; {0, 0} if it does not start so.
std::pair<int, int> parse_kernel_version(const std::string& release);

// The nominal clock from /proc/cpuinfo text: "@ 2.20GHz" in the model name if present, else
// "cpu MHz" / 1000; {0, ""} when neither is there.
std::pair<double, std::string> nominal_ghz(const std::string& cpuinfo);

// Why io_uring cannot be used, or "" if it can: from kernel.io_uring_disabled (-1 = unknown; 0 all
// may, 1 only members of kernel.io_uring_group, 2 nobody) and the errno of io_uring_queue_init
// (0 = it worked).
std::string io_uring_unavailable_reason(int io_uring_disabled, int init_errno);

// /proc/sys/kernel/io_uring_disabled, or -1 when the kernel has no such setting (before 6.6).
int read_io_uring_disabled();

// The names of the ops (IORING_OP_*) that the probe does not list as supported.
std::vector<std::string> missing_ops(const io_uring_probe& probe, const std::vector<int>& ops);

// Throws host::Unavailable naming what is missing: io_uring itself (disabled, not built,
// forbidden) or one of the ops. Creates and destroys a small ring to find out.
void require_io_uring(const std::vector<int>& ops);

// "IORING_OP_RECV" for IORING_OP_RECV, "IORING_OP_<n>" for an op this file does not name.
std::string op_name(int op);

}  // namespace uringsim::host
