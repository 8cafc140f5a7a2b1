#include "tools/app/subprocess.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace uringsim::app {

std::string self_exe() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

std::vector<ChildResult> run_parallel(const std::vector<std::vector<std::string>>& commands, int jobs) {
  if (jobs < 1) jobs = 1;
  std::vector<ChildResult> results(commands.size());
  std::map<pid_t, std::pair<std::size_t, std::string>> running;  // pid -> (index, output file)
  std::size_t next = 0;
  char tmpl_dir[] = "/tmp/uringsim-child-XXXXXX";
  const std::string dir = mkdtemp(tmpl_dir) ? tmpl_dir : throw std::runtime_error("mkdtemp failed");

  auto start = [&](std::size_t i) {
    const std::string out = dir + "/" + std::to_string(i) + ".log";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char*> argv;
    for (const auto& a : commands[i]) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + commands[i][0]);
    running[pid] = {i, out};
  };

  while (next < commands.size() || !running.empty()) {
    while (next < commands.size() && static_cast<int>(running.size()) < jobs) start(next++);
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) throw std::runtime_error("waitpid failed");
    auto it = running.find(pid);
    if (it == running.end()) continue;
    auto& r = results[it->second.first];
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ifstream f(it->second.second);
    std::stringstream ss;
    ss << f.rdbuf();
    r.output = ss.str();
    running.erase(it);
  }
  std::filesystem::remove_all(dir);
  return results;
}

}  // namespace uringsim::app
