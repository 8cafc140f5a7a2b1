// The bad-input corpus (tests/bad_scenarios) and the generated docs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/calibration.hpp"
#include "config/scenario.hpp"

namespace fs = std::filesystem;
using namespace uringsim::config;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string strip_trailing_newlines(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// Messages name the file as given; the .expected files name it without its directory.
std::string without(std::string text, const std::string& prefix) {
  for (std::size_t at; (at = text.find(prefix)) != std::string::npos;) text.erase(at, prefix.size());
  return text;
}

}  // namespace

TEST_CASE("config: every bad scenario fails with its expected message") {
  const fs::path dir = fs::path(URINGSIM_SOURCE_DIR) / "tests" / "bad_scenarios";
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".json") cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 11);
  for (const auto& path : cases) {
    fs::path expected_path = fs::path(path).replace_extension(".expected");
    INFO(path.filename().string());
    REQUIRE(fs::exists(expected_path));
    std::string message = "(loaded without error)";
    try {
      load_scenario_file(path.string());
    } catch (const InputError& e) {
      message = without(e.what(), dir.string() + "/");
    }
    CHECK(message == strip_trailing_newlines(read_file(expected_path)));
  }
  // Every .expected has its scenario.
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".expected") {
      INFO(entry.path().filename().string());
      CHECK(fs::exists(fs::path(entry.path()).replace_extension(".json")));
    }
}

TEST_CASE("config: docs/scenario-format.md matches the schema") {
  const fs::path doc = fs::path(URINGSIM_SOURCE_DIR) / "docs" / "scenario-format.md";
  std::string generated = schema_markdown();
  // Regenerating is this test with URINGSIM_UPDATE_DOCS=1: it writes the file instead of comparing.
  if (const char* update = std::getenv("URINGSIM_UPDATE_DOCS"); update && std::string(update) == "1") {
    std::ofstream(doc, std::ios::binary) << generated;
    WARN("wrote " << doc.string());
  }
  INFO(
      "docs/scenario-format.md is stale: regenerate it with URINGSIM_UPDATE_DOCS=1 (see the end of that "
      "file)");
  CHECK(read_file(doc) == generated);
}

TEST_CASE("config: every scenario file in scenarios/ loads") {
  const fs::path dir = fs::path(URINGSIM_SOURCE_DIR) / "scenarios";
  std::vector<fs::path> files;
  std::vector<fs::path> calibrations;  // scenarios/machines/ holds calibration files, not scenarios
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.path().extension() == ".json" && entry.path().filename() != "schema.json")
      (entry.path().parent_path().filename() == "machines" ? calibrations : files).push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    INFO(path.string());
    // Loading checks every variant too.
    CHECK_NOTHROW(load_scenario_file(path.string()));
  }
  for (const auto& path : calibrations) {
    INFO(path.string());
    CHECK_NOTHROW(uringsim::config::load_calibration_file(path.string()));
  }
  CHECK_FALSE(calibrations.empty());  // this machine type's calibration is shipped
}
