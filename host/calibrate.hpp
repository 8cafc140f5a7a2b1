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
  // Before each pass, wait up to quiet_wait_s for other processes to go quiet (host/quiet.hpp),
  // and with max_ns_per_add > 0 for the CPU speed probe to read at most that. With it, a pass whose
  // probe still reads over it, at its start or at its end, is dropped and another run in its place,
  // up to 2 * passes in all (config::CalibrationPasses records how many).
  double quiet_wait_s = 0;
  double max_ns_per_add = 0;
  std::function<void(const std::string&)> progress;  // one line per step; empty = silent
};

// Throws Unavailable (io_uring or the CPU clock missing; nothing was measured), Interrupted
// (SIGINT/SIGTERM), std::runtime_error (a benchmark failed, the hard time limit, or every pass
// dropped as slowed).
config::Calibration calibrate(const CalibrateOptions& options);

}  // namespace uringsim::host
