#pragma once
// Pieces of `uringsim sweep` / `uringsim merge` that are pure functions, exposed for unit tests.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tools/app/study_runs.hpp"

namespace uringsim::app::sweep {

// The hashes shared with compare (tools/app/study_runs.hpp).
using study::fnv1a;
using study::hex64;

struct Grid {
  std::string path;
  std::vector<std::string> values;  // as passed to --set path=value
};

// "path=v1,v2,start:stop:step,..."; throws std::invalid_argument with a message naming the bad part.
Grid parse_grid(const std::string& spec);

// A readable directory name: characters outside [A-Za-z0-9._=,+-] become '_'; when that (or
// shortening) changed the text, a hash of the original is appended so distinct ids stay distinct.
std::string safe_id(const std::string& raw);

// The order to run points in, given each point's rep: as enumerated, or with `reps_outer` every
// point's rep 0 first, then every rep 1, ... (stable within a rep). On a machine whose speed
// drifts over minutes, reps outer spread the drift over all points alike, so that it widens
// their intervals instead of moving one point against another.
std::vector<std::size_t> run_order(const std::vector<int>& reps, bool reps_outer);

}  // namespace uringsim::app::sweep
