#pragma once
// The meaning of fio options for uringsim: one fio job (io_uring engine) becomes a scenario with a
// `fio` workload. docs/import-fio.md has the table of options; anything else is an error (or, with
// lenient, a warning) naming the option and where it was written.
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
};

// InputError for bad input: unknown options (unless lenient), unsupported values, bad numbers,
// several different jobs without `job`, a missing or other ioengine.
Imported to_scenario(const std::vector<Job>& jobs, const ImportOptions& opts);

}  // namespace uringsim::app::fio
