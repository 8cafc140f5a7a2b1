// `uringsim export-fio`: a scenario's fio workload as a fio job file, and back through import-fio
// (docs/import-fio.md, Export).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "config/scenario.hpp"
#include "tools/app/fio_options.hpp"
#include "tools/app/fio_to_scenario.hpp"
#include "tools/app/scenario_to_fio.hpp"

using namespace uringsim::app::fio;
using Catch::Matchers::Contains;
using uringsim::config::InputError;
using uringsim::config::LoadOptions;
using uringsim::config::Scenario;
namespace fs = std::filesystem;

namespace {

Scenario load_text(const std::string& text, LoadOptions lo = {}) {
  return uringsim::config::load_scenario_text(text, "test.json", lo);
}

// The job file read back by import-fio and loaded like `run` would load it.
Scenario reimport(const std::string& job_text) {
  ImportOptions io;
  io.source = "exported.fio";
  const auto imported = to_scenario(parse_job_file(job_text, io.source), io);
  return load_text(imported.scenario.dump());
}

// What a round trip must give back: the workload, duration, warm-up and percentiles.
void check_round_trip(const Scenario& original) {
  const std::string text = scenario_to_fio(original);
  INFO(text);
  const Scenario back = reimport(text);
  CHECK(back.doc.at("workload") == original.doc.at("workload"));
  CHECK(back.doc.at("duration_ms") == original.doc.at("duration_ms"));
  CHECK(back.doc.at("warmup_ms") == original.doc.at("warmup_ms"));
  CHECK(back.doc.at("/measure/percentiles"_json_pointer) ==
        original.doc.at("/measure/percentiles"_json_pointer));
  CHECK(back.doc.at("/kernel/ring/sq_entries"_json_pointer) ==
        original.doc.at("/kernel/ring/sq_entries"_json_pointer));
}

std::string fio_scenario(const std::string& workload_fields, const std::string& top = "") {
  return R"({"name": "t", )" + top + R"("workload": {"type": "fio")" +
         (workload_fields.empty() ? "" : ", " + workload_fields) + "}}";
}

// The option lines of the job file (the part after the section header), for exact checks.
std::vector<std::string> option_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  bool in_job = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.front() == '[')
      in_job = true;
    else if (in_job && !line.empty())
      out.push_back(line);
  }
  return out;
}

bool has_line(const std::vector<std::string>& lines, const std::string& l) {
  return std::find(lines.begin(), lines.end(), l) != lines.end();
}

}  // namespace

TEST_CASE("export-fio: the seed 001 scenario, each variant, round-trips through import-fio") {
  const auto path = testing::source_path("scenarios/seeds/sqpoll-deputy.json");
  for (const std::string variant : {"without", "with", "with-as-posted"}) {
    LoadOptions lo;
    lo.variant = variant;
    const Scenario s = uringsim::config::load_scenario_file(path, lo);
    INFO(variant);
    check_round_trip(s);
  }
  LoadOptions lo;
  lo.variant = "with";
  const std::string text = scenario_to_fio(uringsim::config::load_scenario_file(path, lo));
  const auto lines = option_lines(text);
  CHECK(text.rfind(
            "; fio job file written by uringsim export-fio from scenario \"sqpoll-deputy\", variant \"with\"",
            0) == 0);
  for (const char* l :
       {"ioengine=io_uring", "rw=randread", "bs=4096", "iodepth=128", "rate_iops=2000", "direct=1", "hipri",
        "sqthread_poll", "sqthread_poll_cpu=30", "cpus_allowed=35", "numjobs=1", "thread", "group_reporting",
        "time_based", "runtime=1s", "ramp_time=20ms", "lat_percentiles=1",
        "percentile_list=1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"})
    CHECK(has_line(lines, l));
  // What fio cannot say is listed, with its value, at the top; what is at its default is not.
  CHECK_THAT(text, Contains("; not expressible in fio: /kernel/era = \"5.15\" (model only)\n"));
  CHECK_THAT(text, Contains("; not expressible in fio: /kernel/sqpoll/deputy = true (model only)\n"));
  CHECK_THAT(text,
             Contains("; not expressible in fio: /kernel/sqpoll/idle_us = 110 (stock fio has no option"));
  CHECK_THAT(text, Contains("; not expressible in fio: /machine/cores = 40"));
  CHECK_THAT(text, !Contains("/kernel/iowq"));
  CHECK_THAT(text, !Contains("/machine/ghz"));
  CHECK_THAT(text, !Contains("/costs"));
  // Every comment comes before the job.
  CHECK(text.rfind("; ") < text.find("\n["));
}

