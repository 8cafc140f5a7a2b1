#include "host/host_run.hpp"

#include "host/echo_runner.hpp"
#include "host/fio_runner.hpp"
#include "host/nop_runner.hpp"

namespace uringsim::host {

// Dispatch on workload.type; each runner lives in its own file.
HostRun run_scenario(const config::Scenario& scenario, const HostOptions& options) {
  const std::string type = scenario.at("/workload/type").get<std::string>();
  if (type == "echo") return run_echo(scenario, options);
  if (type == "nop") return run_nop(scenario, options);
  if (type == "fio") return run_fio(scenario, options);
  throw Unavailable(scenario.source + ": /workload/type: the host runner has no \"" + type +
                    "\" workload (it runs echo, nop and fio)");
}

}  // namespace uringsim::host
