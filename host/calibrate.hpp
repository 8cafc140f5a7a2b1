#pragma once
// `uringsim calibrate`: micro-benchmarks of this machine's kernel (syscalls, NOP batches, io-wq,
// futex wake-ups, loopback TCP, async poll, locks and cache lines), turned into a calibration file
// (config/calibration.hpp). Loopback only, threads pinned, bounded by a host::RunGuard. What each
// benchmark isolates and how entries are separated: docs/host.md (Calibrate).
#include <functional>
#include <string>

#include "config/calibration.hpp"
#include "host/host_run.hpp"

namespace uringsim::host {

struct CalibrateOptions {
  bool quick = false;  // ~10x fewer repetitions: a few seconds
  // The whole set of benchmarks this many times, gap_s apart; every entry is the median over all
  // passes' rounds. A VM's costs drift over minutes (loopback TCP by up to 2x): passes spread over
  // the time of a twin's host runs sample what those runs saw.
  int passes = 1;
  double gap_s = 0;
  std::function<void(const std::string&)> progress;  // one line per step; empty = silent
};

// Throws Unavailable (io_uring or the CPU clock missing; nothing was measured), Interrupted
// (SIGINT/SIGTERM), std::runtime_error (a benchmark failed, or the hard time limit).
config::Calibration calibrate(const CalibrateOptions& options);

}  // namespace uringsim::host
