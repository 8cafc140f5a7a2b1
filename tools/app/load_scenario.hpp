#pragma once
// Loading the scenario a command runs (run, graph): variant, --set and --seed applied. On bad input
// the error is printed ("error: FILE: /path: ...") and nullopt returned; the command exits 2.
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "config/scenario.hpp"

namespace uringsim::app {

inline std::optional<config::Scenario> load_for_command(const std::string& path, const std::string& variant,
                                                        const std::vector<std::string>& sets,
                                                        std::optional<std::uint64_t> seed) {
  try {
    config::LoadOptions lo;
    lo.variant = variant;
    lo.sets = sets;
    lo.seed = seed;
    return config::load_scenario_file(path, lo);
  } catch (const config::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return std::nullopt;
  }
}

}  // namespace uringsim::app
