#include "host/syscall_probe.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

#include "host/probe_runs.hpp"

namespace uringsim::host {
namespace {

constexpr int kRuns = 7;
constexpr int kCalls = 1000;

double one_run_ns_per_call() {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (int i = 0; i < kCalls; ++i) ::syscall(SYS_getppid);  // not cached by libc: a real entry
  const auto t1 = Clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / kCalls;
}

}  // namespace

nlohmann::json SyscallProbe::to_json() const {
  return {{"ns", ns}, {"min_ns", min_ns}, {"max_ns", max_ns}, {"runs", runs}};
}

SyscallProbe probe_syscall() {
  const ProbeRuns r = repeat_probe(kRuns, one_run_ns_per_call);
  return {r.median, r.min, r.max, r.runs};
}

}  // namespace uringsim::host
