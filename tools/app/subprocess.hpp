#pragma once
// Running this tool again in child processes: one simulation per process, several at once.
#include <string>
#include <vector>

namespace uringsim::app {

std::string self_exe();  // path of the running executable

struct ChildResult {
  int exit_code = -1;
  std::string output;  // stdout + stderr
};

// Runs each argv (argv[0] = program) with at most `jobs` running at once; results in input order.
std::vector<ChildResult> run_parallel(const std::vector<std::vector<std::string>>& commands, int jobs);

}  // namespace uringsim::app
