#include "models/workloads/echo_params.hpp"

#include <fmt/format.h>

namespace uringsim::models {

EchoParams EchoParams::from(const config::Scenario& s) {
  EchoParams p;
  p.kernel = KernelConfig::from(s);
  p.connections = s.at("/workload/connections").get<int>();
  p.msg_bytes = s.at("/workload/msg_bytes").get<std::uint32_t>();
  p.force_async = s.at("/workload/force_async").get<bool>();
  p.fixed_files = s.at("/workload/fixed_files").get<bool>();
  p.local_clients = s.at("/workload/client_placement").get<std::string>() == "local";
  p.server_work_cycles = s.at("/workload/server_work_cycles").get<double>();
  p.server_nice = s.at("/workload/server_nice").get<int>();
  p.client_threads = s.at("/workload/client_threads").get<int>();
  p.server_cpu = s.at("/workload/server_cpu").get<int>();
  p.client_cpus = s.at("/workload/client_cpus").get<std::vector<int>>();
  p.seed = s.at("/seed").get<std::uint64_t>();
  p.think = Distribution::from_json(s.at("/workload/think"));
  p.setup = RingSetup::from(s, p.kernel, false);
  p.multishot = s.at("/workload/recv_mode").get<std::string>() == "multishot";
  p.buf_ring_entries = s.at("/workload/buf_ring_entries").get<int>();
  if (p.multishot && !era(p.kernel.era).multishot_recv)
    throw config::InputError(fmt::format(
        "{}: /workload/recv_mode: kernel era {} has no IORING_RECV_MULTISHOT (6.0); expected era 6.x",
        s.source, p.kernel.era));

  const int cores = s.at("/machine/cores").get<int>();
  auto check_cpu = [&](int cpu, const std::string& where) {
    if (cpu >= cores)
      throw config::InputError(
          fmt::format("{}: {}: expected a CPU index below machine.cores ({}) or -1, got {}", s.source, where,
                      cores, cpu));
  };
  check_cpu(p.server_cpu, "/workload/server_cpu");
  for (std::size_t i = 0; i < p.client_cpus.size(); ++i)
    check_cpu(p.client_cpus[i], fmt::format("/workload/client_cpus/{}", i));
  return p;
}

}  // namespace uringsim::models
