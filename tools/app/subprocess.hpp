#pragma once
// Running this tool again in child processes: one simulation per process, several at once.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace uringsim::app {

std::string self_exe();  // path of the running executable

struct ChildResult {
  int exit_code = -1;  // 128 + the signal when one killed the child
  int signal = 0;      // the signal that killed the child, 0 if it exited
  std::string output;  // stdout + stderr
};

// A child to run: argv[0] is the program; its stdout and stderr go to log_path.
struct Job {
  std::vector<std::string> argv;
  std::string log_path;
};

// Runs the jobs with at most `parallel` at once, calling on_done (in the calling thread) as each
// ends. SIGINT or SIGTERM to this process (unless it ignores them, as a background job ignores
// SIGINT) stops it: no more children start, the running ones get the signal too and are waited
// for, and the signal's number is returned; 0 when every job ran.
int run_each(const std::vector<Job>& jobs, int parallel,
             const std::function<void(std::size_t, const ChildResult&)>& on_done);

// run_parallel was interrupted (see run_each); callers clean up and exit with 128 + signal.
struct Interrupted : std::runtime_error {
  int signal;
  explicit Interrupted(int sig)
      : std::runtime_error("interrupted by signal " + std::to_string(sig)), signal(sig) {}
};

// Runs each argv (argv[0] = program) with at most `jobs` running at once; results in input order.
// The outputs go through a private temporary directory, removed on every exit; Interrupted when
// a signal stopped it.
std::vector<ChildResult> run_parallel(const std::vector<std::vector<std::string>>& commands, int jobs);

}  // namespace uringsim::app
