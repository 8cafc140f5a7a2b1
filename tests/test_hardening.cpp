// Input hardening (issue 15): inputs that crashed, hung or misled the tool before. Each case runs
// the binary, as a user would, and checks the exit code, the message and that nothing is written.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cli_helpers.hpp"

using namespace testing;
namespace fs = std::filesystem;

namespace {

const std::string kMm1 = source_path("scenarios/validation/mm1.json");

// Runs the tool with these arguments, without a shell (an argument may be 130 000 characters),
// stdout and stderr together.
Cli run_args(const std::vector<std::string>& args) {
  const fs::path log =
      fs::temp_directory_path() / ("uringsim-test-args-" + std::to_string(getpid()) + ".log");
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>(URINGSIM_EXE)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Cli r{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(log)};
  fs::remove(log);
  return r;
}

std::string nested(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("hardening: JSON nested 100 000 deep is refused with its line and column, from a file and --set") {
  const auto dir = fresh_dir("hardening-deep");
  write(dir / "deep.json",
        R"({"name": "deep", "workload": {"type": "nop"}, "description": )" + nested(100000) + "}");
  const auto r = run_args({"run", (dir / "deep.json").string(), "--out", (dir / "out").string()});
  INFO(r.output.substr(0, 2000));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("deep.json:1:") != std::string::npos);
  CHECK(r.output.find("nested more than 64 levels") != std::string::npos);
  CHECK(r.output.size() < 1000);  // the value is not echoed whole

  // 65 000 levels: as deep as one command-line argument can hold.
  const auto s =
      run_args({"run", kMm1, "--set", "workload.arrival=" + nested(65000), "--out", (dir / "out").string()});
  INFO(s.output.substr(0, 2000));
  CHECK(s.exit_code == 2);
  CHECK(s.output.find("--set workload.arrival=[[[") != std::string::npos);
  CHECK(s.output.find("nested more than 64 levels") != std::string::npos);
  CHECK(s.output.size() < 1000);
  CHECK_FALSE(fs::exists(dir / "out"));

  // A string field takes the text as written, brackets and all.
  const auto g = run_args({"graph", kMm1, "--kind", "topology", "--set", "description=" + nested(65000), "-o",
                           (dir / "topology.dot").string()});
  INFO(g.output.substr(0, 2000));
  CHECK(g.exit_code == 0);
}
