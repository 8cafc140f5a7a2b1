// Outputs other tools read (issue 15): fio's JSON layout and text scaling, import-fio on a real
// job file, the latency histogram bins in results.json and the report's CDF drawn from them,
// compare.csv's per-run rows.
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

#include "analysis/histogram.hpp"
#include "cli_helpers.hpp"
#include "models/workloads/fio.hpp"
#include "tools/app/fio_json.hpp"
#include "tools/app/report_util.hpp"

using namespace testing;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;
namespace report = uringsim::app::report;
using nlohmann::json;

namespace {

const std::string kSqpoll = source_path("scenarios/seeds/sqpoll-deputy.json");
const std::string kMm1 = source_path("scenarios/validation/mm1.json");

// fio writes integer nanoseconds; results.json has microseconds.
void check_same_ns(const json& fio_ns, const json& results_us) {
  CHECK(std::abs(fio_ns.get<double>() - results_us.get<double>() * 1e3) <= 0.5 + 1e-9 * fio_ns.get<double>());
}

}  // namespace

TEST_CASE("outputs: fio numbers are scaled as fio prints them") {
  using uringsim::models::fio_scaled;
  CHECK(fio_scaled(123456, false, "") == "123k");
  CHECK(fio_scaled(504e6, true, "B/s") == "481MiB/s");
  CHECK(fio_scaled(504e6, false, "B/s") == "504MB/s");
  CHECK(fio_scaled(2000, false, "") == "2000");
  CHECK(fio_scaled(12345, false, "") == "12.3k");
  CHECK(fio_scaled(30279519436.0, true, "B") == "28.2GiB");
  CHECK(fio_scaled(999.6, false, "") == "1000");
  CHECK(fio_scaled(0, false, "") == "0");
  CHECK(fio_scaled(1234567, false, "") == "1235k");  // four digits fit: no decimals, rounded
}

