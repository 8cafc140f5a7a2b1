// Which code may include which: files and devices (models/net, models/block) and the interface
// between them and a requester (models/io) never include io_uring's headers, so another design of
// the submission side can use them unchanged. Scans the source tree's include lines.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Scan {
  int files = 0;                   // C++ sources and headers looked at
  std::vector<std::string> found;  // "file: include" for each include under the prefix
};

// Every #include (quoted or angled) of the C++ files under `dir` (relative to the source tree)
// whose path starts with `prefix`.
Scan includes_under(const std::string& dir, const std::string& prefix) {
  static const std::regex include_line(R"(^\s*#\s*include\s*["<]([^">]+)[">])");
  Scan scan;
  const fs::path root = fs::path(URINGSIM_SOURCE_DIR) / dir;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".hpp" && ext != ".cpp")) continue;
    ++scan.files;
    std::ifstream in(e.path());
    std::smatch m;
    for (std::string line; std::getline(in, line);)
      if (std::regex_search(line, m, include_line) && m[1].str().rfind(prefix, 0) == 0)
        scan.found.push_back(fs::relative(e.path(), URINGSIM_SOURCE_DIR).string() + ": " + m[1].str());
  }
  return scan;
}

}  // namespace

TEST_CASE("layering: models/net/ models/block/ and models/io/ include nothing from models/uring/") {
  for (const char* dir : {"models/net", "models/block", "models/io"}) {
    const Scan s = includes_under(dir, "models/uring/");
    INFO(dir);
    CHECK(s.files > 0);  // the directory is there and was read
    for (const auto& f : s.found) FAIL_CHECK(f);
  }
}

TEST_CASE("layering: the scan finds io_uring includes where they are") {
  // The io_uring core includes its own headers: a scan that found nothing here would pass the rule
  // above vacuously.
  const Scan s = includes_under("models/uring", "models/uring/");
  CHECK(s.files > 0);
  CHECK(std::find(s.found.begin(), s.found.end(), "models/uring/ctx.cpp: models/uring/ctx.hpp") !=
        s.found.end());
}
