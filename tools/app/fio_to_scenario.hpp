#pragma once
// The meaning of fio options for uringsim: one fio job (io_uring engine) becomes a scenario with a
// `fio` workload. docs/import-fio.md has the table of options; anything else is an error (or, with
// lenient, a warning) naming the option and where it was written.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/app/fio_options.hpp"

namespace uringsim::app::fio {

struct ImportOptions {
  std::string source;  // the job file's path, or "--cmdline"; named in the description
  std::string name;    // scenario name; "" = the job's name, else the file's stem, else "fio"
  std::string job;     // pick this job of several; "" = the only job, or several identical ones
  bool lenient = false;
};

struct Imported {
  nlohmann::ordered_json scenario;    // fields in a readable order
  std::vector<std::string> warnings;  // with lenient: one line per ignored option
  // One line per option accepted without effect, saying why ("job.fio:3: size=1g: no effect: ...").
  std::vector<std::string> notes;
  // Scenario field (JSON pointer, "/workload/iodepth") -> the fio option that set it, as written:
  // "--iodepth=8" (command line) or "job.fio:3: iodepth=8" (job file).
  std::map<std::string, std::string> origin;
};

// InputError for bad input: unknown options (unless lenient), unsupported values, bad numbers,
// several different jobs without `job`, a missing or other ioengine.
Imported to_scenario(const std::vector<Job>& jobs, const ImportOptions& opts);

// A message of the scenario loader or model about the imported scenario, which they named `label`
// ("label: /workload/iodepth: ..."), restated in fio's terms: the label is replaced by the fio
// option that set that field (kept when no option did), and an unlisted block size says how to add
// one. Other messages are returned unchanged.
std::string explain_rejection(const std::string& message, const std::string& label, const Imported& imported);

}  // namespace uringsim::app::fio
