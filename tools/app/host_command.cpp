// `uringsim host SCENARIO`: runs the scenario's workload on this machine's kernel (host/, liburing)
// and writes results.json in the simulator's schema with "source": "host" (docs/host.md). Bad
// input, a model-only field or a missing io_uring feature exits 2, an interrupted run 128 + signal,
// a failed run 1; in all of these nothing is written.
#include <fmt/format.h>

#include <iostream>

#include "analysis/format.hpp"
#include "analysis/io.hpp"
#include "analysis/results_check.hpp"
#include "host/guard.hpp"
#include "host/host_run.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/load_scenario.hpp"
#include "uringsim_version.hpp"

namespace uringsim::app {

void add_host_options(CLI::App& cmd, HostCommandOptions& o) {
  cmd.add_option("scenario", o.scenario, "Scenario JSON file")->required();
  cmd.add_option("--out", o.out_dir, "Output directory (default: out/<scenario-name>[/<variant>]/host)");
  cmd.add_option("--variant", o.variant, "Apply the named variant of the scenario");
  cmd.add_option("--set", o.sets, "Override a field: dotted.path=value (repeatable)")->take_all();
  cmd.add_option("--seed", o.seed, "Override the scenario's seed (the clients' think times)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_flag("--ignore-model-fields", o.ignore_model_fields,
               "Run even if the scenario sets fields only the model honours; list them in run_info.json");
  cmd.add_option("--target", o.target, "fio workloads: the file or block device to run on");
  cmd.add_option("--wait-quiet", o.wait_quiet_s,
                 "Wait up to SECONDS for other processes to use less than 10% of a CPU before starting")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--wait-speed", o.wait_speed_ns,
                 "With --wait-quiet: also wait for the CPU speed probe to read at most NS ns per dependent "
                 "add (a VM's busy neighbour slows the CPU without showing in any process)")
      ->check(CLI::PositiveNumber);
  cmd.add_flag("--quiet", o.quiet, "Print nothing but errors");
}

int cmd_host(const HostCommandOptions& o) {
  const auto loaded = load_for_command(o.scenario, o.variant, o.sets, o.seed);
  if (!loaded) return kExitBadInput;
  const config::Scenario& scenario = *loaded;
  if (o.wait_speed_ns > 0 && o.wait_quiet_s <= 0) {
    std::cerr << "error: --wait-speed needs --wait-quiet SECONDS: how long it may wait\n";
    return kExitBadInput;
  }
  if (!o.target.empty() && scenario.at("/workload/type") != "fio") {
    std::cerr << "error: --target applies only to fio workloads\n";
    return kExitBadInput;
  }
  std::string out = o.out_dir;
  if (out.empty()) {
    out = "out/" + scenario.doc.at("name").get<std::string>();
    if (!scenario.variant.empty()) out += "/" + scenario.variant;
    out += "/host";
  }

  host::HostOptions ho;
  ho.ignore_model_fields = o.ignore_model_fields;
  ho.target = o.target;
  ho.quiet_wait_s = o.wait_quiet_s;
  ho.quiet_max_ns_per_add = o.wait_speed_ns;
  ho.quiet = o.quiet;
  ho.tool_version = URINGSIM_VERSION;
  host::HostRun run;
  try {
    run = host::run_scenario(scenario, ho);
  } catch (const config::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const host::Unavailable& e) {
    std::cerr << "error: cannot run on this host: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const host::Interrupted& e) {
    std::cerr << "error: the host run was " << e.what() << "; nothing written\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "host run failed: " << e.what() << "\n";
    return kExitFailed;
  }

  if (const auto problems = analysis::check_results(run.results); !problems.empty()) {
    std::cerr << "host run failed: its results do not pass the results schema:\n";
    for (const auto& p : problems) std::cerr << "  " << p << "\n";
    return kExitFailed;
  }
  try {
    analysis::write_file_atomic(out + "/results.json", analysis::dump_json(run.results));
    analysis::write_file_atomic(out + "/run_info.json", analysis::dump_json(run.run_info));
  } catch (const std::exception& e) {
    std::cerr << "error: cannot write results to " << out << ": " << e.what() << "\n";
    return kExitFailed;
  }

  if (!o.quiet) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"scenario", scenario.doc.at("name").get<std::string>() +
                                    (scenario.variant.empty() ? "" : " [" + scenario.variant + "]") +
                                    " on the host"});
    for (const auto& [k, v] : run.summary) rows.push_back({k, v});
    for (const auto& f : run.run_info.at("ignored_fields"))
      rows.push_back({"ignored", f.at("path").get<std::string>() + " = " + f.at("value").dump()});
    rows.push_back({"wall time", fmt::format("{:.2f} s", run.run_info.at("wall_s").get<double>())});
    rows.push_back({"results", out + "/results.json"});
    std::cout << analysis::render_table({}, rows);
    if (!run.text.empty()) std::cout << "\n" << run.text;
  }
  return kExitOk;
}

}  // namespace uringsim::app
