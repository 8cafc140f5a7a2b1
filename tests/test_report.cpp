// `uringsim report`: HTML from compare and sweep directories, checked as text and rendered in
// headless Chromium; bad input exits 2 without writing anything. gnuplot and chromium are
// required tools here (setup.sh installs them): a missing one fails the test, it is not skipped.
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <regex>

#include "cli_helpers.hpp"
#include "tools/app/report_util.hpp"
#include "uringsim_version.hpp"

using namespace testing;
namespace fs = std::filesystem;
namespace report = uringsim::app::report;

namespace {

const std::string kMm1 = source_path("scenarios/validation/mm1.json");
const std::string kEcho = source_path("scenarios/seeds/async-hybrid.json");

// stdout only by default: chromium's stderr is noise about dbus and GPUs.
Cli sh(const std::string& cmd, bool with_stderr = false) {
  return run_shell(cmd, with_stderr);
}

void require_tool(const std::string& exe, const std::string& package) {
  if (report::find_in_path(exe).empty())
    FAIL(exe << " is not installed: run ./setup.sh (it installs the Debian package " << package << ")");
}

// Every figure id is present as <figure class="plot">, holds an inline <svg> and a caption.
void check_figures(const std::string& html, const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    INFO("figure " << id);
    const auto at = html.find("id=\"" + id + "\"");
    REQUIRE(at != std::string::npos);
    const auto open = html.rfind("<figure", at);
    REQUIRE(open != std::string::npos);
    CHECK(html.substr(open, at - open).find("class=\"plot\"") != std::string::npos);
    const auto close = html.find("</figure>", at);
    REQUIRE(close != std::string::npos);
    const auto body = html.substr(at, close - at);
    CHECK(body.find("<svg") != std::string::npos);
    CHECK(body.find("</svg>") != std::string::npos);
    CHECK(body.find("<figcaption>") != std::string::npos);
  }
}

// Nothing is fetched from the network: no http(s) or protocol-relative src/href, no scripts.
void check_self_contained(const std::string& html) {
  static const std::regex external(R"((src|href)\s*=\s*['"]?\s*(https?:|//))", std::regex::icase);
  CHECK_FALSE(std::regex_search(html, external));
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("<?xml") == std::string::npos);  // the SVG prologs were stripped
}

// Renders the page in headless Chromium: the DOM it builds has every figure with its svg, and a
// screenshot comes out as a non-empty PNG.
void check_in_chromium(const fs::path& html, const std::vector<std::string>& ids, const fs::path& png) {
  require_tool("chromium", "chromium");
  // One profile per test directory: tests running at once must not share (or wipe) a profile.
  const auto profile = fresh_dir("chromium-profile-" + png.parent_path().filename().string());
  const std::string base =
      "timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--user-data-dir=" +
      profile.string();
  const auto dom = sh(base + " --dump-dom file://" + fs::absolute(html).string());
  INFO(dom.output.substr(0, 2000));
  REQUIRE(dom.exit_code == 0);
  check_figures(dom.output, ids);
  fs::remove(png);
  const auto shot = sh(base + " --hide-scrollbars --window-size=1200,3000 --screenshot=" + png.string() +
                       " file://" + fs::absolute(html).string());
  REQUIRE(shot.exit_code == 0);
  REQUIRE(fs::exists(png));
  const auto bytes = slurp(png);
  CHECK(bytes.size() > 10000);  // a blank page compresses to far less than a page with plots
  CHECK(bytes.substr(1, 3) == "PNG");
}