TEST_CASE("outputs: run --fio-json writes fio's layout with results.json's numbers") {
  const auto dir = fresh_dir("outputs-fio-json");
  const auto file = dir / "fio.json";
  const auto r =
      run_cli("run " + kSqpoll + " --variant with --set warmup_ms=10 --set duration_ms=100 --out " +
              dir.string() + " --fio-json " + file.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto res = json::parse(slurp(dir / "results.json"));
  // The text report scales IOPS and bandwidth as fio does (2000 IOPS of 4 KiB: "8000KiB/s (8192kB/s)").
  using uringsim::models::fio_scaled;
  const double iops = res["fio"]["read"]["iops"].get<double>(), bw = res["fio"]["read"]["bw_bytes_per_s"];
  CHECK(iops == Approx(2000).epsilon(0.02));
  CHECK_THAT(r.output, Contains(fmt::format("read: IOPS={}, BW={} ({})(", fio_scaled(iops, false, ""),
                                            fio_scaled(bw, true, "B/s"), fio_scaled(bw, false, "B/s"))));
  CHECK_THAT(r.output, Contains("KiB/s (") && Contains("kB/s)("));
  const auto fj = json::parse(slurp(file));
  CHECK(fj["fio version"].get<std::string>().rfind("uringsim-", 0) == 0);
  CHECK(fj["disk_util"].is_array());
  REQUIRE(fj["jobs"].size() == 1);
  const auto& job = fj["jobs"][0];
  CHECK(job["groupid"] == 0);
  CHECK(job["error"] == 0);
  CHECK(job["job options"]["ioengine"] == "io_uring");
  CHECK(job["job options"]["rw"] == "randread");
  CHECK(job["usr_cpu"] == res["fio"]["cpu"]["usr_pct"]);
  CHECK(job["sys_cpu"] == res["fio"]["cpu"]["sys_pct"]);
  CHECK(job["ctx"] == res["fio"]["ctx"]);
  const auto& rd = job["read"];
  const auto& fr = res["fio"]["read"];
  CHECK(rd["iops"] == fr["iops"]);
  CHECK(rd["total_ios"] == fr["ios"]);
  CHECK(rd["io_bytes"].get<std::uint64_t>() == fr["ios"].get<std::uint64_t>() * 4096);
  CHECK(rd["runtime"] == 100);
  CHECK(job["write"]["total_ios"] == 0);
  for (const char* lat : {"slat", "clat", "lat"}) {
    INFO(lat);
    const auto& f = rd[std::string(lat) + "_ns"];
    const auto& u = fr[std::string(lat) + "_us"];
    CHECK(f["N"] == u["count"]);
    check_same_ns(f["min"], u["min"]);
    check_same_ns(f["max"], u["max"]);
    CHECK(f["mean"].get<double>() == Approx(u["mean"].get<double>() * 1e3));
    CHECK(f["stddev"].get<double>() == Approx(u["stdev"].get<double>() * 1e3));
    const auto& ps = uringsim::models::FioModel::fio_percentiles();
    REQUIRE(f["percentile"].size() == ps.size());
    for (const double p : ps) {
      INFO("p" << p);
      const auto key = fmt::format("{:f}", p);
      check_same_ns(f["percentile"][key], u[uringsim::analysis::percentile_key(p)]);
    }
  }
  CHECK(rd["clat_ns"]["percentile"].contains("99.990000"));
}

TEST_CASE("outputs: --fio-json on a workload that is not fio is bad input, nothing written") {
  const auto dir = fresh_dir("outputs-fio-json-bad");
  const auto r = run_cli("run " + kMm1 + " --out " + (dir / "out").string() + " --fio-json " +
                         (dir / "f.json").string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("--fio-json"));
  CHECK_FALSE(fs::exists(dir / "f.json"));
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("outputs: import-fio accepts a realistic job file, with a note per option it ignores") {
  const auto dir = fresh_dir("outputs-import");
  const auto job = dir / "nvme.fio";
  std::ofstream(job) << R"(; a job file as people write them
[global]
ioengine=io_uring
thread
group_reporting
time_based
runtime=2s
ramp_time=500ms
filename=/dev/nvme0n1
size=10g
invalidate=1
randrepeat=0
norandommap
lat_percentiles=1
percentile_list=50:99:99.9
output-format=json
direct=1
bs=4k
iodepth=32
fixedbufs
registerfiles

[randread]
name=randread-qd32
rw=randread
stonewall
)";
  const auto out = dir / "s.json";
  const auto r = run_cli("import-fio " + job.string() + " -o " + out.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const char* opt : {"filename=/dev/nvme0n1", "size=10g", "invalidate=1", "randrepeat=0", "norandommap",
                          "stonewall", "thread", "group_reporting", "time_based", "lat_percentiles=1",
                          "output-format=json", "fixedbufs", "registerfiles"})
    CHECK_THAT(r.output, Contains(std::string(": ") + opt + ": no effect: "));
  CHECK_THAT(r.output, Contains("note: " + job.string() + ":9: filename=/dev/nvme0n1: no effect"));
  const auto s = json::parse(slurp(out));
  CHECK(s["duration_ms"] == 2000);
  CHECK(s["warmup_ms"] == 500);
  CHECK(s["workload"]["iodepth"] == 32);
  CHECK(s["workload"]["direct"] == true);
  CHECK(s["measure"]["percentiles"] == json({50, 99, 99.9}));
  CHECK(s["name"] == "randread");  // the section name
  // An option that changes the workload is still refused (without --lenient), naming it.
  std::ofstream(job, std::ios::app) << "iodepth_batch_submit=8\n";
  const auto bad = run_cli("import-fio " + job.string() + " -o " + (dir / "bad.json").string());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Contains("iodepth_batch_submit"));
  CHECK_FALSE(fs::exists(dir / "bad.json"));
}

TEST_CASE("outputs: results.json holds the latency histogram's non-empty bins") {
  const auto res = run_results("outputs-bins", kMm1 + " --variant rho08 --set duration_ms=50");
  const auto& lat = res["latency_us"];
  const auto& bins = lat["bins"];
  REQUIRE(bins.is_array());
  REQUIRE(bins.size() > 10);
  std::uint64_t sum = 0;
  double prev = 0;
  for (const auto& b : bins) {
    REQUIRE(b.size() == 2);
    CHECK(b[0].get<double>() > prev);  // ascending upper edges
    prev = b[0].get<double>();
    CHECK(b[1].get<std::uint64_t>() > 0);  // non-empty bins only
    sum += b[1].get<std::uint64_t>();
  }
  CHECK(sum == lat["count"].get<std::uint64_t>());
  CHECK(report::bins_problem(bins).empty());
  // The max is below the last edge (within its rounding), the p50 below the edge where half are.
  CHECK(lat["max"].get<double>() <= bins.back()[0].get<double>() * (1 + 1e-5));
  std::uint64_t below = 0;
  for (const auto& b : bins) {
    below += b[1].get<std::uint64_t>();
    if (2 * below >= sum) {
      CHECK(lat["p50"].get<double>() <= b[0].get<double>() * (1 + 1e-5));
      break;
    }
  }
}

