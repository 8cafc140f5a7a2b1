// docs_check (tools/docs_check, docs/docs-check.md): the checker itself, on small pages in a
// throw-away source tree. The real pages are checked by the "docs: PAGE" CTest cases.
#include <filesystem>
#include <fstream>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using testing::run_shell;
using testing::slurp;

namespace {

// A source tree with README.md, docs/ and the real scenarios, plus `page.md` holding `text`.
fs::path tree(const std::string& name, const std::string& text) {
  const auto root = testing::fresh_dir("docs-check-" + name);
  fs::create_directories(root / "docs");
  std::ofstream(root / "README.md") << "# test\n";
  fs::create_directory_symlink(testing::source_path("scenarios"), root / "scenarios");
  std::ofstream(root / "docs/page.md") << text;
  return root;
}

testing::Cli check(const fs::path& root, const std::string& flags = "") {
  return run_shell(std::string(DOCS_CHECK_EXE) + " --root " + root.string() + " --uringsim " + URINGSIM_EXE +
                   " " + flags + " docs/page.md");
}

const std::string kRun =
    "```sh\nbuild/tools/uringsim run scenarios/validation/mm1.json --set duration_ms=20 --quiet --out "
    "/tmp/t/mm1\n```\n\n";

}  // namespace

TEST_CASE("docs_check: a stale number fails, --update rewrites it, and the page then passes") {
  const auto root =
      tree("stale", kRun +
                        "<!-- docs-check table\ncols: mm1\nrow 1: {run}:/window/seconds*1000\n"
                        "row 2: {run}:/throughput/ops_per_s tol=0\n-->\n"
                        "| | mm1 |\n|---|---|\n| window (ms) | 20 |\n| throughput (ops/s) | 1 234 |\n");
  const auto first = check(root);
  INFO(first.output);
  CHECK(first.exit_code == 1);
  CHECK(first.output.find("docs/page.md:13: FAIL shown 1 234") != std::string::npos);
  CHECK(first.output.find("2 number(s) checked, 1 differ") != std::string::npos);

  const auto upd = check(root, "--update");
  INFO(upd.output);
  CHECK(upd.output.find("updated 1 number(s)") != std::string::npos);
  const auto page = slurp(root / "docs/page.md");
  CHECK(page.find("| window (ms) | 20 |") != std::string::npos);
  CHECK(page.find("1 234") == std::string::npos);

  const auto again = check(root, "--print");
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("2 number(s) checked, 0 differ") != std::string::npos);
}

TEST_CASE("docs_check: inline marks, none placeholders and skipped figures") {
  const auto root = tree("inline", kRun +
                                       "The window lasts 20<!--= mm1:/window/seconds*1000 --> ms, "
                                       "failed requests: –<!--= mm1:/requests/failed -->.\n\n"
                                       "<!-- docs-check skip wall time, not reproducible -->\n"
                                       "| wall s |\n|---|\n| 1.24 |\n");
  const auto r = check(root, "--print");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("ok   shown 20") != std::string::npos);
  CHECK(r.output.find("1 number(s) not checked: wall time, not reproducible") != std::string::npos);
}

TEST_CASE("docs_check: a wrong marker is exit 2 naming its line") {
  SECTION("two numbers in a cell, one expression") {
    const auto root =
        tree("two", kRun +
                        "<!-- docs-check table\ncols: mm1\nrow 1: {run}:/throughput/ops_per_s\n-->\n"
                        "| | mm1 |\n|---|---|\n| x | 1 / 2 |\n");
    const auto r = check(root);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("line 11: the cell '1 / 2' shows 2 number(s) but the marker gives 1") !=
          std::string::npos);
  }
  SECTION("a run no command writes") {
    const auto root = tree("norun", kRun + "Rate 5<!--= other:/throughput/ops_per_s -->.\n");
    const auto r = check(root);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("no command on the page writes 'other'") != std::string::npos);
  }
  SECTION("an unknown marker") {
    const auto root = tree("unknown", "<!-- docs-check tabel -->\n");
    const auto r = check(root);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("line 1: unknown marker 'docs-check tabel'") != std::string::npos);
  }
}

TEST_CASE("docs_check: a glob that also reads another page's outputs fails") {
  const auto root = tree("glob", "```sh\njq .throughput /tmp/t/*/results.json\n```\n");
  std::ofstream(root / "docs/other.md") << kRun;
  const auto r = check(root);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("the glob '/tmp/t/*/results.json' also reads '/tmp/t/mm1', written by docs/other.md") !=
        std::string::npos);
}
