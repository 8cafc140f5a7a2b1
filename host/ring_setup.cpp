#include "host/ring_setup.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "config/input_error.hpp"
#include "host/host_run.hpp"
#include "host/machine_info.hpp"

namespace uringsim::host {
namespace {

struct FlagName {
  const char* name;   // as workload.setup_flags has it
  const char* macro;  // include/uapi/linux/io_uring.h
  unsigned bit;
};
constexpr std::array<FlagName, 4> kFlags = {{
    {"coop_taskrun", "IORING_SETUP_COOP_TASKRUN", IORING_SETUP_COOP_TASKRUN},
    {"taskrun_flag", "IORING_SETUP_TASKRUN_FLAG", IORING_SETUP_TASKRUN_FLAG},
    {"single_issuer", "IORING_SETUP_SINGLE_ISSUER", IORING_SETUP_SINGLE_ISSUER},
    {"defer_taskrun", "IORING_SETUP_DEFER_TASKRUN", IORING_SETUP_DEFER_TASKRUN},
}};
// The UAPI's values (include/uapi/linux/io_uring.h): a liburing whose copy differed would send
// the kernel other flags than the scenario names.
static_assert(IORING_SETUP_COOP_TASKRUN == 1U << 8 && IORING_SETUP_TASKRUN_FLAG == 1U << 9 &&
              IORING_SETUP_SINGLE_ISSUER == 1U << 12 && IORING_SETUP_DEFER_TASKRUN == 1U << 13);

}  // namespace

void check_ring_fields(const config::Scenario& s) {
  const int sq = s.at("/kernel/ring/sq_entries").get<int>(), cq = s.at("/kernel/ring/cq_entries").get<int>();
  if (cq != 0 && cq < sq)
    throw config::InputError(
        fmt::format("{}: /kernel/ring/cq_entries: expected 0 or at least kernel.ring.sq_entries ({}), as the "
                    "kernel requires "
                    "with IORING_SETUP_CQSIZE, got {}",
                    s.source, sq, cq));
  check_setup_flags(s);
}

unsigned check_setup_flags(const config::Scenario& s, bool sqpoll) {
  unsigned flags = 0;
  for (const auto& name : s.at("/workload/setup_flags").get<std::vector<std::string>>())
    for (const auto& f : kFlags)
      if (name == f.name) flags |= f.bit;
  auto refuse = [&](const std::string& what) {
    throw config::InputError(
        fmt::format("{}: /workload/setup_flags: {}; the kernel refuses that with -EINVAL, got {}", s.source,
                    what, s.at("/workload/setup_flags").dump()));
  };
  if ((flags & IORING_SETUP_TASKRUN_FLAG) &&
      !(flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_DEFER_TASKRUN)))
    refuse("expected coop_taskrun or defer_taskrun with taskrun_flag");
  if ((flags & IORING_SETUP_DEFER_TASKRUN) && !(flags & IORING_SETUP_SINGLE_ISSUER))
    refuse("expected single_issuer with defer_taskrun");
  if (sqpoll &&
      (flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_DEFER_TASKRUN)))
    refuse(
        "expected none of coop_taskrun, taskrun_flag, defer_taskrun on an SQPOLL ring "
        "(workload.sqthread_poll): "
        "its SQ thread, not the application, runs the task_work");
  return flags;
}

std::vector<std::string> setup_flag_names(unsigned flags) {
  std::vector<std::string> out;
  for (const auto& f : kFlags)
    if (flags & f.bit) out.emplace_back(f.name);
  return out;
}

std::string setup_flag_macros(unsigned flags) {
  std::string out;
  for (const auto& f : kFlags)
    if (flags & f.bit) out += fmt::format("{}{}", out.empty() ? "" : " | ", f.macro);
  return out.empty() ? "no flags" : out;
}

void init_ring(io_uring& ring, const config::Scenario& s) {
  io_uring_params p{};
  const unsigned sq = s.at("/kernel/ring/sq_entries").get<unsigned>(),
                 cq = s.at("/kernel/ring/cq_entries").get<unsigned>();
  const unsigned setup = check_setup_flags(s);
  p.flags = setup;
  if (cq != 0) {
    p.flags |= IORING_SETUP_CQSIZE;
    p.cq_entries = cq;
  }
  if (const int rc = io_uring_queue_init_params(sq, &ring, &p); rc < 0) {
    // The combinations the kernel refuses are checked above, so -EINVAL here is a kernel without
    // one of the flags (before 5.19 / 6.0 / 6.1).
    if (rc == -EINVAL && setup != 0)
      throw Unavailable(fmt::format(
          "/workload/setup_flags: this kernel refuses {} (io_uring_setup: {}); COOP_TASKRUN and TASKRUN_FLAG "
          "need 5.19, SINGLE_ISSUER 6.0, DEFER_TASKRUN 6.1",
          setup_flag_macros(setup), std::strerror(-rc)));
    throw Unavailable(io_uring_unavailable_reason(read_io_uring_disabled(), -rc) +
                      fmt::format(" (a ring of {} SQ / {} CQ entries)", sq, cq));
  }
  unsigned limits[2] = {s.at("/kernel/iowq/max_bound").get<unsigned>(),
                        s.at("/kernel/iowq/max_unbound").get<unsigned>()};
  if (limits[0] == 0 && limits[1] == 0) return;
  if (const int rc = io_uring_register_iowq_max_workers(&ring, limits); rc < 0) {
    io_uring_queue_exit(&ring);
    throw Unavailable(
        fmt::format("kernel.iowq.max_bound/max_unbound: IORING_REGISTER_IOWQ_MAX_WORKERS failed: {}",
                    std::strerror(-rc)));
  }
}

}  // namespace uringsim::host
