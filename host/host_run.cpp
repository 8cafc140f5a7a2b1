#include "host/host_run.hpp"

#include "host/fio_runner.hpp"

namespace uringsim::host {

// Dispatch on workload.type; each runner lives in its own file.
HostRun run_scenario(const config::Scenario& scenario, const HostOptions& options) {
  if (scenario.at("/workload/type") == "fio") return run_fio(scenario, options);
  throw Unavailable(scenario.source + ": /workload/type: the host runner has no \"" +
                    scenario.at("/workload/type").get<std::string>() + "\" workload yet");
}

}  // namespace uringsim::host
