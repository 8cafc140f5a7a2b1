#pragma once
// What the fuzz driver feeds: one target per input path of the tool, each with its seed corpus and
// the code that takes one input the way the CLI does (tests/fuzz/README.md).
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tests/fuzz/mutate.hpp"

namespace uringsim::fuzz {

struct Seed {
  std::string name;  // for messages: the file it came from
  std::string text;
  std::string file;  // merge, report: the file of the fixture directory the input replaces
};

struct Target {
  std::string name;
  Syntax syntax = Syntax::Json;
  double timeout_s = 20;
  std::vector<Seed> seeds;
  std::filesystem::path fixture;  // merge, report: the directory each input is a variant of
  // Set up `work` (an empty directory) with `input` and run it in this process (a forked child):
  // returns the exit status the CLI would give.
  std::function<int(const Seed& seed, const std::string& input, const std::filesystem::path& work)> run;
  std::string output;  // what the run may write, relative to work: must not exist after exit 2
};

struct Setup {
  std::filesystem::path source_dir;  // the repository (corpus files)
  std::filesystem::path exe;         // uringsim, to make the merge and report fixtures
  std::filesystem::path scratch;     // the driver's own temporary directory
};

// The targets `wanted` names, seeds loaded (the merge and report fixtures are made by running sweep
// and compare, a few seconds: only when one of them is wanted).
std::vector<Target> make_targets(const Setup& setup, const std::function<bool(const std::string&)>& wanted);
// A target that checks the driver itself: input "crash", "hang", "exit3" or "leave".
Target self_test_target();

}  // namespace uringsim::fuzz