// The CDF figure's data block for variant number k is the bins of that variant's runs, merged: one
// row "edge fraction-below" per distinct bin edge (compare directory layout runs/<v>/rep<i>).
void check_cdf_data(const std::string& html, const fs::path& dir, const std::string& variant, int k,
                    int reps) {
  INFO("variant " << variant);
  const auto at = html.find("id=\"plot-latency-cdf-data\"");
  REQUIRE(at != std::string::npos);
  const auto end = html.find("</details>", at);
  const std::string head = "$c" + std::to_string(k) + " &lt;&lt; EOD";
  const auto block_at = html.find(head + "\n", at);
  REQUIRE(block_at < end);
  const auto block_end = html.find("\nEOD\n", block_at + head.size());
  REQUIRE(block_end < end);
  const std::string block = html.substr(block_at + head.size(), block_end + 1 - block_at - head.size());
  std::map<double, std::uint64_t> merged;
  std::uint64_t total = 0;
  for (int i = 0; i < reps; ++i) {
    const auto r =
        nlohmann::json::parse(slurp(dir / "runs" / variant / ("rep" + std::to_string(i)) / "results.json"));
    for (const auto& b : r["latency_us"]["bins"]) {
      merged[b[0].get<double>()] += b[1].get<std::uint64_t>();
      total += b[1].get<std::uint64_t>();
    }
  }
  REQUIRE(total > 0);
  std::uint64_t below = 0;
  std::size_t rows = 0;
  for (const auto& [edge, c] : merged) {
    below += c;
    const auto row = fmt::format("\n{} {}\n", edge, static_cast<double>(below) / static_cast<double>(total));
    INFO(row);
    CHECK(block.find(row) != std::string::npos);
    ++rows;
  }
  CHECK(rows > 10);
}

double at(const nlohmann::json& j, const char* ptr) {
  const nlohmann::json::json_pointer p(ptr);
  return j.contains(p) ? j.at(p).get<double>() : 0.0;
}

// A sweep directory as `uringsim sweep` lays it out, made by hand from `uringsim run --set`:
// async-hybrid echo, kernel.iowq.max_unbound in {2, 4, 8}, variants blocking/hybrid, 2 reps.
fs::path make_sweep_dir(const std::string& name) {
  const auto dir = fresh_dir(name);
  const std::vector<std::string> values = {"2", "4", "8"}, variants = {"blocking", "hybrid"};
  std::string csv =
      "point,variant,rep,seed,kernel.iowq.max_unbound,throughput_ops_per_s,latency_mean_us,latency_p50_us,"
      "latency_p99_us,cpu_total_pct,spin_slowpath_pct,results\n";
  int point = 0;  // sweep numbers every run, replications included
  for (std::size_t p = 0; p < values.size(); ++p)
    for (const auto& v : variants)
      for (int rep = 0; rep < 2; ++rep) {
        const std::string rel = fmt::format("runs/p{}/{}/rep{}", p, v, rep);
        const auto r =
            run_cli("run " + kEcho + " --quiet --variant " + v + " --seed " + std::to_string(1 + rep) +
                    " --set duration_ms=40 --set warmup_ms=10 --set workload.connections=100" +
                    " --set kernel.iowq.max_unbound=" + values[p] + " --out " + (dir / rel).string());
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(slurp(dir / rel / "results.json"));
        // The results path is quoted, as a CSV writer may do; the parser must accept it.
        csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},\"{}/results.json\"\n", point++, v, rep, 1 + rep,
                           values[p], at(j, "/throughput/ops_per_s"), at(j, "/latency_us/mean"),
                           at(j, "/latency_us/p50"), at(j, "/latency_us/p99"), at(j, "/cpu/total_pct"),
                           at(j, "/profile/spin_slowpath_pct"), rel);
      }
  std::ofstream(dir / "sweep.csv") << csv;
  const nlohmann::json sj = {{"scenario", kEcho},
                             {"grids", {{{"path", "kernel.iowq.max_unbound"}, {"values", values}}}},
                             {"variants", variants},
                             {"reps", 2},
                             {"points", nlohmann::json::array()}};
  std::ofstream(dir / "sweep.json") << sj.dump(2);
  return dir;
}

}  // namespace

