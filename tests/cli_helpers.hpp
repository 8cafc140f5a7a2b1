#pragma once
// Running the uringsim binary from tests: the tool is the unit under test for exit codes, files
// written and determinism, and each run is its own process (one simulation per process).
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace testing {

struct Cli {
  int exit_code;
  std::string output;  // stdout + stderr
};

// Runs a shell command and captures its stdout (and stderr with `with_stderr`).
inline Cli run_shell(const std::string& cmd, bool with_stderr = true) {
  Cli r{-1, {}};
  FILE* p = popen((cmd + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline Cli run_cli(const std::string& args) {
  return run_shell(std::string(URINGSIM_EXE) + " " + args);
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

// One test's directory for its outputs, named after the test and the build tree, so that two
// suites (a Release and a sanitizer build) running at once do not share it.
inline std::filesystem::path test_dir(const std::string& name) {
  char tag[17];
  const std::size_t h = std::hash<std::string>{}(URINGSIM_EXE);
  std::snprintf(tag, sizeof tag, "%08zx", h & 0xffffffffu);
  return std::filesystem::temp_directory_path() / ("uringsim-test-" + std::string(tag) + "-" + name);
}

// The directories this test process made; tests/main.cpp removes them when every test passed
// and keeps them, for a look, when one failed.
inline std::vector<std::filesystem::path>& scratch_dirs() {
  static std::vector<std::filesystem::path> dirs;
  return dirs;
}

// A fresh, empty directory for one test's outputs.
inline std::filesystem::path fresh_dir(const std::string& name) {
  auto d = test_dir(name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  scratch_dirs().push_back(d);
  return d;
}

// `uringsim run ARGS --quiet --out DIR` in a fresh directory named after `name`; the run must
// succeed. Returns its results.json.
inline nlohmann::json run_results(const std::string& name, const std::string& args) {
  const auto dir = fresh_dir(name);
  const Cli r = run_cli("run " + args + " --quiet --out " + dir.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(slurp(dir / "results.json"));
}

}  // namespace testing
