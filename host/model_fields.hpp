#pragma once
// Scenario fields that describe the model rather than the run: the kernel design (the host runs
// its own kernel), the cost table, the simulated drive, the simulated machine's size, remote
// clients. The host cannot honour them, so a value other than what this host does is refused,
// or, with --ignore-model-fields, listed in run_info.json `ignored_fields`.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/scenario.hpp"
#include "host/machine_info.hpp"

namespace uringsim::host {

struct ModelField {
  std::string path;      // JSON pointer, e.g. "/kernel/era"
  nlohmann::json value;  // as the scenario has it
  std::string why;       // what the host does instead
};

// Every such field of the scenario whose value the host does not match, in document order.
// Defaults are read from the schema (and the cost table), so a field at its default passes.
std::vector<ModelField> model_only_fields(const config::Scenario& scenario, const MachineInfo& machine);

// Without `ignore`: throws config::InputError naming every such field, one line each. With it:
// returns them as [{path, value, why}] for run_info.json's ignored_fields ([] if none).
nlohmann::json check_model_fields(const config::Scenario& scenario, const MachineInfo& machine, bool ignore);
// The same for a given list: model_only_fields and a runner's own (the fio runner's, for knobs
// fio has no option for).
nlohmann::json check_model_fields(const config::Scenario& scenario, const std::vector<ModelField>& fields,
                                  bool ignore);

}  // namespace uringsim::host
