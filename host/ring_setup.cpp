#include "host/ring_setup.hpp"

#include <cstring>

#include <fmt/format.h>

#include "config/input_error.hpp"
#include "host/host_run.hpp"
#include "host/machine_info.hpp"

namespace uringsim::host {

void check_ring_fields(const config::Scenario& s) {
  const int sq = s.at("/kernel/ring/sq_entries").get<int>(), cq = s.at("/kernel/ring/cq_entries").get<int>();
  if (cq != 0 && cq < sq)
    throw config::InputError(
        fmt::format("{}: /kernel/ring/cq_entries: expected 0 or at least kernel.ring.sq_entries ({}), as the "
                    "kernel requires "
                    "with IORING_SETUP_CQSIZE, got {}",
                    s.source, sq, cq));
}

void init_ring(io_uring& ring, const config::Scenario& s) {
  io_uring_params p{};
  const unsigned sq = s.at("/kernel/ring/sq_entries").get<unsigned>(),
                 cq = s.at("/kernel/ring/cq_entries").get<unsigned>();
  if (cq != 0) {
    p.flags |= IORING_SETUP_CQSIZE;
    p.cq_entries = cq;
  }
  if (const int rc = io_uring_queue_init_params(sq, &ring, &p); rc < 0)
    throw Unavailable(io_uring_unavailable_reason(read_io_uring_disabled(), -rc) +
                      fmt::format(" (a ring of {} SQ / {} CQ entries)", sq, cq));
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
