#include "tools/app/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace uringsim::app {

namespace {

// While children run, SIGCHLD (a child ended) and the interrupting signals are blocked and taken
// with sigwaitinfo, so that one arriving between two checks cannot be missed. Children start with
// the mask this process had. A signal this process ignores stays ignored (its children inherit that).
class Signals {
 public:
  Signals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGCHLD);
    for (int sig : {SIGINT, SIGTERM}) {
      struct sigaction sa {};
      if (sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler != SIG_IGN) sigaddset(&set_, sig);
    }
    // With SIGCHLD ignored, children are reaped by the kernel and could not be waited for.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &dfl, &chld_before_);
    pthread_sigmask(SIG_BLOCK, &set_, &mask_before_);
  }
  ~Signals() {
    pthread_sigmask(SIG_SETMASK, &mask_before_, nullptr);
    sigaction(SIGCHLD, &chld_before_, nullptr);
  }
  Signals(const Signals&) = delete;
  Signals& operator=(const Signals&) = delete;

  const sigset_t& children_mask() const { return mask_before_; }
  int wait() {  // the next signal of the set
    for (;;) {
      const int sig = sigwaitinfo(&set_, nullptr);
      if (sig > 0) return sig;
      if (errno != EINTR) throw std::runtime_error("sigwaitinfo failed");
    }
  }

 private:
  sigset_t set_{}, mask_before_{};
  struct sigaction chld_before_ {};
};

std::string read_log(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

std::string self_exe() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

int run_each(const std::vector<Job>& jobs, int parallel,
             const std::function<void(std::size_t, const ChildResult&)>& on_done) {
  if (parallel < 1) parallel = 1;
  Signals signals;
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  int interrupted = 0;
  auto start = [&](std::size_t i) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, jobs[i].log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &signals.children_mask());
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    std::vector<char*> argv;
    for (const auto& a : jobs[i].argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) throw std::runtime_error("cannot start " + jobs[i].argv[0]);
    running[pid] = i;
  };
  for (;;) {
    while (!interrupted && next < jobs.size() && static_cast<int>(running.size()) < parallel) start(next++);
    for (;;) {  // every child that has ended
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      const auto it = running.find(pid);
      if (it == running.end()) continue;
      const std::size_t i = it->second;
      running.erase(it);
      ChildResult r;
      r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + r.signal;
      r.output = read_log(jobs[i].log_path);
      on_done(i, r);
    }
    if (running.empty() && (interrupted || next >= jobs.size())) return interrupted;
    if (running.empty()) continue;
    const int sig = signals.wait();
    if ((sig == SIGINT || sig == SIGTERM) && !interrupted) {
      interrupted = sig;
      // From a terminal the children got it already; sent to this process alone, they did not.
      for (const auto& [pid, _] : running) kill(pid, sig);
    }
  }
}

std::vector<ChildResult> run_parallel(const std::vector<std::vector<std::string>>& commands, int jobs) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "uringsim-child-XXXXXX").string();
  if (!mkdtemp(tmpl.data()))
    throw std::runtime_error("mkdtemp failed in " + fs::temp_directory_path().string());
  const fs::path dir = tmpl;
  std::vector<Job> js;
  for (std::size_t i = 0; i < commands.size(); ++i)
    js.push_back({commands[i], (dir / (std::to_string(i) + ".log")).string()});
  std::vector<ChildResult> results(commands.size());
  int interrupted = 0;
  try {
    interrupted = run_each(js, jobs, [&](std::size_t i, const ChildResult& r) { results[i] = r; });
  } catch (...) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    throw;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (interrupted) throw Interrupted(interrupted);
  return results;
}

}  // namespace uringsim::app