TEST_CASE("report: a compare directory becomes one self-contained HTML page, rendered by Chromium") {
  require_tool("gnuplot", "gnuplot-nox");
  const auto dir = fresh_dir("report-compare");
  const auto c = run_cli("compare " + kMm1 + " --variants rho08,rho09 --reps 2 --set duration_ms=50" +
                         " --set warmup_ms=10 --out " + dir.string());
  INFO(c.output);
  REQUIRE(c.exit_code == 0);
  const auto r = run_cli("report " + dir.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto html = slurp(dir / "report.html");
  REQUIRE(!html.empty());
  check_self_contained(html);
  const std::vector<std::string> ids = {"plot-means-ci", "plot-latency-cdf", "plot-latency-tail",
                                        "plot-cpu-by-thread"};
  check_figures(html, ids);
  check_cdf_data(html, dir, "rho08", 0, 2);
  check_cdf_data(html, dir, "rho09", 1, 2);
  CHECK(html.find("total ± 95% CI") != std::string::npos);  // CPU error bars over the 2 replications
  // mm1 has no io-wq: those plots are replaced by a note, not drawn empty.
  CHECK(html.find("plot-iowq-workers") == std::string::npos);
  CHECK(html.find("io-wq plots skipped") != std::string::npos);
  for (const char* s : {"mm1", "scenarios/validation/mm1.json", URINGSIM_VERSION, "rho08", "rho09",
                        "throughput (ops/s)", "latency p99 (us)", "diff vs rho08", "significant", "<table"})
    CHECK(html.find(s) != std::string::npos);
  // --out writes elsewhere; the page is the same.
  const auto other = dir / "elsewhere" / "r.html";
  REQUIRE(run_cli("report " + dir.string() + " --out " + other.string()).exit_code == 0);
  CHECK(slurp(other) == html);
  check_in_chromium(dir / "report.html", ids, dir / "report.png");
}

TEST_CASE("report: a sweep directory gets per-point tables and plots vs the swept parameter") {
  require_tool("gnuplot", "gnuplot-nox");
  const auto dir = make_sweep_dir("report-sweep");
  const auto r = run_cli("report " + dir.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto html = slurp(dir / "report.html");
  check_self_contained(html);
  const std::vector<std::string> ids = {"plot-throughput",    "plot-latency-p99",  "plot-latency-cdf",
                                        "plot-cpu-by-thread", "plot-iowq-workers", "plot-iowq-queued"};
  check_figures(html, ids);
  CHECK(html.find("io-wq plots skipped") == std::string::npos);
  // Error bars are drawn because there are 2 reps, and the table has one row per point and variant.
  CHECK(html.find("error bars are 95 % confidence intervals") != std::string::npos);
  for (const char* s : {"async-hybrid", "kernel.iowq.max_unbound", "blocking", "hybrid", "iou-wrk"})
    CHECK(html.find(s) != std::string::npos);
  // One table row per grid point and variant, the 2 replications aggregated.
  std::size_t rows = 0;
  for (auto pos = html.find("<td>blocking</td>"); pos != std::string::npos;
       pos = html.find("<td>blocking</td>", pos + 1))
    ++rows;
  CHECK(rows == 3);
  check_in_chromium(dir / "report.html", ids, dir / "report.png");
}

TEST_CASE("report: reads what uringsim sweep writes") {
  require_tool("gnuplot", "gnuplot-nox");
  const auto dir = fresh_dir("report-real-sweep");
  const auto s =
      run_cli("sweep " + kMm1 + " --grid workload.service.mean_us=4,8 --variants rho08,rho09 --reps 2" +
              " --set duration_ms=30 --set warmup_ms=5 --quiet --out " + dir.string());
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  const auto r = run_cli("report " + dir.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto html = slurp(dir / "report.html");
  check_self_contained(html);
  check_figures(html, {"plot-throughput", "plot-latency-p99", "plot-latency-cdf", "plot-cpu-by-thread"});
  // Replications of a grid point are aggregated (n = 2), so the plots carry error bars.
  CHECK(html.find("error bars are 95 % confidence intervals") != std::string::npos);
  CHECK(html.find("workload.service.mean_us") != std::string::npos);
}

TEST_CASE("report: bad input exits 2 naming the file and line, and writes no report") {
  const auto dir = fresh_dir("report-bad");
  auto expect_bad = [&](const fs::path& d, const std::string& needle) {
    const auto r = run_cli("report " + d.string());
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(needle) != std::string::npos);
    CHECK_FALSE(fs::exists(d / "report.html"));
  };
  expect_bad(dir / "missing", "not a directory");
  fs::create_directories(dir / "empty");
  expect_bad(dir / "empty", "neither compare.json");

  fs::create_directories(dir / "badjson");
  std::ofstream(dir / "badjson" / "compare.json") << "{\n  \"scenario\": \"x\",\n  \"variants\": [,]\n}\n";
  expect_bad(dir / "badjson", "compare.json:3:");

  fs::create_directories(dir / "nomirror");  // valid JSON, but the runs it names are not there
  std::ofstream(dir / "nomirror" / "compare.json")
      << R"({"scenario": "x.json", "variants": ["a"], "reps": 1, "metrics": {}})";
  expect_bad(dir / "nomirror", "runs/a/rep0/results.json");

  const std::string header =
      "point,variant,rep,seed,g,throughput_ops_per_s,latency_mean_us,latency_p50_us,latency_p99_us,"
      "cpu_total_pct,spin_slowpath_pct,results\n";
  fs::create_directories(dir / "shortrow");
  std::ofstream(dir / "shortrow" / "sweep.csv")
      << header << "p0,a,0,1,1,1,1,1,1,1,0,r.json\np1,a,0,1,2,1,1\n";
  expect_bad(dir / "shortrow", "sweep.csv:3: expected 12 fields");
  fs::create_directories(dir / "nan");
  std::ofstream(dir / "nan" / "sweep.csv") << header << "p0,a,0,1,1,fast,1,1,1,1,0,r.json\n";
  expect_bad(dir / "nan", "sweep.csv:2: column \"throughput_ops_per_s\"");
  fs::create_directories(dir / "nocol");
  std::ofstream(dir / "nocol" / "sweep.csv") << "point,variant\np0,a\n";
  expect_bad(dir / "nocol", "sweep.csv:1: missing column");
}

TEST_CASE("report: without gnuplot it exits 1 and says to run setup.sh") {
  const auto dir = fresh_dir("report-nognuplot");
  const auto r = run_cli("run " + kMm1 + " --quiet --set duration_ms=20 --set warmup_ms=5 --out " +
                         (dir / "runs" / "base" / "rep0").string());
  REQUIRE(r.exit_code == 0);
  std::ofstream(dir / "compare.json")
      << R"({"scenario": "mm1.json", "variants": [""], "reps": 1, "metrics": {}})";
  // An absolute path to the tool and an empty PATH: gnuplot cannot be found.
  const auto n = sh("env PATH=/nonexistent " + std::string(URINGSIM_EXE) + " report " + dir.string(), true);
  CHECK(n.exit_code == 1);
  CHECK(n.output.find("setup.sh") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "report.html"));
}

TEST_CASE("report: CSV parsing handles quotes and reports the line of a bad row") {
  const auto csv = report::parse_csv("a,b\r\n\"x,1\",\"say \"\"hi\"\"\"\n\n3,\"multi\nline\"\n4,5", "t.csv");
  REQUIRE(csv.rows.size() == 3);
  CHECK(csv.rows[0] == std::vector<std::string>{"x,1", "say \"hi\""});
  CHECK(csv.rows[1][1] == "multi\nline");
  CHECK(csv.lines == std::vector<int>{2, 4, 6});
  CHECK_THROWS_WITH(report::parse_csv("a,b\n1,2\n3\n", "t.csv"), Catch::Contains("t.csv:3:"));
  CHECK_THROWS_WITH(report::parse_csv("a,b\n\"1,2\n", "t.csv"), Catch::Contains("unterminated"));
}

TEST_CASE("report: inline SVG drops the prolog and makes ids unique per figure") {
  const std::string svg =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg><defs><path id='gpPt1'/></defs>"
      "<use xlink:href='#gpPt1'/><rect fill=\"url(#pat)\" id=\"pat\"/></svg>";
  const auto out = report::inline_svg(svg, "f1");
  CHECK(out.rfind("<svg", 0) == 0);
  CHECK(out.find("id='f1-gpPt1'") != std::string::npos);
  CHECK(out.find("href='#f1-gpPt1'") != std::string::npos);
  CHECK(out.find("url(#f1-pat)") != std::string::npos);
  CHECK(out.find("id=\"f1-pat\"") != std::string::npos);
}

TEST_CASE("report: a directory for a file, or a value of the wrong type, exits 2 naming the file and key") {
  const auto dir = fresh_dir("report-shapes");
  auto expect_bad = [&](const fs::path& d, const std::string& needle) {
    const auto r = run_cli("report " + d.string());
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(needle) != std::string::npos);
    CHECK(r.output.find("type must be") == std::string::npos);  // the JSON library's text names no key
    CHECK_FALSE(fs::exists(d / "report.html"));
  };
  const std::string compare_json = R"({"scenario": "x.json", "variants": ["a"], "reps": 1, "metrics": {}})";
  const std::string header =
      "point,variant,rep,seed,g,throughput_ops_per_s,latency_mean_us,latency_p50_us,latency_p99_us,"
      "cpu_total_pct,spin_slowpath_pct,results\n";

  fs::create_directories(dir / "cjdir" / "compare.json");
  expect_bad(dir / "cjdir", "compare.json: is a directory");
  fs::create_directories(dir / "csvdir" / "sweep.csv");
  expect_bad(dir / "csvdir", "sweep.csv: is a directory");
  fs::create_directories(dir / "sjdir" / "sweep.json");
  std::ofstream(dir / "sjdir" / "sweep.csv") << header << "0,a,0,1,1,1,1,1,1,1,0,r/results.json\n";
  expect_bad(dir / "sjdir", "sweep.json: is a directory");
  fs::create_directories(dir / "rundir" / "runs" / "a" / "rep0" / "results.json");
  std::ofstream(dir / "rundir" / "compare.json") << compare_json;
  expect_bad(dir / "rundir", "rep0/results.json: is a directory");

  fs::create_directories(dir / "scenario");
  std::ofstream(dir / "scenario" / "compare.json") << R"({"scenario": {}, "variants": ["a"], "reps": 1})";
  expect_bad(dir / "scenario", "compare.json: /scenario: expected a string, got {}");
  fs::create_directories(dir / "mean");
  std::ofstream(dir / "mean" / "compare.json") << R"({"scenario": "x.json", "variants": ["a"], "reps": 1,
             "metrics": {"/x/y": {"by_variant": {"a": {"mean": "fast"}}}}})";
  expect_bad(dir / "mean",
             "compare.json: /metrics/~1x~1y/by_variant/a/mean: expected a number, got \"fast\"");
  fs::create_directories(dir / "sjtype");
  std::ofstream(dir / "sjtype" / "sweep.csv") << header << "0,a,0,1,1,1,1,1,1,1,0,r/results.json\n";
  std::ofstream(dir / "sjtype" / "sweep.json")
      << R"({"scenario": "x.json", "grids": [{"path": 3, "values": []}]})";
  expect_bad(dir / "sjtype", "sweep.json: /grids/0/path: expected a string, got 3");
  fs::create_directories(dir / "deep");
  std::ofstream(dir / "deep" / "compare.json") << std::string(100000, '[') << std::string(100000, ']');
  expect_bad(dir / "deep",
             "compare.json:1:65: malformed JSON: arrays and objects nested more than 64 levels deep");
}
