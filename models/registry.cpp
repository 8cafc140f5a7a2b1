#include "models/model.hpp"
#include "models/queue_pool.hpp"
#include "models/workloads/echo.hpp"
#include "models/workloads/fio.hpp"
#include "models/workloads/nop.hpp"
#include "models/workloads/script.hpp"

namespace uringsim::models {

std::unique_ptr<Model> make_model(const config::Scenario& scenario) {
  const std::string type = scenario.at("/workload/type").get<std::string>();
  if (type == "queue") return std::make_unique<QueuePool>(scenario);
  if (type == "echo") return std::make_unique<EchoModel>(EchoParams::from(scenario), scenario.costs);
  if (type == "fio") return std::make_unique<FioModel>(FioParams::from(scenario), scenario.costs);
  if (type == "nop") return std::make_unique<NopModel>(NopParams::from(scenario), scenario.costs);
  if (type == "script") return std::make_unique<ScriptModel>(ScriptParams::from(scenario));
  throw config::InputError(scenario.source + ": /workload/type: no model implements \"" + type + "\"");
}

}  // namespace uringsim::models
