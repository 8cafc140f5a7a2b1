#pragma once
// Running one fuzz input in a forked child, so a crash or a hang of the code under test is seen
// (signal, timeout) instead of taking the driver down. The child is a copy of the driver: the code
// runs in-process, as the CLI would run it, in a process of its own (one SimGrid engine each).
#include <filesystem>
#include <functional>
#include <string>

namespace uringsim::fuzz {

struct Outcome {
  enum class Kind { Exit, Signal, Timeout } kind = Kind::Exit;
  int code = 0;  // exit status, or the signal
  double seconds = 0;
};

// body's return value is the child's exit status; stdout and stderr go to `log`. The child leads
// its own process group, killed whole on timeout (a report's gnuplot with it).
Outcome run_in_child(const std::function<int()>& body, double timeout_s, const std::filesystem::path& log);

}  // namespace uringsim::fuzz
