// `uringsim export-fio SCENARIO`: the fio job file of the scenario's fio workload, to standard output
// or atomically to -o FILE; nothing is written on bad input. docs/import-fio.md, "Export".
#include <iostream>

#include "analysis/io.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/load_scenario.hpp"
#include "tools/app/scenario_to_fio.hpp"

namespace uringsim::app {

void add_export_fio_options(CLI::App& cmd, ExportFioOptions& o) {
  cmd.add_option("scenario", o.scenario, "Scenario JSON file with a fio workload")->required();
  cmd.add_option("--variant", o.variant, "Apply the named variant of the scenario");
  cmd.add_option("--set", o.sets, "Override a field: dotted.path=value (repeatable)")->take_all();
  cmd.add_option("-o,--out", o.out, "Output job file (default: standard output)");
  cmd.add_option("--target", o.target,
                 "File or device the job runs on: filename=, and size= unless it is a block device");
}

int cmd_export_fio(const ExportFioOptions& o) {
  const auto loaded = load_for_command(o.scenario, o.variant, o.sets, std::nullopt);
  if (!loaded) return kExitBadInput;
  std::string text;
  try {
    fio::ExportOptions eo;
    eo.target = o.target;
    if (!o.target.empty()) eo.size_bytes = fio::size_for_target(o.target);
    text = fio::scenario_to_fio(*loaded, eo);
  } catch (const config::InputError& e) {
    std::cerr << "error: export-fio: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (o.out.empty()) {
    std::cout << text;
    return kExitOk;
  }
  try {
    analysis::write_file_atomic(o.out, text);
  } catch (const std::runtime_error& e) {
    std::cerr << "error: " << o.out << ": " << e.what() << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace uringsim::app
