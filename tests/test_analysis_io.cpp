#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/format.hpp"
#include "analysis/io.hpp"

using namespace uringsim::analysis;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test process, removed on scope exit.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    path = fs::temp_directory_path() / ("uringsim_analysis_test_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("analysis: atomic write creates parents, overwrites and leaves no temporary file") {
  ScratchDir d;
  const fs::path target = d.path / "a" / "b" / "result.json";
  write_file_atomic(target.string(), "first\n");
  CHECK(slurp(target) == "first\n");
  write_file_atomic(target.string(), "second");
  CHECK(slurp(target) == "second");
  CHECK(entries(target.parent_path()) == std::vector<std::string>{"result.json"});

  write_file_atomic(target.string(), "");  // empty content is a valid file
  CHECK(fs::file_size(target) == 0);
  CHECK(entries(target.parent_path()).size() == 1);
}

TEST_CASE("analysis: atomic write failure throws and leaves no temporary file") {
  ScratchDir d;
  const fs::path dir = d.path / "out";
  fs::create_directories(dir / "result.json");  // a directory where the file should go: rename fails
  CHECK_THROWS_AS(write_file_atomic((dir / "result.json").string(), "x"), std::runtime_error);
  CHECK(entries(dir) == std::vector<std::string>{"result.json"});
  CHECK(fs::is_directory(dir / "result.json"));
}

TEST_CASE("analysis: dump_json is sorted, indented, newline-terminated and has no NaN") {
  nlohmann::json a;
  a["zeta"] = 1;
  a["alpha"] = {{"y", 2.5}, {"x", std::numeric_limits<double>::quiet_NaN()}};
  a["mid"] = nlohmann::json::array({1.0, std::numeric_limits<double>::infinity(), -INFINITY});
  nlohmann::json b;  // same content, different insertion order
  b["mid"] = a["mid"];
  b["alpha"]["x"] = std::numeric_limits<double>::quiet_NaN();
  b["alpha"]["y"] = 2.5;
  b["zeta"] = 1;

  const std::string s = dump_json(a);
  CHECK(s == dump_json(b));
  CHECK(s ==
        "{\n"
        "  \"alpha\": {\n"
        "    \"x\": null,\n"
        "    \"y\": 2.5\n"
        "  },\n"
        "  \"mid\": [\n"
        "    1.0,\n"
        "    null,\n"
        "    null\n"
        "  ],\n"
        "  \"zeta\": 1\n"
        "}\n");
  CHECK(nlohmann::json::parse(s) == nlohmann::json::parse(dump_json(nlohmann::json::parse(s))));
  CHECK(dump_json(nlohmann::json(std::string("bad \xff utf8"))).back() == '\n');  // does not throw
}

TEST_CASE("analysis: peak RSS is reported") {
  const auto rss = peak_rss_bytes();
  CHECK(rss > 1024 * 1024);   // any process with a C++ runtime
  CHECK(rss < (1ull << 40));  // and far less than a terabyte
  CHECK(rss % 1024 == 0);     // reported in kB by the kernel
}

TEST_CASE("analysis: render_table aligns columns and right-aligns numbers") {
  const std::string t = render_table({"scenario", "p99_µs", "ok"},
                                     {{"mm1", "12.5", "yes"}, {"long-name", "3", "no"}, {"short"}});
  CHECK(t ==
        "scenario   p99_µs  ok\n"
        "---------  ------  ---\n"
        "mm1          12.5  yes\n"
        "long-name       3  no\n"
        "short\n");
  CHECK(render_table({}, {}).empty());
  // Rows longer than the header widen the table.
  CHECK(render_table({"a"}, {{"x", "yy"}}) == "a\n-  --\nx  yy\n");
}

TEST_CASE("analysis: format_number") {
  CHECK(format_number(3.14159, 2) == "3.14");
  CHECK(format_number(2.0) == "2.000");
  CHECK(format_number(std::nan("")) == "nan");
  CHECK(format_number(-INFINITY) == "-inf");
  CHECK(format_number(7.6, 0) == "8");
}
