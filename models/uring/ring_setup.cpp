#include "models/uring/ring_setup.hpp"

#include <fmt/format.h>

#include "config/input_error.hpp"

namespace uringsim::models {

const char* tw_mode_name(TwMode m) {
  switch (m) {
    case TwMode::Signal:
      return "signal";
    case TwMode::Coop:
      return "coop_taskrun";
    case TwMode::Defer:
      return "defer_taskrun";
  }
  return "?";
}

RingSetup RingSetup::from(const config::Scenario& s, const KernelConfig& k, bool sqpoll) {
  RingSetup r;
  const std::string where = s.source + ": /workload/setup_flags";
  for (const auto& f : s.at("/workload/setup_flags")) {
    const auto name = f.get<std::string>();
    if (name == "coop_taskrun") r.coop_taskrun = true;
    if (name == "taskrun_flag") r.taskrun_flag = true;
    if (name == "single_issuer") r.single_issuer = true;
    if (name == "defer_taskrun") r.defer_taskrun = true;
  }
  r.wait_nr = s.at("/workload/wait_nr").get<int>();
  const Era& e = era(k.era);
  auto refuse = [&](const std::string& why) { throw config::InputError(where + ": " + why); };
  if ((r.coop_taskrun || r.taskrun_flag) && !e.coop_taskrun)
    refuse(fmt::format(
        "kernel era {} has no IORING_SETUP_COOP_TASKRUN / TASKRUN_FLAG (5.19); expected era 6.x", k.era));
  if ((r.single_issuer || r.defer_taskrun) && !e.defer_taskrun)
    refuse(fmt::format(
        "kernel era {} has no IORING_SETUP_SINGLE_ISSUER / DEFER_TASKRUN (6.0 / 6.1); expected era 6.x",
        k.era));
  // io_uring_setup's own checks (io_uring/io_uring.c, io_uring_create): -EINVAL otherwise.
  if (r.taskrun_flag && !r.coop_taskrun && !r.defer_taskrun)
    refuse("\"taskrun_flag\" needs \"coop_taskrun\" or \"defer_taskrun\" (the kernel returns -EINVAL)");
  if (r.defer_taskrun && !r.single_issuer)
    refuse("\"defer_taskrun\" needs \"single_issuer\" (the kernel returns -EINVAL)");
  if (sqpoll && (r.coop_taskrun || r.taskrun_flag || r.defer_taskrun))
    refuse(
        "an SQPOLL ring refuses \"coop_taskrun\", \"taskrun_flag\" and \"defer_taskrun\" (its SQ thread "
        "runs the task_work; the kernel returns -EINVAL)");
  return r;
}

}  // namespace uringsim::models
