// The host fio runner (host/fio_runner.*): the scenario's fio workload run by the real fio on this
// kernel. Tests that need fio or io_uring skip, saying why, when the machine has neither.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "config/scenario.hpp"
#include "host/child_process.hpp"
#include "host/fio_report.hpp"
#include "host/fio_runner.hpp"
#include "host/guard.hpp"
#include "host/machine_info.hpp"

using Catch::Matchers::Contains;
using nlohmann::json;
using uringsim::host::HostOptions;
using uringsim::host::HostRun;
using uringsim::host::Unavailable;
namespace fs = std::filesystem;

namespace {

// The scenario text of a fio workload; its machine is this one (machine.cores is a model-only field
// the runner refuses when it differs), unless `top` says otherwise.
std::string scenario_text(const std::string& workload, const std::string& top = "") {
  const std::string machine =
      top.find("\"machine\"") == std::string::npos
          ? fmt::format(R"("machine": {{"cores": {}}}, )", ::sysconf(_SC_NPROCESSORS_ONLN))
          : "";
  return R"({"name": "host-fio", )" + machine + top + R"("workload": {"type": "fio", )" + workload + "}}";
}

uringsim::config::Scenario scenario(const std::string& workload, const std::string& top = "") {
  return uringsim::config::load_scenario_text(scenario_text(workload, top), "test.json");
}

// Why this machine cannot run fio on io_uring, or "".
std::string cannot_run_fio() {
  if (uringsim::host::find_on_path("fio").empty()) return "fio is not installed";
  try {
    uringsim::host::require_io_uring({});
  } catch (const Unavailable& e) {
    return e.what();
  }
  return "";
}

#define SKIP_UNLESS_FIO()                                  \
  do {                                                     \
    if (const auto why = cannot_run_fio(); !why.empty()) { \
      WARN("skipped: " << why);                            \
      return;                                              \
    }                                                      \
  } while (0)

// A fresh $TMPDIR for the runner's temporary directory, so that its removal can be checked.
fs::path own_tmpdir(const std::string& name) {
  const auto d = testing::fresh_dir(name);
  ::setenv("TMPDIR", d.c_str(), 1);
  return d;
}

// Whether the filesystem of dir takes O_DIRECT.
bool allows_o_direct(const fs::path& dir) {
  const auto p = dir / "probe";
  const int fd = ::open(p.c_str(), O_CREAT | O_RDWR | O_DIRECT, 0600);
  if (fd >= 0) ::close(fd);
  fs::remove(p);
  return fd >= 0;
}

HostOptions quiet_options() {
  HostOptions o;
  o.quiet = true;
  return o;
}

// The message of the Unavailable that f throws ("" if none).
template <class F>
std::string unavailable_of(F&& f) {
  try {
    f();
  } catch (const Unavailable& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("host fio: a 0.3 s randread at QD 4 on a temporary file") {
  SKIP_UNLESS_FIO();
  const auto tmp = own_tmpdir("host-fio-randread");
  const bool direct = allows_o_direct(tmp);
  if (!direct) WARN("the temporary directory refuses O_DIRECT: buffered reads");
  const auto s = scenario(fmt::format(R"("rw": "randread", "iodepth": 4, "direct": {})", direct),
                          R"("duration_ms": 300, "warmup_ms": 50, )");
  const HostRun run = uringsim::host::run_fio(s, quiet_options());
  const json& r = run.results;
  INFO(r.dump(2));
  CHECK(r["source"] == "host");
  CHECK(r["scenario"] == s.doc);
  const auto ios = r["/fio/read/ios"_json_pointer].get<std::uint64_t>();
  const double iops = r["/throughput/ops_per_s"_json_pointer].get<double>();
  const double window_s = r["/window/seconds"_json_pointer].get<double>();
  CHECK(ios > 0);
  CHECK(iops > 0);
  REQUIRE(window_s > 0);
  // fio's IOPS are its I/Os over its window.
  CHECK(iops == Approx(static_cast<double>(ios) / window_s).epsilon(0.01));
  CHECK(r["/window/completions"_json_pointer] == ios);
  CHECK(r["/requests/completed"_json_pointer] == ios);
  CHECK_FALSE(r["fio"].contains("write"));
  // The run's latency is fio's lat, with the scenario's percentiles, in microseconds.
  const json& lat = r["latency_us"];
  CHECK(lat["count"].get<std::uint64_t>() > 0);
  for (const char* k : {"mean", "min", "max", "p50", "p90", "p99", "p999"}) REQUIRE(lat[k].is_number());
  CHECK(lat["min"].get<double>() <= lat["p50"].get<double>());
  CHECK(lat["p50"].get<double>() <= lat["p99"].get<double>());
  CHECK(lat["p99"].get<double>() <= lat["max"].get<double>() * 1.01);  // fio's percentiles are binned
  CHECK(r["/fio/read/clat_us/p50"_json_pointer].is_number());
  CHECK(r["/fio/read/lat_us/mean"_json_pointer].get<double>() == Approx(lat["mean"].get<double>()));
  // fio's threads' CPU over the window.
  CHECK(r["/cpu/by_thread/fio_pct"_json_pointer].get<double>() > 0);
  CHECK(r["/cpu/total_pct"_json_pointer].get<double>() >=
        r["/cpu/by_thread/fio_pct"_json_pointer].get<double>());
  // run_info: the job file that ran, the machine, and the temporary file, which is gone.
  const json& info = run.run_info;
  CHECK_THAT(info["/fio/job_file"_json_pointer].get<std::string>(), Contains("\nrw=randread\n"));
  CHECK_THAT(info["/fio/job_file"_json_pointer].get<std::string>(), Contains("\niodepth=4\n"));
  CHECK_THAT(info["/fio/version"_json_pointer].get<std::string>(), Contains("fio-"));
  CHECK(info["/fio/target_created"_json_pointer] == true);
  CHECK(info["nproc"].get<int>() > 0);
  CHECK(info["other_cpu_pct"].is_number());
  CHECK_FALSE(fs::exists(info["/fio/target"_json_pointer].get<std::string>()));
  CHECK(fs::is_empty(tmp));
  CHECK_THAT(run.text, Contains("IOPS="));  // fio's own report
  // fio 3.33+ sets up its rings itself; no option asks for other flags.
  CHECK(r["/fio/setup_flags"_json_pointer].is_array());
  CHECK(r["/fio/wait_nr"_json_pointer] == 1);
  CHECK_FALSE(info["/fio/job_file"_json_pointer].get<std::string>().find("iodepth_batch_complete_min") !=
              std::string::npos);
  // Per request over the CPU window: fio's threads' context switches, the machine's IPIs.
  CHECK(r["/per_request_totals/requests"_json_pointer].get<std::uint64_t>() > 0);
  CHECK(r["/per_request/context_switches"_json_pointer].get<double>() > 0);
  CHECK(r["/per_request_totals/context_switches_by_class"_json_pointer].contains("fio"));
}

TEST_CASE("host fio: randrw from two jobs reports both directions and their latency together") {
  SKIP_UNLESS_FIO();
  own_tmpdir("host-fio-randrw");
  const auto s = scenario(R"("rw": "randrw", "rwmixread": 70, "iodepth": 2, "numjobs": 2)",
                          R"("duration_ms": 200, "warmup_ms": 0, "measure": {"percentiles": [50, 99.9]}, )");
  const json r = uringsim::host::run_fio(s, quiet_options()).results;
  INFO(r.dump(2));
  const auto reads = r["/fio/read/ios"_json_pointer].get<std::uint64_t>();
  const auto writes = r["/fio/write/ios"_json_pointer].get<std::uint64_t>();
  CHECK(reads > 0);
  CHECK(writes > 0);
  CHECK(r["/window/completions"_json_pointer] == reads + writes);
  CHECK(r["/throughput/ops_per_s"_json_pointer].get<double>() ==
        Approx(r["/fio/read/iops"_json_pointer].get<double>() +
               r["/fio/write/iops"_json_pointer].get<double>()));
  CHECK(r["/fio/jobs"_json_pointer] == 2);
  // Both directions' lat ("mixed"): at least as many samples as either alone.
  CHECK(r["/latency_us/count"_json_pointer].get<std::uint64_t>() >=
        r["/fio/read/lat_us/count"_json_pointer].get<std::uint64_t>());
  CHECK(r["/latency_us/p999"_json_pointer].is_number());
  CHECK_FALSE(r["latency_us"].contains("p99"));  // only the scenario's percentiles
}

TEST_CASE("host fio: with sqthread_poll the SQ thread's CPU is its own class") {
  SKIP_UNLESS_FIO();
  own_tmpdir("host-fio-sqpoll");
  const auto s = scenario(R"("rw": "randread", "iodepth": 4, "sqthread_poll": true, "sqthread_poll_cpu": 0)",
                          R"("duration_ms": 300, "warmup_ms": 20, )");
  const json r = uringsim::host::run_fio(s, quiet_options()).results;
  INFO(r.dump(2));
  CHECK(r["/fio/read/ios"_json_pointer].get<std::uint64_t>() > 0);
  REQUIRE(r["/cpu/by_thread"_json_pointer].contains("iou-sqp_pct"));
  CHECK(r["/cpu/by_thread/iou-sqp_pct"_json_pointer].get<double>() > 0);
  CHECK(r["/fio/sq_thread_cpu_pct"_json_pointer].is_number());
  // The kernel refuses COOP_TASKRUN and DEFER_TASKRUN on an SQPOLL ring, so fio's retries drop them.
  CHECK(r["/fio/setup_flags"_json_pointer] == json::array());
}

TEST_CASE(
    "host fio: setup_flags the kernel or fio cannot take are bad input, wait_nr is fio's batch minimum") {
  own_tmpdir("host-fio-flags");
  auto input_error_of = [](const uringsim::config::Scenario& s) {
    try {
      uringsim::host::run_fio(s, quiet_options());
    } catch (const uringsim::config::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // The kernel's rules come first, fio or not.
  CHECK_THAT(
      input_error_of(scenario(R"("sqthread_poll": true, "setup_flags": ["coop_taskrun"])")),
      Contains("/workload/setup_flags: expected none of coop_taskrun, taskrun_flag, defer_taskrun on an "
               "SQPOLL ring"));
  CHECK_THAT(input_error_of(scenario(R"("setup_flags": ["defer_taskrun"])")),
             Contains("/workload/setup_flags: expected single_issuer with defer_taskrun"));
  CHECK_THAT(input_error_of(scenario(R"("iodepth": 4, "wait_nr": 8)")),
             Contains("/workload/wait_nr: expected at most workload.iodepth (4), got 8"));
  SKIP_UNLESS_FIO();
  // A valid set that is not fio's own: fio has no option for it.
  const std::string msg = input_error_of(scenario(R"("setup_flags": ["coop_taskrun", "taskrun_flag"])"));
  CHECK_THAT(msg, Contains("/workload/setup_flags: fio cannot be told which setup flags to use"));
  CHECK_THAT(msg, Contains("got [\"coop_taskrun\",\"taskrun_flag\"]"));

  // fio's own set passes, and wait_nr becomes iodepth_batch_complete_min.
  const auto plain = scenario(R"("rw": "randread", "iodepth": 4, "direct": false)",
                              R"("duration_ms": 200, "warmup_ms": 20, )");
  const json own = uringsim::host::run_fio(plain, quiet_options()).results["fio"]["setup_flags"];
  const auto s = scenario(fmt::format(R"("rw": "randread", "iodepth": 4, "direct": false, "wait_nr": 2, )"
                                      R"("setup_flags": {})",
                                      own.dump()),
                          R"("duration_ms": 200, "warmup_ms": 20, )");
  const HostRun run = uringsim::host::run_fio(s, quiet_options());
  INFO(run.results.dump(2));
  CHECK(run.results["/fio/wait_nr"_json_pointer] == 2);
  CHECK(run.results["/fio/setup_flags"_json_pointer] == own);
  CHECK(run.results["/fio/read/ios"_json_pointer].get<std::uint64_t>() > 0);
  CHECK_THAT(run.run_info["/fio/job_file"_json_pointer].get<std::string>(),
             Contains("\niodepth_batch_complete_min=2\n"));
}

TEST_CASE("host fio: an unreachable target is Unavailable, naming it, and nothing is created") {
  SKIP_UNLESS_FIO();
  const auto tmp = own_tmpdir("host-fio-target");
  const auto s = scenario(R"("rw": "randread")", R"("duration_ms": 100, )");
  auto with_target = [&](const std::string& t) {
    HostOptions o = quiet_options();
    o.target = t;
    return unavailable_of([&] { uringsim::host::run_fio(s, o); });
  };
  const std::string missing = (tmp / "no-such-dir" / "file").string();
  CHECK_THAT(with_target(missing), Contains("target " + missing + ": No such file or directory"));
  CHECK_FALSE(fs::exists(tmp / "no-such-dir"));
  CHECK_THAT(with_target(tmp.string()), Contains("target " + tmp.string() + ": is a directory"));
  // A file that refuses writes, for a job that writes (root passes permission bits; a read-only
  // sysfs attribute refuses it too).
  const std::string read_only = "/sys/kernel/uevent_seqnum";
  if (fs::exists(read_only)) {
    const auto w = scenario(R"("rw": "randwrite")", R"("duration_ms": 100, )");
    HostOptions o = quiet_options();
    o.target = read_only;
    CHECK_THAT(unavailable_of([&] { uringsim::host::run_fio(w, o); }),
               Contains("target " + read_only + ": not writable"));
  }
  // A CPU this machine does not have (machine.cores, which the model needs for it, is ignored).
  const auto pinned =
      scenario(R"("rw": "randread", "cpus_allowed": 4095)", R"("machine": {"cores": 4096}, )");
  HostOptions ignoring = quiet_options();
  ignoring.ignore_model_fields = true;
  CHECK_THAT(unavailable_of([&] { uringsim::host::run_fio(pinned, ignoring); }),
             Contains("/workload/cpus_allowed: CPU 4095 is not available here"));
  // Nothing was left in the temporary directory.
  CHECK(fs::is_empty(tmp));
}

TEST_CASE("host fio: without fio on PATH the run is Unavailable") {
  const auto empty = testing::fresh_dir("host-fio-no-path");
  ::setenv("PATH", empty.c_str(), 1);
  const auto s = scenario(R"("rw": "randread")");
  CHECK_THAT(unavailable_of([&] { uringsim::host::run_fio(s, quiet_options()); }),
             Contains("fio is not installed"));
  // A workload other than fio is bad input, not Unavailable.
  const auto echo = uringsim::config::load_scenario_text(
      R"({"name": "e", "workload": {"type": "echo", "connections": 1}})", "echo.json");
  CHECK_THROWS_AS(uringsim::host::run_fio(echo, quiet_options()), uringsim::config::InputError);
}

TEST_CASE("host fio: SIGTERM stops fio and removes the temporary directory") {
  SKIP_UNLESS_FIO();
  const auto tmp = own_tmpdir("host-fio-sigterm");
  const auto s = scenario(R"("rw": "randread", "iodepth": 2)", R"("duration_ms": 20000, "warmup_ms": 0, )");
  std::atomic<bool> done{false};
  std::string outcome;
  std::thread runner([&] {
    try {
      uringsim::host::run_fio(s, quiet_options());
      outcome = "finished";
    } catch (const uringsim::host::Interrupted& e) {
      outcome = fmt::format("interrupted {}", e.exit_code());
    } catch (const std::exception& e) {
      outcome = std::string("failed: ") + e.what();
    }
    done = true;
  });
  // Wait for fio's output file, i.e. for fio to be running; then signal this process.
  bool started = false;
  for (int i = 0; i < 3000 && !done && !started; ++i) {
    for (const auto& d : fs::directory_iterator(tmp))
      if (fs::exists(d.path() / "fio.log")) started = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(::getpid(), SIGTERM);
  runner.join();
  CHECK(started);
  CHECK(outcome == fmt::format("interrupted {}", 128 + SIGTERM));
  // fio was stopped and reaped: this process has no child left; its directory is gone.
  int status = 0;
  CHECK(::waitpid(-1, &status, WNOHANG) == -1);
  CHECK(errno == ECHILD);
  CHECK(fs::is_empty(tmp));
}

TEST_CASE("host fio: fio's mixed output splits into its JSON report and its text") {
  const std::string out =
      "t: (g=0): rw=randread\nfio-3.33\nStarting 1 thread\n{\n  \"fio version\" : \"fio-3.33\",\n"
      "  \"jobs\" : [\n    {\n      \"jobname\" : \"t\"\n    }\n  ]\n}\n\nt: (groupid=0, jobs=1): err= 0\n";
  const auto split = uringsim::host::split_fio_output(out);
  CHECK(split.json["fio version"] == "fio-3.33");
  CHECK(split.json["/jobs/0/jobname"_json_pointer] == "t");
  CHECK_THAT(split.text, Contains("Starting 1 thread"));
  CHECK_THAT(split.text, Contains("err= 0"));
  CHECK_THAT(split.text, !Contains("fio version"));
  CHECK_THROWS_WITH(uringsim::host::split_fio_output("fio: job t dropped\n"), Contains("no JSON report"));
  // A job that failed is a failed run, with fio's error.
  const json failed = {{"jobs", {{{"jobname", "t"}, {"error", 5}}}}};
  CHECK_THROWS_WITH(uringsim::host::fio_results(failed, scenario(R"("rw": "read")")), Contains("error 5"));
}

namespace {

// A stand-in for fio on PATH: a shell script with this body.
void fake_fio(const fs::path& dir, const std::string& body) {
  const auto p = dir / "fio";
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
  ::setenv("PATH", dir.c_str(), 1);
}

}  // namespace

TEST_CASE("host fio: a fio that fails is a failed run with its message") {
  if (const auto why = cannot_run_fio(); !why.empty()) {
    WARN("skipped: " << why);  // io_uring is checked before fio runs
    return;
  }
  fake_fio(testing::fresh_dir("host-fio-fails-bin"), "echo 'fio: something is wrong' >&2; exit 3");
  own_tmpdir("host-fio-fails");
  const auto s = scenario(R"("rw": "read")", R"("duration_ms": 100, "warmup_ms": 0, )");
  CHECK_THROWS_WITH(uringsim::host::run_fio(s, quiet_options()),
                    Contains("fio failed (exit 3)") && Contains("fio: something is wrong"));
}

TEST_CASE("host fio: a fio that does not finish is stopped at the hard timeout, SIGKILL if need be") {
  if (const auto why = cannot_run_fio(); !why.empty()) {
    WARN("skipped: " << why);
    return;
  }
  const auto bin = testing::fresh_dir("host-fio-hangs-bin");
  // Ignores SIGTERM and blocks reading a FIFO nobody writes: only SIGKILL ends it. It records its pid.
  const auto fifo = bin / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  fake_fio(bin, "trap '' TERM\necho $$ > " + (bin / "pid").string() + "\nexec 3<> " + fifo.string() +
                    "\nread x <&3");
  const auto tmp = own_tmpdir("host-fio-hangs");
  const auto s = scenario(R"("rw": "read")", R"("duration_ms": 100, "warmup_ms": 0, )");
  CHECK_THROWS_WITH(uringsim::host::run_fio(s, quiet_options()),
                    Contains("fio did not finish within") && Contains("SIGKILL"));
  std::ifstream pid_file(bin / "pid");
  pid_t pid = 0;
  REQUIRE(pid_file >> pid);
  CHECK(::kill(pid, 0) == -1);  // gone, and reaped
  CHECK(fs::is_empty(tmp));
}

TEST_CASE("host fio: model-only fields, and knobs fio has no option for, are refused unless ignored") {
  SKIP_UNLESS_FIO();
  const auto tmp = own_tmpdir("host-fio-model-fields");
  uringsim::config::LoadOptions lo;
  lo.variant = "with";
  const auto seed =
      uringsim::config::load_scenario_file(testing::source_path("scenarios/seeds/sqpoll-deputy.json"), lo);
  std::string msg;
  try {
    uringsim::host::run_fio(seed, quiet_options());
  } catch (const uringsim::config::InputError& e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Contains("/kernel/era: \"5.15\" is a model-only field"));
  CHECK_THAT(msg, Contains("/kernel/sqpoll/deputy: true"));
  // The SQ thread's idle time: the real kernel has it, stock fio has no option for it.
  CHECK_THAT(msg, Contains("/kernel/sqpoll/idle_us: 110 is a model-only field the host cannot honour (stock "
                           "fio has no option"));
  CHECK_THAT(msg, Contains("--ignore-model-fields"));
  // Ignored, the run goes on to what this machine lacks: CPU 35 (or polled I/O, or fio's failure).
  HostOptions ignoring = quiet_options();
  ignoring.ignore_model_fields = true;
  CHECK_THAT(unavailable_of([&] { uringsim::host::run_fio(seed, ignoring); }),
             Contains("CPU 35 is not available"));
  CHECK(fs::is_empty(tmp));
}

TEST_CASE("host fio: `uringsim host` exits 2 and writes nothing for an unreachable target or a missing fio") {
  const auto dir = testing::fresh_dir("host-fio-cli");
  { std::ofstream(dir / "s.json") << scenario_text(R"("rw": "randread")", R"("duration_ms": 100, )"); }
  const auto out = dir / "out";
  const std::string missing = (dir / "nowhere" / "file").string();
  auto r = testing::run_cli("host " + (dir / "s.json").string() + " --quiet --target " + missing + " --out " +
                            out.string());
  INFO(r.output);
  if (const auto why = cannot_run_fio(); !why.empty()) {
    WARN("fio cannot run here (" << why << "): only the exit code is checked");
  } else {
    CHECK_THAT(r.output, Contains("target " + missing));
  }
  CHECK(r.exit_code == 2);
  CHECK_FALSE(fs::exists(out));
  // fio missing from PATH.
  r = testing::run_shell("PATH=" + dir.string() + " " + std::string(URINGSIM_EXE) + " host " +
                         (dir / "s.json").string() + " --quiet --out " + out.string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("fio is not installed"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("host fio: `uringsim host` writes results that pass the results schema") {
  SKIP_UNLESS_FIO();
  const auto dir = testing::fresh_dir("host-fio-cli-run");
  {
    std::ofstream(dir / "s.json") << scenario_text(R"("rw": "randread", "iodepth": 2)",
                                                   R"("duration_ms": 200, "warmup_ms": 20, )");
  }
  const auto r = testing::run_cli("host " + (dir / "s.json").string() + " --out " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("IOPS"));  // the summary, and fio's report
  const auto results = json::parse(testing::slurp(dir / "out" / "results.json"));
  CHECK(results["source"] == "host");
  CHECK(results["/tool/version"_json_pointer].get<std::string>() != "");
  CHECK(results["/fio/read/ios"_json_pointer].get<std::uint64_t>() > 0);
  const auto info = json::parse(testing::slurp(dir / "out" / "run_info.json"));
  CHECK(info["ignored_fields"] == json::array());
  CHECK_THAT(info["/fio/job_file"_json_pointer].get<std::string>(), Contains("iodepth=2"));
}
