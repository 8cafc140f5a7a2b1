#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "analysis/format.hpp"
#include "analysis/io.hpp"
#include "config/scenario.hpp"
#include "models/simulation.hpp"
#include "tools/app/commands.hpp"
#include "uringsim_version.hpp"

namespace uringsim::app {

void add_run_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("scenario", o.scenario, "Scenario JSON file")->required();
  cmd.add_option("--out", o.out_dir, "Output directory (default: out/<scenario-name>[/<variant>])");
  cmd.add_option("--seed", o.seed, "Override the scenario's seed")->check(CLI::NonNegativeNumber);
  cmd.add_option("--variant", o.variant, "Apply the named variant of the scenario");
  cmd.add_option("--set", o.sets, "Override a field: dotted.path=value (repeatable)")->take_all();
  cmd.add_flag("--quiet", o.quiet, "Print nothing but errors");
}

int cmd_run(const RunOptions& o) {
  config::Scenario scenario;
  try {
    config::LoadOptions lo;
    lo.variant = o.variant;
    lo.sets = o.sets;
    lo.seed = o.seed;
    scenario = config::load_scenario_file(o.scenario, lo);
  } catch (const config::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  }

  std::string out = o.out_dir;
  if (out.empty()) {
    out = "out/" + scenario.doc.at("name").get<std::string>();
    if (!scenario.variant.empty()) out += "/" + scenario.variant;
  }

  models::RunOutput result;
  try {
    result = models::simulate(scenario, URINGSIM_VERSION);
  } catch (const config::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "simulation failed: " << e.what() << "\n";
    return kExitFailed;
  }

  try {
    analysis::write_file_atomic(out + "/results.json", analysis::dump_json(result.results));
    analysis::write_file_atomic(out + "/run_info.json", analysis::dump_json(result.run_info));
  } catch (const std::exception& e) {
    std::cerr << "error: cannot write results to " << out << ": " << e.what() << "\n";
    return kExitFailed;
  }

  if (!o.quiet) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"scenario", scenario.doc.at("name").get<std::string>() +
                                    (scenario.variant.empty() ? "" : " [" + scenario.variant + "]")});
    for (const auto& [k, v] : result.summary) rows.push_back({k, v});
    rows.push_back({"wall time",
                    fmt::format("{:.2f} s (real-time factor {:.2f})", result.run_info["wall_s"].get<double>(),
                                result.run_info["real_time_factor"].get<double>())});
    rows.push_back({"results", out + "/results.json"});
    std::cout << analysis::render_table({}, rows);
  }
  return result.results.value("deadlock", false) ? kExitFailed : kExitOk;
}

}  // namespace uringsim::app
