#pragma once
// Running the uringsim binary from tests: the tool is the unit under test for exit codes, files
// written and determinism, and each run is its own process (one simulation per process).
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace testing {

struct Cli {
  int exit_code;
  std::string output;  // stdout + stderr
};

inline Cli run_cli(const std::string& args) {
  const std::string cmd = std::string(URINGSIM_EXE) + " " + args + " 2>&1";
  Cli r{-1, {}};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string source_path(const std::string& rel) {
  return std::string(URINGSIM_SOURCE_DIR) + "/" + rel;
}

// A fresh, empty directory for one test's outputs.
inline std::filesystem::path fresh_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("uringsim-test-" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace testing
