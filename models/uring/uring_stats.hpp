#pragma once
// One ring's counters. Its pieces (CQ ring, submission, issue paths, IOPOLL) each count what they
// do into the same struct: the "uring" section of results.json reads it whole.
#include <cstdint>

namespace uringsim::models {

struct UringStats {
  std::uint64_t sqes_submitted = 0, cqes_posted = 0, cq_overflowed = 0;
  std::uint64_t inline_completed = 0, poll_armed = 0, poll_ready_at_arm = 0, poll_woken = 0;
  std::uint64_t punted = 0, punt_non_pollable = 0, reissued_to_iowq = 0, iowq_completed = 0,
                worker_blocked = 0, iowq_cancelled = 0;
  // SQ-ring (SQPOLL / IOPOLL) paths
  std::uint64_t sq_wakeup_enters = 0, deputy_calls = 0, deputy_submitted = 0, sq_thread_submitted = 0;
  std::uint64_t iopoll_passes = 0, iopoll_reaped = 0, irq_completions = 0;
  // multishot receive: CQEs with IORING_CQE_F_MORE (not completions), buffer selects that found
  // the provided buffer ring empty
  std::uint64_t multishot_cqes = 0, buf_ring_empty = 0;
  std::uint64_t iopoll_sleeps = 0;  // HYBRID_IOPOLL: sleeps of the poller before it spins
  double iopoll_slept_ns = 0;
};

}  // namespace uringsim::models
