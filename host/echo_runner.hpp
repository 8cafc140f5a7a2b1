#pragma once
// The echo workload on the real kernel (docs/host.md, semantics of docs/models/echo.md): one
// io_uring server thread (io_uring_echo_s) over loopback TCP, closed-loop clients in
// client_threads epoll threads (client-<i>).
#include "config/scenario.hpp"
#include "host/host_run.hpp"

namespace uringsim::host {

HostRun run_echo(const config::Scenario& scenario, const HostOptions& options);

}  // namespace uringsim::host