TEST_CASE("outputs: histogram bins and the CDF built from them") {
  uringsim::analysis::LatencyHistogram h;
  for (int i = 1; i <= 1000; ++i) h.record(1000.0 * i);  // 1 .. 1000 us
  h.record(0.5);                                         // the underflow bin
  const auto bins = h.bins_json();
  std::uint64_t sum = 0;
  for (const auto& b : bins) sum += b[1].get<std::uint64_t>();
  CHECK(sum == h.count());
  CHECK(bins.front()[0].get<double>() == 0.001);  // below 1 ns
  CHECK(bins.front()[1] == 1);
  // Two runs' bins merge by edge.
  const auto pts = report::cdf_from_bins({&bins, &bins});
  REQUIRE(!pts.empty());
  CHECK(pts.back().below == 2 * h.count());
  CHECK(pts.back().total == 2 * h.count());
  CHECK(pts.size() == bins.size());
  // The fraction below each edge is the true one: values 1..1000 us, i.e. edge-in-us of them.
  for (const auto& p : pts)
    if (p.edge_us > 1 && p.edge_us < 1000) {
      const double truth = (std::floor(p.edge_us * (1 - 1e-9)) + 1) / 1001.0;  // + the underflow value
      CHECK(static_cast<double>(p.below) / static_cast<double>(p.total) == Approx(truth).margin(1e-12));
    }
  CHECK_FALSE(report::bins_problem(json::array({json::array({2.0, 1}), json::array({1.0, 1})})).empty());
  CHECK_FALSE(report::bins_problem(json::array({json::array({1.0, -1})})).empty());
  CHECK_FALSE(report::bins_problem(json::object()).empty());
}

TEST_CASE("outputs: plot ranges leave a margin, and far-apart series get a log scale") {
  auto parse = [](const std::string& r) {
    const auto colon = r.find(':');
    return std::make_pair(std::stod(r.substr(1, colon - 1)), std::stod(r.substr(colon + 1)));
  };
  for (const auto& [lo, hi, log] : std::vector<std::tuple<double, double, bool>>{
           {0, 1, false}, {5, 5, false}, {0, 0, false}, {-3, 7, false}, {1e-3, 1, true}, {10, 10, true}}) {
    INFO(lo << " " << hi << " " << log);
    const auto [a, b] = parse(report::padded_range(lo, hi, log));
    CHECK(a < lo);
    CHECK(b > hi);
    if (log) CHECK(a > 0);
  }
  CHECK(report::needs_log_scale({7215, 13.79}));
  CHECK_FALSE(report::needs_log_scale({166361, 75401}));
  CHECK_FALSE(report::needs_log_scale({0, 5}));  // an all-zero series has no log scale
}

TEST_CASE("outputs: compare.csv has a row per run, then the summary rows") {
  const auto dir = fresh_dir("outputs-compare");
  const auto r = run_cli("compare " + kMm1 + " --variants rho08,rho09 --reps 2 --set duration_ms=30" +
                         " --set warmup_ms=5 --out " + dir.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto csv = report::parse_csv(slurp(dir / "compare.csv"), "compare.csv");
  const std::vector<std::string> header = {"row",
                                           "variant",
                                           "rep",
                                           "seed",
                                           "throughput_ops_per_s",
                                           "latency_mean_us",
                                           "latency_p50_us",
                                           "latency_p99_us",
                                           "cpu_total_pct",
                                           "spin_slowpath_pct",
                                           "results"};
  CHECK(csv.header == header);
  const auto cj = json::parse(slurp(dir / "compare.json"));
  std::map<std::string, int> kinds;
  for (const auto& row : csv.rows) ++kinds[row[0]];
  CHECK(kinds["run"] == 4);
  CHECK(kinds["n"] == 2);
  CHECK(kinds["mean"] == 2);
  CHECK(kinds["ci95_half_width"] == 2);
  CHECK(kinds["diff_vs_baseline"] == 1);  // not for the baseline
  CHECK(kinds["significant"] == 1);
  for (const auto& row : csv.rows) {
    if (row[0] == "run") {
      // Each run's values are that run's results.json numbers.
      const auto res = json::parse(slurp(dir / row[10]));
      CHECK(row[10] == "runs/" + row[1] + "/rep" + row[2] + "/results.json");
      CHECK(std::stoull(row[3]) == res["seed"].get<std::uint64_t>());
      CHECK(res["variant"] == row[1]);
      CHECK(std::stod(row[4]) == res["throughput"]["ops_per_s"].get<double>());
      CHECK(std::stod(row[7]) == res["latency_us"]["p99"].get<double>());
      CHECK(std::stod(row[9]) == res["profile"]["spin_slowpath_pct"].get<double>());
    } else if (row[0] == "mean") {
      CHECK(row[2].empty());
      CHECK(std::stod(row[4]) ==
            Approx(cj["metrics"]["/throughput/ops_per_s"]["by_variant"][row[1]]["mean"].get<double>()));
    }
  }
}
