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

}  // namespace uringsim::app::sweep
