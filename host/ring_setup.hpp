#pragma once
// The io_uring instance of a host runner as the scenario describes it: kernel.ring's sizes,
// kernel.iowq's worker limits and workload.setup_flags. Created by the thread that submits to it,
// so the io-wq workers are that thread's (their CPU shows as iou-wrk) and SINGLE_ISSUER /
// DEFER_TASKRUN name that thread as the ring's one submitter.
#include <liburing.h>

#include <string>
#include <vector>

#include "config/scenario.hpp"

namespace uringsim::host {

// config::InputError for ring sizes the kernel refuses (cq_entries below sq_entries), and for
// setup_flags combinations it refuses (check_setup_flags, without SQPOLL).
void check_ring_fields(const config::Scenario& scenario);

// workload.setup_flags as IORING_SETUP_* bits (values of include/uapi/linux/io_uring.h, which
// liburing 2.3's copy has). Throws config::InputError naming /workload/setup_flags for what
// io_uring_setup would refuse with -EINVAL (io_uring/io_uring.c, io_uring_create): taskrun_flag
// without coop_taskrun or defer_taskrun, defer_taskrun without single_issuer, and with `sqpoll`
// any of coop_taskrun, taskrun_flag, defer_taskrun.
unsigned check_setup_flags(const config::Scenario& scenario, bool sqpoll = false);

// The scenario's names for the bits of `flags` that setup_flags can hold, in the schema's order
// (coop_taskrun, taskrun_flag, single_issuer, defer_taskrun).
std::vector<std::string> setup_flag_names(unsigned flags);
// "IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER", or "no flags".
std::string setup_flag_macros(unsigned flags);

// io_uring_queue_init_params with sq_entries, the setup flags (and IORING_SETUP_CQSIZE when
// cq_entries is set), then IORING_REGISTER_IOWQ_MAX_WORKERS when max_bound or max_unbound is
// nonzero (0 leaves the kernel default). host::Unavailable when the kernel refuses either; a
// refusal with setup flags names them.
void init_ring(io_uring& ring, const config::Scenario& scenario);

}  // namespace uringsim::host