TEST_CASE("export-fio: randrw, rates, several jobs, pinning, odd times and deep rings round-trip") {
  const std::vector<std::string> scenarios = {
      fio_scenario(R"("rw": "randrw", "rwmixread": 70, "iodepth": 32, "direct": true)"),
      fio_scenario(R"("rw": "randread", "rate_iops": 1500, "numjobs": 4, "iodepth": 8)"),
      fio_scenario(R"("rw": "read", "sqthread_poll": true, "sqthread_poll_cpu": 2, "cpus_allowed": 3)",
                   R"("machine": {"cores": 4}, )"),
      fio_scenario(R"("rw": "write", "direct": false, "rwmixread": 10)",
                   R"("duration_ms": 0.3, "warmup_ms": 0, )"),
      fio_scenario(R"("rw": "randwrite", "direct": true, "hipri": true)",
                   R"("duration_ms": 2500.5, "warmup_ms": 1500, "measure": {"percentiles": [50, 99.99]}, )"),
      fio_scenario(R"("iodepth": 8192)", R"("kernel": {"ring": {"sq_entries": 8192}}, )"),
  };
  for (const auto& text : scenarios) {
    INFO(text);
    check_round_trip(load_text(text));
  }
  // The options that carry them, exactly.
  auto lines = option_lines(scenario_to_fio(load_text(scenarios[1])));
  CHECK(has_line(lines, "rate_iops=1500"));
  CHECK(has_line(lines, "numjobs=4"));
  lines = option_lines(scenario_to_fio(load_text(scenarios[3])));
  CHECK(has_line(lines, "runtime=300us"));
  CHECK(has_line(lines, "ramp_time=0us"));
  CHECK(has_line(lines, "direct=0"));
  CHECK_FALSE(has_line(lines, "hipri"));
  lines = option_lines(scenario_to_fio(load_text(scenarios[4])));
  CHECK(has_line(lines, "runtime=2500500us"));
  CHECK(has_line(lines, "ramp_time=1500ms"));
  CHECK(has_line(lines, "percentile_list=50:99.99"));
}

TEST_CASE("export-fio: what fio cannot say exactly is said in a comment, and the job still reads back") {
  // A fractional rate: fio's rate_iops is an integer.
  auto text = scenario_to_fio(load_text(fio_scenario(R"("rate_iops": 2.5)")));
  CHECK(has_line(option_lines(text), "rate_iops=3"));
  CHECK_THAT(text, Contains("/workload/rate_iops = 2.5 (fio's rate_iops is an integer; written 3)"));
  CHECK(reimport(text).at("/workload/rate_iops") == 3);
  // Below a microsecond.
  text = scenario_to_fio(load_text(fio_scenario("", R"("duration_ms": 0.0004, )")));
  CHECK(has_line(option_lines(text), "runtime=1us"));
  CHECK_THAT(text, Contains("/duration_ms = 0.0004 (fio's times are whole microseconds; written 1us)"));
  // A rate of randrw is paced per direction by fio: split by the mix, which import-fio refuses.
  text = scenario_to_fio(load_text(fio_scenario(R"("rw": "randrw", "rwmixread": 70, "rate_iops": 2000)")));
  CHECK(has_line(option_lines(text), "rate_iops=1400,600"));
  CHECK_THAT(text, Contains("; approximate: /workload/rate_iops = 2000"));
  CHECK_THROWS_AS(reimport(text), InputError);
  // A ring larger than fio's (fio sizes it from iodepth), a changed cost, a drive table, the seed.
  text = scenario_to_fio(load_text(
      fio_scenario(R"("iodepth": 16)",
                   R"("seed": 7, "kernel": {"ring": {"sq_entries": 64}}, "device": {"parallelism": 32}, )")));
  CHECK_THAT(text, Contains("/kernel/ring/sq_entries = 64 (fio sizes its ring from iodepth = 16)"));
  CHECK_THAT(text, Contains("/device/parallelism = 32 (the simulated drive)"));
  CHECK_THAT(text, Contains("/seed = 7 (the simulator's random streams)"));
  // More percentiles than fio takes: fio's default list, said so.
  std::string many;
  for (int i = 1; i <= 21; ++i) many += (many.empty() ? "" : ", ") + std::to_string(i);
  text = scenario_to_fio(load_text(fio_scenario("", R"("measure": {"percentiles": [)" + many + "]}, ")));
  CHECK_THAT(text, Contains("fio takes at most 20 percentiles"));
  for (const auto& l : option_lines(text)) CHECK(l.rfind("percentile_list=", 0) != 0);
}

