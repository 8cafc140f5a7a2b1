#include "host/host_run.hpp"

namespace uringsim::host {

// Dispatch on workload.type; each runner lives in its own file.
HostRun run_scenario(const config::Scenario& scenario, const HostOptions&) {
  throw Unavailable(scenario.source + ": /workload/type: the host runner has no \"" +
                    scenario.at("/workload/type").get<std::string>() + "\" workload yet");
}

}  // namespace uringsim::host
