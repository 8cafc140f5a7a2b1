#pragma once
// The NOP workload on the real kernel (docs/host.md, semantics of the model's nop workload): one
// thread, nop_test, submits batches of `depth` IORING_OP_NOP (IOSQE_ASYNC with force_async) and
// waits for each whole batch.
#include "config/scenario.hpp"
#include "host/host_run.hpp"

namespace uringsim::host {

HostRun run_nop(const config::Scenario& scenario, const HostOptions& options);

}  // namespace uringsim::host