TEST_CASE("export-fio: a target is filename= (colons escaped) with size= for a file") {
  const Scenario s = load_text(fio_scenario(""));
  ExportOptions eo;
  eo.target = "/tmp/a:b";
  eo.size_bytes = 1 << 20;
  auto lines = option_lines(scenario_to_fio(s, eo));
  CHECK(has_line(lines, "filename=/tmp/a\\:b"));
  CHECK(has_line(lines, "size=1048576"));
  CHECK_THAT(scenario_to_fio(s, eo), Contains("where not at their defaults:\n; (none)\n\n["));
  eo.target = "/dev/nvme0n1";
  eo.size_bytes = 0;
  lines = option_lines(scenario_to_fio(s, eo));
  CHECK(has_line(lines, "filename=/dev/nvme0n1"));
  for (const auto& l : lines) CHECK(l.rfind("size=", 0) != 0);
  // Without a target the file says how to give one.
  CHECK_THAT(scenario_to_fio(s), Contains("; no filename:"));
  eo.target = "/tmp/x;y";
  CHECK_THROWS_WITH(scenario_to_fio(s, eo), Contains("--target \"/tmp/x;y\": a fio job file cannot name"));
  // size= follows the target: the default for a new file, the size of an existing one.
  const auto dir = testing::fresh_dir("export-fio-size");
  CHECK(size_for_target((dir / "new").string()) == kDefaultFileBytes);
  {
    std::ofstream f(dir / "old");
    f << std::string(8192, 'x');
  }
  CHECK(size_for_target((dir / "old").string()) == 8192);
}

TEST_CASE("export-fio: the CLI writes the job file, or exits 2 and writes nothing") {
  using testing::run_cli;
  const auto dir = testing::fresh_dir("export-fio-cli");
  const auto seed = testing::source_path("scenarios/seeds/sqpoll-deputy.json");
  const auto out = dir / "seed.fio";
  auto r = run_cli("export-fio " + seed + " --variant with --set workload.iodepth=64 --target " +
                   (dir / "data").string() + " -o " + out.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string text = testing::slurp(out);
  const auto lines = option_lines(text);
  CHECK(has_line(lines, "iodepth=64"));
  CHECK(has_line(lines, "filename=" + (dir / "data").string()));
  CHECK(has_line(lines, "size=268435456"));
  CHECK(reimport(text).at("/workload/iodepth") == 64);
  // And import-fio of the written file gives the workload back.
  r = run_cli("import-fio " + out.string() + " -o " + (dir / "back.json").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(
      uringsim::config::load_scenario_file((dir / "back.json").string()).at("/workload/sqthread_poll_cpu") ==
      30);

  // Standard output without -o.
  r = testing::run_shell(std::string(URINGSIM_EXE) + " export-fio " + seed, /*with_stderr=*/false);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("\n[sqpoll-deputy]\nioengine=io_uring\n"));

  // Not a fio workload: exit 2, the field named, nothing written.
  const auto bad_out = dir / "echo.fio";
  r = run_cli("export-fio " + testing::source_path("scenarios/seeds/async-hybrid.json") + " -o " +
              bad_out.string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("export-fio: /workload/type: expected \"fio\", got \"echo\""));
  CHECK_FALSE(fs::exists(bad_out));
  // A bad variant, a bad --set, an unnameable target, a missing file: the same.
  for (const std::string args : {" --variant nope", " --set workload.iodepth=0", " --target '/tmp/a;b'"}) {
    r = run_cli("export-fio " + seed + args + " -o " + bad_out.string());
    INFO(args << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK_FALSE(fs::exists(bad_out));
  }
  CHECK(run_cli("export-fio " + (dir / "missing.json").string()).exit_code == 2);
}

TEST_CASE("export-fio: fio itself parses the exported job files") {
  if (testing::run_shell("command -v fio").exit_code != 0) {
    WARN("skipped: fio is not installed");
    return;
  }
  const auto dir = testing::fresh_dir("export-fio-parse");
  const std::vector<std::string> scenarios = {
      fio_scenario(R"("rw": "randrw", "rwmixread": 70, "rate_iops": 1000, "numjobs": 2)"),
      fio_scenario(R"("rw": "randread", "direct": true, "hipri": true, "sqthread_poll": true,
                      "sqthread_poll_cpu": 0, "cpus_allowed": 1)",
                   R"("duration_ms": 0.3, "measure": {"percentiles": [50, 99.9]}, )"),
  };
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    ExportOptions eo;
    eo.target = (dir / "data:file").string();
    eo.size_bytes = kDefaultFileBytes;
    const auto job = dir / ("job" + std::to_string(i) + ".fio");
    std::ofstream(job) << scenario_to_fio(load_text(scenarios[i]), eo);
    const auto r = testing::run_shell("fio --parse-only " + job.string());
    INFO(testing::slurp(job) << r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, !Contains("rror"));
  }
}
