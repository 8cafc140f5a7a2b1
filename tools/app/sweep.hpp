#pragma once
// Pieces of `uringsim sweep` / `uringsim merge` that are pure functions, exposed for unit tests.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/app/subprocess.hpp"

namespace uringsim::app::sweep {

// FNV-1a, 64 bit: small, stable across platforms and releases (std::hash is neither).
std::uint64_t fnv1a(std::string_view data, std::uint64_t h = 0xcbf29ce484222325ULL);
std::string hex64(std::uint64_t h);

struct Grid {
  std::string path;
  std::vector<std::string> values;  // as passed to --set path=value
};

// "path=v1,v2,start:stop:step,..."; throws std::invalid_argument with a message naming the bad part.
Grid parse_grid(const std::string& spec);

// A readable directory name: characters outside [A-Za-z0-9._=,+-] become '_'; when that (or
// shortening) changed the text, a hash of the original is appended so distinct ids stay distinct.
std::string safe_id(const std::string& raw);

// Like run_parallel, but each child's stdout+stderr goes to its own log file and on_done is called
// (in the calling thread) as each child finishes, so callers can report progress and record results.
struct Job {
  std::vector<std::string> argv;
  std::string log_path;
};
void run_each(const std::vector<Job>& jobs, int parallel,
              const std::function<void(std::size_t, const ChildResult&)>& on_done);

}  // namespace uringsim::app::sweep
