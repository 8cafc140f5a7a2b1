#include "models/workloads/fio_params.hpp"

#include <fmt/format.h>

namespace uringsim::models {

FioParams FioParams::from(const config::Scenario& s) {
  FioParams p;
  p.kernel = KernelConfig::from(s);
  p.rw = s.at("/workload/rw").get<std::string>();
  p.rwmixread = s.at("/workload/rwmixread").get<int>();
  p.bs_bytes = s.at("/workload/bs_bytes").get<std::uint32_t>();
  p.iodepth = s.at("/workload/iodepth").get<int>();
  p.numjobs = s.at("/workload/numjobs").get<int>();
  p.sqthread_poll_cpu = s.at("/workload/sqthread_poll_cpu").get<int>();
  p.cpus_allowed = s.at("/workload/cpus_allowed").get<int>();
  p.rate_iops = s.at("/workload/rate_iops").get<double>();
  p.direct = s.at("/workload/direct").get<bool>();
  p.hipri = s.at("/workload/hipri").get<bool>();
  p.sqthread_poll = s.at("/workload/sqthread_poll").get<bool>();
  p.seed = s.at("/seed").get<std::uint64_t>();
  p.setup = RingSetup::from(s, p.kernel, p.sqthread_poll);
  if (p.setup.wait_nr > p.iodepth)
    throw config::InputError(fmt::format("{}: /workload/wait_nr: expected at most iodepth ({}), got {}",
                                         s.source, p.iodepth, p.setup.wait_nr));

  if (p.hipri && !p.direct)
    throw config::InputError(s.source +
                             ": /workload/hipri: hipri (IORING_SETUP_IOPOLL) requires direct=true: polled "
                             "completions exist only for O_DIRECT I/O (the kernel refuses buffered I/O on an "
                             "IOPOLL ring), got direct=false");
  p.hybrid_iopoll = s.at("/workload/hybrid_iopoll").get<bool>();
  p.xfs = s.at("/workload/filesystem").get<std::string>() == "xfs";
  if (p.hybrid_iopoll && !p.hipri)
    throw config::InputError(
        s.source +
        ": /workload/hybrid_iopoll: IORING_SETUP_HYBRID_IOPOLL requires hipri (the kernel "
        "refuses it without IORING_SETUP_IOPOLL), got hipri=false");
  if (p.hybrid_iopoll && !p.kernel.hybrid_iopoll_available)
    throw config::InputError(s.source + ": /workload/hybrid_iopoll: kernel.era " + p.kernel.era +
                             " has no IORING_SETUP_HYBRID_IOPOLL (6.13; era 6.x)");
  if (p.hybrid_iopoll && p.sqthread_poll)
    throw config::InputError(
        s.source +
        ": /workload/hybrid_iopoll: with sqthread_poll the SQ thread polls, and the model "
        "has only its classic polling; use one of the two");
  const int cores = s.at("/machine/cores").get<int>();
  auto check_cpu = [&](int cpu, const char* field) {
    if (cpu >= cores)
      throw config::InputError(
          fmt::format("{}: /workload/{}: expected -1 or a CPU below machine.cores ({}), got {}", s.source,
                      field, cores, cpu));
  };
  check_cpu(p.cpus_allowed, "cpus_allowed");
  check_cpu(p.sqthread_poll_cpu, "sqthread_poll_cpu");
  if (p.iodepth > p.kernel.sq_entries)
    throw config::InputError(
        fmt::format("{}: /workload/iodepth: expected at most kernel.ring.sq_entries ({}), got {}", s.source,
                    p.kernel.sq_entries, p.iodepth));
  p.device = DeviceParams::from(s);
  const bool reads = p.rw == "read" || p.rw == "randread" || (p.rw == "randrw" && p.rwmixread > 0);
  const bool writes = p.rw == "write" || p.rw == "randwrite" || (p.rw == "randrw" && p.rwmixread < 100);
  if (reads) p.device.check_block_size(Op::Read, p.bs_bytes, s.source + ": /workload/bs_bytes");
  if (writes) p.device.check_block_size(Op::Write, p.bs_bytes, s.source + ": /workload/bs_bytes");
  if (p.xfs && p.hipri && writes)
    throw config::InputError(
        s.source +
        ": /workload/filesystem: polled (hipri) O_DIRECT writes on xfs are not modelled (iomap "
        "drops IOCB_HIPRI for writes that need completion work); use filesystem=none or "
        "hipri=false");
  return p;
}

}  // namespace uringsim::models
