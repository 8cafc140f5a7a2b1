#include "host/child_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace uringsim::host {

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  const std::string p = path;
  std::size_t pos = 0;
  for (;;) {
    const auto colon = p.find(':', pos);
    const std::string_view dir =
        std::string_view(p).substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    // An empty PATH entry is the current directory.
    const std::string candidate = fmt::format("{}/{}", dir.empty() ? std::string_view(".") : dir, name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string::npos) return "";
    pos = colon + 1;
  }
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& output) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  // Its own process group; SIGINT and SIGTERM at their defaults and unblocked, whatever the
  // runner's handlers and mask (the guard blocks them in some threads).
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = ::posix_spawn(&pid_, argv.at(0).c_str(), &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error(fmt::format("cannot start {}: {}", argv.at(0), std::strerror(rc)));
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) stop();
}

std::optional<int> ChildProcess::poll() {
  if (status_ || pid_ <= 0) return status_;
  int st = 0;
  const pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) status_ = st;
  return status_;
}

int ChildProcess::stop(double grace_s) {
  if (poll()) return *status_;
  // Only ever our own child: kill(0) or kill(-1) would signal our group or every process.
  if (pid_ <= 0) throw std::logic_error("ChildProcess::stop without a started child");
  ::kill(pid_, SIGTERM);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (!poll() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!status_) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    status_ = st;
  }
  return *status_;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exit {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return fmt::format("killed by SIG{}", name ? name : std::to_string(WTERMSIG(status)));
  }
  return fmt::format("wait status {}", status);
}

}  // namespace uringsim::host
