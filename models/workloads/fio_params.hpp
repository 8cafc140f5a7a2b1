#pragma once
// The fio workload's parameters (scenario `workload`, type "fio", and the drive it runs on), read
// and checked once. Fields are named after fio's options.
#include <cstdint>
#include <string>

#include "config/scenario.hpp"
#include "models/block/nvme.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/ring_setup.hpp"

namespace uringsim::models {

struct FioParams {
  RingSetup setup;      // the ring's setup flags and wait_nr
  KernelConfig kernel;  // every job's ring
  std::string rw;       // read, randread, write, randwrite, randrw
  int rwmixread = 0;
  std::uint32_t bs_bytes = 0;
  int iodepth = 0, numjobs = 0;
  int sqthread_poll_cpu = -1, cpus_allowed = -1;  // -1 = not pinned
  double rate_iops = 0;                           // 0 = unpaced
  bool direct = false, hipri = false, sqthread_poll = false;
  bool hybrid_iopoll = false;  // IORING_SETUP_HYBRID_IOPOLL (with hipri)
  bool xfs = false;            // filesystem = "xfs": a preallocated file on XFS, not the raw device
  std::uint64_t seed = 0;
  DeviceParams device;

  // config::InputError for hipri without direct, hybrid_iopoll without hipri (or on SQPOLL, or in an
  // era without it), hipri writes on xfs, a CPU at or above machine.cores, a depth larger
  // than the SQ ring, or a block size the drive's table does not list.
  static FioParams from(const config::Scenario& s);
};

}  // namespace uringsim::models
