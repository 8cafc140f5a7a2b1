#pragma once
// The scenario's fio workload run by the real fio (Debian's /usr/bin/fio, found on PATH) on this
// machine's kernel, with the job file export-fio writes (tools/app/scenario_to_fio). docs/host.md (fio on the
// host).
#include "config/scenario.hpp"
#include "host/host_run.hpp"

namespace uringsim::host {

// The target is options.target, or a 256 MiB file written in a new temporary directory (removed
// afterwards, also on error or SIGINT/SIGTERM). fio runs as a child process bounded by a hard
// timeout (ramp + runtime + a margin: then SIGTERM, then SIGKILL, to that child only); its CPU is
// sampled from /proc/<fio pid>/task at the window's start and end. Throws Unavailable when fio is
// missing, io_uring is unusable, or the target cannot be used as the job needs (missing, a
// directory, not writable, O_DIRECT or polled I/O refused, a CPU that is not here); Interrupted on
// SIGINT/SIGTERM; std::runtime_error when fio fails or times out.
HostRun run_fio(const config::Scenario& scenario, const HostOptions& options);

}  // namespace uringsim::host
