#include "models/workloads/nop_params.hpp"

#include <fmt/format.h>

namespace uringsim::models {

NopParams NopParams::from(const config::Scenario& s) {
  NopParams p;
  p.kernel = KernelConfig::from(s);
  p.depth = s.at("/workload/depth").get<int>();
  p.force_async = s.at("/workload/force_async").get<bool>();
  p.cpu = s.at("/workload/cpu").get<int>();
  p.setup = RingSetup::from(s, p.kernel, false);

  const int cores = s.at("/machine/cores").get<int>();
  if (p.cpu >= cores)
    throw config::InputError(fmt::format(
        "{}: /workload/cpu: expected -1 or a CPU below machine.cores ({}), got {}", s.source, cores, p.cpu));
  if (p.depth > p.kernel.sq_entries)
    throw config::InputError(
        fmt::format("{}: /workload/depth: expected at most kernel.ring.sq_entries ({}), got {}", s.source,
                    p.kernel.sq_entries, p.depth));
  return p;
}

}  // namespace uringsim::models
