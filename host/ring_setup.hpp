#pragma once
// The io_uring instance of a host runner as the scenario describes it: kernel.ring's sizes and
// kernel.iowq's worker limits. Created by the thread that submits to it, so the io-wq workers
// are that thread's (their CPU shows as iou-wrk).
#include <liburing.h>

#include "config/scenario.hpp"

namespace uringsim::host {

// config::InputError for ring sizes the kernel refuses (cq_entries below sq_entries).
void check_ring_fields(const config::Scenario& scenario);

// io_uring_queue_init_params with sq_entries (and IORING_SETUP_CQSIZE when cq_entries is set), then
// IORING_REGISTER_IOWQ_MAX_WORKERS when max_bound or max_unbound is nonzero (0 leaves the kernel
// default). host::Unavailable when the kernel refuses either.
void init_ring(io_uring& ring, const config::Scenario& scenario);

}  // namespace uringsim::host
