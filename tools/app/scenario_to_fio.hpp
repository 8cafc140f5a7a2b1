#pragma once
// A scenario's fio workload as a fio job file: the inverse of import-fio (docs/import-fio.md,
// "Export"). Each workload field, duration_ms, warmup_ms and measure.percentiles become the fio
// options import-fio reads back; the fields fio has no option for (the kernel model's knobs, the
// machine, the drive's tables, costs) are listed as comments at the top of the file.
#include <cstdint>
#include <string>
#include <vector>

#include "config/scenario.hpp"

namespace uringsim::app::fio {

// Size of the file fio lays out when the target is a new or empty regular file: enough for a short
// run's random offsets to spread over real blocks.
constexpr std::uint64_t kDefaultFileBytes = 256ull << 20;

struct ExportOptions {
  std::string target;            // filename=; "" = none (the comments say to pass one)
  std::uint64_t size_bytes = 0;  // size=; 0 = none (a block device: fio uses all of it)
  // Options the caller adds after the scenario's, as written ("unified_rw_reporting=both"): the host
  // runner's reporting. import-fio does not read them.
  std::vector<std::string> extra_options;
};

// The job file text for a loaded (checked, defaults-filled) scenario. Pure: no I/O. InputError for a
// workload that is not fio ("/workload/type: expected \"fio\", got \"echo\"") or a target a job file
// cannot name (";", "#", a control character, surrounding spaces).
std::string scenario_to_fio(const config::Scenario& scenario, const ExportOptions& options = {});

// size= for a target: 0 for a block device, the size of an existing non-empty regular file, else
// kDefaultFileBytes. The one function here that looks at the filesystem (stat).
std::uint64_t size_for_target(const std::string& path);

}  // namespace uringsim::app::fio
