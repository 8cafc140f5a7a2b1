// `uringsim import-fio JOBFILE | --cmdline "fio ..."`: writes the scenario equivalent to one fio job
// (io_uring engine). The scenario is loaded back with the scenario loader, and its model built,
// before anything is written, and it is written atomically, so an error never leaves a file behind
// and what is written runs. docs/import-fio.md.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "analysis/io.hpp"
#include "config/scenario.hpp"
#include "models/model.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/fio_options.hpp"
#include "tools/app/fio_to_scenario.hpp"
#include "tools/app/read_file.hpp"

namespace uringsim::app {
namespace {}  // namespace

void add_import_fio_options(CLI::App& cmd, ImportFioOptions& o) {
  cmd.add_option("jobfile", o.job_file, "fio job file (ini: [global] and job sections)");
  cmd.add_option(
      "--cmdline", o.cmdline,
      "A fio command line instead of a job file (a leading `fio`, and anything before it, is skipped)");
  cmd.add_option("-o,--out", o.out, "Output scenario file (default: standard output)");
  cmd.add_option("--name", o.name, "Scenario name (default: the job's name, else the file's stem, else fio)");
  cmd.add_option("--job", o.job, "The job section to import when the file has several different ones");
  cmd.add_option("--var", o.vars, "Value of a ${NAME} placeholder: NAME=VALUE (repeatable)")->take_all();
  cmd.add_flag("--lenient", o.lenient, "Ignore unsupported fio options with a warning instead of failing");
}

int cmd_import_fio(const ImportFioOptions& o) {
  try {
    if (o.job_file.empty() == o.cmdline.empty())
      throw config::InputError("give either a job file or --cmdline \"fio ...\" (exactly one)");
    fio::Vars vars;
    for (const auto& v : o.vars) {
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        throw config::InputError("--var " + v + ": expected NAME=VALUE");
      vars[v.substr(0, eq)] = v.substr(eq + 1);
    }
    fio::ImportOptions io;
    io.name = o.name;
    io.job = o.job;
    io.lenient = o.lenient;
    std::vector<fio::Job> jobs;
    if (!o.job_file.empty()) {
      io.source = o.job_file;
      jobs = fio::parse_job_file(read_text_file(o.job_file), o.job_file, vars);
    } else {
      io.source = "--cmdline";
      jobs = fio::parse_command_line(o.cmdline, vars);
    }
    const auto imported = fio::to_scenario(jobs, io);
    for (const auto& n : imported.notes) std::cerr << "note: " << fio::printable(n) << "\n";
    for (const auto& w : imported.warnings) std::cerr << "warning: " << fio::printable(w) << "\n";
    // replace: a value taken from the input (a filename, --name) need not be valid UTF-8.
    const std::string text =
        imported.scenario.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    // What run and validate would say about it, before it is written: the loader's checks, then the
    // model's own (those made when it is constructed: block sizes the device lists, hipri without
    // direct, iodepth beyond the ring), restated in terms of the fio option that set the field.
    const std::string label = "imported scenario";
    try {
      const auto scenario = config::load_scenario_text(text, label);
      models::make_model(scenario);
    } catch (const config::InputError& e) {
      throw config::InputError(fio::explain_rejection(e.what(), label, imported));
    }
    if (o.out.empty()) {
      std::cout << text;
    } else {
      try {
        analysis::write_file_atomic(o.out, text);
      } catch (const std::runtime_error& e) {
        std::cerr << "error: " << o.out << ": " << e.what() << "\n";
        return kExitBadInput;
      }
    }
  } catch (const config::InputError& e) {
    std::cerr << "error: " << fio::printable(e.what()) << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace uringsim::app
