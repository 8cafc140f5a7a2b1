#pragma once
// Calibration files (format "uringsim-calibration/1", written by `uringsim calibrate`): one
// machine's costs measured by micro-benchmarks, each with how it was measured. Applied to a
// scenario (LoadOptions::calibration), the file's machine.cores and machine.ghz replace the
// scenario's and its costs replace the cost table's defaults; the scenario's own `costs` entries
// and --set still win. Format and provenance rules: scenarios/machines/README.md.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace uringsim::config {

inline constexpr std::string_view kCalibrationFormat = "uringsim-calibration/1";

struct CalibratedCost {
  double value = 0;    // in the cost table's unit for the key
  std::string unit;    // must equal the cost table's unit
  std::string method;  // one sentence: what was timed and the arithmetic from it to `value`
  std::uint64_t samples = 0;
  double median = 0;   // of the benchmark's primary quantity, in `unit`, before any subtraction
  std::string spread;  // of that quantity, saying which measure, e.g. "p25-p75 712-790"
};

struct CalibrationMachine {
  int cores = 0;           // online CPUs
  double ghz = 0;          // nominal clock, converts the table's cycles to time
  std::string ghz_source;  // where ghz was read from
  // One-way futex wake-up latency to another CPU that is idle / running a spinning thread;
  // measurements only (nullopt: not measured, e.g. a single CPU).
  std::optional<double> wake_idle_ns, wake_busy_ns;
  // From wake-ups after idle times from 2 us to 2 ms: the extra delay of waking a CPU that idled
  // long (it halted) and how long it idles before that happens. Applied to the scenario's
  // machine.idle_exit_ns and machine.halt_poll_ns, as cores and ghz are; nullopt: not measured.
  std::optional<double> idle_exit_ns, halt_poll_ns;
  // The same wake-ups as a curve of (idle ns, extra ns) points, applied to machine.idle_exit_curve
  // in place of the two above; nullopt in calibrations made before it was recorded.
  std::optional<std::vector<std::pair<double, double>>> idle_exit_curve;
  // Wake-up packing (host/calibrate_pack.cpp): the waker's busy share of its CPU below which a
  // wakee still lands on the waker's CPU, the other CPU idle; 0 when no wake-up is kept there
  // (upstream placement). Applied to machine.wake_pack_util; nullopt: not measured (one CPU, or
  // a calibration made before it was).
  std::optional<double> wake_pack_util;
  // The running kernel's preemption model ("none", "voluntary", "full"), read from the kernel,
  // applied to machine.preempt; nullopt: not known (or a model the simulator lacks, e.g. lazy).
  std::optional<std::string> preempt;
  // The CPU's speed while it was measured, as host/speed_probe.hpp times it (ns per dependent
  // add, the median over the passes): what a twin compares its host runs' speed with. Not applied
  // to a scenario; nullopt in calibrations made before it was recorded.
  std::optional<double> speed_ns_per_add;
  // A null system call (getppid), ns: calibrate's own reading, against which a twin's host runs'
  // probes of the same (host/syscall_probe.hpp) are reported. Optional: files before it lack it.
  std::optional<double> syscall_ns;
  // A busy CPU's stalls (host/stall_probe.hpp): their period and mean length, applied to
  // machine.stall_every_ns and stall_ns; nullopt in calibrations made before they were measured.
  std::optional<double> stall_every_ns, stall_ns;
  // The same stalls by length, every CPU spinning at once: (mean ns, per second) of each bin a
  // quarter decade wide, applied to machine.stall_lengths in place of the two above; nullopt in
  // calibrations made before it was recorded.
  std::optional<std::vector<std::pair<double, double>>> stall_lengths;
};

// How many passes the entries are the medians of, and which were dropped: with `calibrate
// --wait-speed`, a pass with the CPU speed probe over that bound at its start or end is dropped
// (a VM's host slowed the CPU) and another run in its place, up to twice as many in all.
struct CalibrationPasses {
  int asked = 0, kept = 0, dropped = 0;
  std::optional<double> max_ns_per_add;  // --wait-speed's bound; nullopt: not asked
  double waited_s = 0;                   // spent waiting for quiet (--wait-quiet), all passes
};

struct Calibration {
  std::string source;  // how messages name the file
  std::string kernel_release, cpu_model, date;
  bool quick = false;  // measured with `calibrate --quick` (fewer repetitions)
  // nullopt in calibrations made before it was recorded
  std::optional<CalibrationPasses> passes;
  CalibrationMachine machine;
  std::map<std::string, CalibratedCost> costs;
  std::vector<std::pair<std::string, std::string>> defaults_kept;  // {key, why it was not measured}

  // {kernel_release, cpu_model, date}: what results.json records about an applied calibration.
  nlohmann::json provenance() const;
  // The file's content.
  nlohmann::json to_json() const;
};

// Parses and checks strictly: unknown keys, cost keys not in the cost table, a unit other than the
// table's, values that are negative or not finite are InputError "<source>: <json pointer>: ...".
Calibration parse_calibration_text(std::string_view text, const std::string& source);
Calibration load_calibration_file(const std::string& path);

}  // namespace uringsim::config
