#pragma once
// A program the host runner starts (fio) and must be able to stop: its own process group (a
// terminal's ^C reaches uringsim, which stops the child itself), default signal handling and an
// empty signal mask whatever the runner's, standard output and error to a file. Only this child is
// ever signalled.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace uringsim::host {

// The first executable regular file `name` in $PATH, or "" when there is none.
std::string find_on_path(const std::string& name);

class ChildProcess {
 public:
  // Starts argv[0] (a path) with argv; output: its standard output and error, appended. Throws
  // std::runtime_error if it cannot be started.
  ChildProcess(const std::vector<std::string>& argv, const std::string& output);
  // Stops it (stop()) if it is still running, and reaps it.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Its wait status once it has exited (reaped then), else nullopt. Does not block.
  std::optional<int> poll();
  // SIGTERM, up to grace_s for it to exit, then SIGKILL; reaps it and returns its wait status.
  int stop(double grace_s = 2);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// "exit 1", "killed by SIGKILL": a wait status in words.
std::string describe_wait_status(int status);

}  // namespace uringsim::host
