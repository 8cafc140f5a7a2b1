#pragma once
// Loading and simulating the scenario a command runs (run, graph, compare): variant, --set,
// --seed and --calibration applied. On bad input the error is printed ("error: FILE: /path: ...") and the
// command exits 2.
#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "tools/app/commands.hpp"

namespace uringsim::app {

// --calibration FILE, worded the same on every command that loads a scenario.
inline void add_calibration_option(CLI::App& cmd, std::string& path) {
  cmd.add_option("--calibration", path,
                 "Apply a calibration file (uringsim calibrate): its machine cores/GHz and measured costs; "
                 "the scenario's own costs and --set still win");
}

// calibration: a calibration file's path, "" = none.
inline std::optional<config::Scenario> load_for_command(const std::string& path, const std::string& variant,
                                                        const std::vector<std::string>& sets,
                                                        std::optional<std::uint64_t> seed,
                                                        const std::string& calibration = "") {
  try {
    config::LoadOptions lo;
    lo.variant = variant;
    lo.sets = sets;
    lo.seed = seed;
    if (!calibration.empty()) lo.calibration = config::load_calibration_file(calibration);
    return config::load_scenario_file(path, lo);
  } catch (const config::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return std::nullopt;
  }
}

// Runs `simulate` (building and running the model): kExitOk, or the exit code of its failure with
// the message printed — bad input found while building (kExitBadInput) or a failed run (kExitFailed).
inline int simulate_or_report(const std::function<void()>& simulate) {
  try {
    simulate();
    return kExitOk;
  } catch (const config::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "simulation failed: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace uringsim::app
