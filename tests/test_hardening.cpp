// Input hardening (issue 15): inputs that crashed, hung or misled the tool before. Each case runs
// the binary, as a user would, and checks the exit code, the message and that nothing is written.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <thread>

#include "cli_helpers.hpp"
#include "config/schema.hpp"

using namespace testing;
namespace fs = std::filesystem;

namespace {

const std::string kMm1 = source_path("scenarios/validation/mm1.json");
const std::string kEcho = source_path("scenarios/seeds/async-hybrid.json");
const std::string kFio = source_path("scenarios/seeds/sqpoll-deputy.json");
const std::string kNop = source_path("scenarios/validation/iowq-nop.json");

// Runs the tool with these arguments, without a shell (an argument may be 130 000 characters),
// stdout and stderr together.
Cli run_args(const std::vector<std::string>& args) {
  const fs::path log =
      fs::temp_directory_path() / ("uringsim-test-args-" + std::to_string(getpid()) + ".log");
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>(URINGSIM_EXE)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Cli r{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(log)};
  fs::remove(log);
  return r;
}

std::string nested(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// A scripted scenario whose one thread runs `step` (a JSON object) after starting at start_us.
std::string script_scenario(const std::string& step, const std::string& start_us = "0") {
  return R"({"name": "script-limits", "warmup_ms": 0, "duration_ms": 5, "machine": {"cores": 1},
    "workload": {"type": "script", "locks": [{"name": "L", "kind": "spin"}],
      "threads": [{"name": "t", "start_us": )" +
         start_us + R"(, "steps": [)" + step + "]}]}}";
}

// `uringsim run` that must be refused as bad input naming `needle`, writing nothing.
void expect_refused(const fs::path& dir, const std::vector<std::string>& args, const std::string& needle) {
  const fs::path out = dir / "out";
  std::vector<std::string> a = {"run"};
  a.insert(a.end(), args.begin(), args.end());
  a.insert(a.end(), {"--quiet", "--out", out.string()});
  // timeout: before the fixes some of these hung instead of failing.
  std::string cmd = "timeout 120 " + std::string(URINGSIM_EXE);
  for (const auto& x : a) cmd += " '" + x + "'";
  const auto r = run_shell(cmd);
  INFO(cmd);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find(needle) != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// Every number (not integer) spec in the tree, with its path.
void number_specs(const uringsim::config::Spec& s, const std::string& path,
                  std::vector<std::pair<std::string, const uringsim::config::Spec*>>& out) {
  using uringsim::config::SpecType;
  if (s.type == SpecType::Number) out.emplace_back(path, &s);
  for (const auto& f : s.fields) number_specs(*f.spec, path + "." + f.name, out);
  for (const auto& v : s.variants)
    for (const auto& f : v.fields) number_specs(*f.spec, path + "." + v.tag_value + "." + f.name, out);
  if (s.items) number_specs(*s.items, path + "[]", out);
  if (s.values) number_specs(*s.values, path + ".NAME", out);
}

}  // namespace

TEST_CASE("hardening: JSON nested 100 000 deep is refused with its line and column, from a file and --set") {
  const auto dir = fresh_dir("hardening-deep");
  write(dir / "deep.json",
        R"({"name": "deep", "workload": {"type": "nop"}, "description": )" + nested(100000) + "}");
  const auto r = run_args({"run", (dir / "deep.json").string(), "--out", (dir / "out").string()});
  INFO(r.output.substr(0, 2000));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("deep.json:1:") != std::string::npos);
  CHECK(r.output.find("nested more than 64 levels") != std::string::npos);
  CHECK(r.output.size() < 1000);  // the value is not echoed whole

  // 65 000 levels: as deep as one command-line argument can hold.
  const auto s =
      run_args({"run", kMm1, "--set", "workload.arrival=" + nested(65000), "--out", (dir / "out").string()});
  INFO(s.output.substr(0, 2000));
  CHECK(s.exit_code == 2);
  CHECK(s.output.find("--set workload.arrival=[[[") != std::string::npos);
  CHECK(s.output.find("nested more than 64 levels") != std::string::npos);
  CHECK(s.output.size() < 1000);
  CHECK_FALSE(fs::exists(dir / "out"));

  // A string field takes the text as written, brackets and all.
  const auto g = run_args({"graph", kMm1, "--kind", "topology", "--set", "description=" + nested(65000), "-o",
                           (dir / "topology.dot").string()});
  INFO(g.output.substr(0, 2000));
  CHECK(g.exit_code == 0);
}

TEST_CASE("hardening: every number field of the schema has a finite upper bound") {
  std::vector<std::pair<std::string, const uringsim::config::Spec*>> specs;
  const auto& schema = uringsim::config::Schema::get();
  number_specs(schema.root(), "", specs);
  for (const auto& [name, spec] : schema.definitions()) number_specs(*spec, name, specs);
  REQUIRE(specs.size() > 20);
  for (const auto& [path, spec] : specs) {
    INFO(path);
    const auto& hi = spec->max ? spec->max : spec->max_exclusive;
    REQUIRE(hi.has_value());
    CHECK(std::isfinite(hi->get<double>()));
    CHECK(hi->get<double>() <= 1e13);
  }
}

TEST_CASE("hardening: values that became infinite durations are refused when the scenario loads") {
  const auto dir = fresh_dir("hardening-durations");
  const std::string fast = "duration_ms=5";
  expect_refused(dir,
                 {kMm1, "--set", fast, "--set", R"(workload.service={"kind":"constant","value_us":1e308})"},
                 "/workload/service/value_us");
  expect_refused(dir,
                 {kMm1, "--set", fast, "--set", R"(workload.arrival={"kind":"constant","value_us":1e308})"},
                 "/workload/arrival/value_us");
  expect_refused(
      dir, {kMm1, "--set", fast, "--set", R"(workload.service={"kind":"lognormal","mean_us":5,"sigma":1e3})"},
      "/workload/service/sigma");
  expect_refused(dir,
                 {kEcho, "--set", fast, "--variant", "hybrid", "--set", "kernel.iowq.idle_timeout_ms=1e308"},
                 "/kernel/iowq/idle_timeout_ms");
  expect_refused(dir,
                 {kEcho, "--set", fast, "--variant", "hybrid", "--set", "workload.server_work_cycles=1e308"},
                 "/workload/server_work_cycles");
  expect_refused(dir, {kMm1, "--set", fast, "--set", "costs.wake_cycles=1e308"}, "/costs/wake_cycles");
  expect_refused(dir, {kMm1, "--set", fast, "--set", "machine.ghz=1e-300"}, "/machine/ghz");
  expect_refused(dir, {kFio, "--set", fast, "--set", "workload.rate_iops=1e-300"}, "/workload/rate_iops");
  write(dir / "sleep.json", script_scenario(R"({"op": "sleep", "time_us": 1e308})"));
  expect_refused(dir, {(dir / "sleep.json").string()}, "/workload/threads/0/steps/0/time_us");
  write(dir / "start.json", script_scenario(R"({"op": "compute", "work_cycles": 10})", "1e308"));
  expect_refused(dir, {(dir / "start.json").string()}, "/workload/threads/0/start_us");
  write(dir / "compute.json", script_scenario(R"({"op": "compute", "work_cycles": 1e308})"));
  expect_refused(dir, {(dir / "compute.json").string()}, "/workload/threads/0/steps/0/work_cycles");
}

TEST_CASE("hardening: more threads than the machine can run is refused, saying what limits them") {
  const auto dir = fresh_dir("hardening-threads");
  // The schema's own bound.
  expect_refused(dir, {source_path("scenarios/validation/mmc.json"), "--set", "workload.servers=40000"},
                 "/workload/servers");
  // The machine's: 8 GiB of address space holds fewer than 1000 actor stacks of 8 MiB. Not under
  // AddressSanitizer, which reserves terabytes of shadow address space at start-up: no `ulimit -v`
  // leaves it room to start.
#ifndef URINGSIM_SANITIZED
  const auto r =
      run_shell("ulimit -v 8388608 && " + std::string(URINGSIM_EXE) + " run " +
                source_path("scenarios/validation/mmc.json") +
                " --set workload.servers=5000 --set duration_ms=5 --quiet --out " + (dir / "out").string());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("this machine can run at most") != std::string::npos);
  CHECK(r.output.find("vm.max_map_count") != std::string::npos);
  CHECK(r.output.find("ulimit -v") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
#endif
}

TEST_CASE("hardening: a run whose simulated time stops advancing fails, naming the threads") {
  const auto dir = fresh_dir("hardening-livelock");
  std::string cmd = "timeout 200 " + std::string(URINGSIM_EXE) + " run " + kNop +
                    " --variant inline --set duration_ms=10 --quiet --out " + (dir / "out").string();
  for (const char* c :
       {"app_batch_cycles", "app_cqe_cycles", "app_sqe_prep_cycles", "cqe_post_cycles", "mutex_fast_cycles",
        "nop_issue_cycles", "spin_lock_fast_cycles", "sqe_submit_cycles", "syscall_cycles"})
    cmd += std::string(" --set costs.") + c + "=0";
  const auto r = run_shell(cmd);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("no progress in simulated time") != std::string::npos);
  CHECK(r.output.find("nop_test") != std::string::npos);
}

TEST_CASE("hardening: window, interval and --trace problems are bad input, found before the run") {
  const auto dir = fresh_dir("hardening-window");
  expect_refused(dir, {kMm1, "--set", "duration_ms=2e8"}, "/duration_ms");
  expect_refused(dir, {kMm1, "--set", "warmup_ms=1e17"}, "/warmup_ms");
  expect_refused(dir, {kMm1, "--set", "measure.interval_ms=1e-308"}, "/measure/interval_ms");
  expect_refused(dir, {kMm1, "--set", "duration_ms=1000000", "--set", "measure.interval_ms=0.01"},
                 "/measure/interval_ms");
  expect_refused(dir, {kMm1, "--set", "duration_ms=1e-300"}, "/duration_ms");
  fs::create_directories(dir / "tracedir");
  expect_refused(dir, {kMm1, "--set", "duration_ms=5", "--trace", (dir / "tracedir").string()}, "--trace");
}

TEST_CASE("hardening: --trace-window-ms refuses NaN and infinities and warns when it holds nothing") {
  const auto dir = fresh_dir("hardening-trace-window");
  const std::string trace = (dir / "t.json").string();
  for (const char* w : {"nan:1", "0:nan", "0:inf", "-inf:1"})
    expect_refused(dir, {kMm1, "--set", "duration_ms=5", "--trace", trace, "--trace-window-ms", w},
                   "--trace-window-ms");
  CHECK_FALSE(fs::exists(trace));
  // A window after the end of the run: the run goes on, with a warning about the empty timeline.
  const auto r = run_cli("run " + kMm1 + " --set duration_ms=5 --set warmup_ms=1 --quiet --trace " + trace +
                         " --trace-window-ms 50:60 --out " + (dir / "out").string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("warning: --trace-window-ms 50:60 starts after the run ends") != std::string::npos);
  CHECK(r.output.find("holds no event") != std::string::npos);
}

TEST_CASE("hardening: a scenario name must be a safe directory name") {
  const auto dir = fresh_dir("hardening-names");
  fs::create_directories(dir / "a" / "b");
  for (const std::string& name :
       std::vector<std::string>{"..", "../../x", "", ".", "a/b", "x y", std::string(101, 'n')}) {
    INFO("name " << name);
    write(dir / "s.json", R"({"name": )" + nlohmann::json(name).dump() + R"(, "duration_ms": 5,
      "workload": {"type": "queue", "servers": 1, "arrival": {"kind": "exponential", "mean_us": 10},
                   "service": {"kind": "constant", "value_us": 5}}})");
    // The default output directory is out/NAME, relative to where the tool runs.
    const auto r = run_shell("cd " + (dir / "a" / "b").string() + " && " + URINGSIM_EXE + " run " +
                             (dir / "s.json").string() + " --quiet");
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("/name: expected a name of 1 to 100 characters") != std::string::npos);
    std::size_t files = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
    CHECK(files == 1);  // s.json only
  }
  // import-fio makes a valid name from a job name that is not one.
  const auto imp =
      run_cli("import-fio --cmdline \"fio --name=my/rand\\ read --ioengine=io_uring --rw=randread\" -o " +
              (dir / "imported.json").string());
  INFO(imp.output);
  REQUIRE(imp.exit_code == 0);
  CHECK(nlohmann::json::parse(slurp(dir / "imported.json"))["name"] == "my_rand_read");
}

TEST_CASE(
    "hardening: compare resumes after Ctrl-C, keeping finished runs, with progress and no temporaries") {
  const auto dir = fresh_dir("hardening-compare");
  const auto tmp = dir / "tmp", out = dir / "out";
  fs::create_directories(tmp);
  const std::string args =
      " compare " + kMm1 +
      " --variants rho08,rho09 --reps 2 --jobs 1 --set duration_ms=300 --set warmup_ms=10";
  const std::string env = "TMPDIR=" + tmp.string() + " ";
  // The results of the runs compare has marked finished (run.json, written after the run ended).
  auto finished_runs = [&] {
    std::vector<fs::path> v;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(out / "runs", ec))
      if (e.path().filename() == "run.json") v.push_back(e.path().parent_path() / "results.json");
    return v;
  };

  // Ctrl-C reaches the whole foreground process group: compare and its children.
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    setenv("TMPDIR", tmp.c_str(), 1);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execl("/bin/sh", "sh", "-c",
          (std::string("exec ") + URINGSIM_EXE + args + " --out " + out.string()).c_str(), nullptr);
    _exit(127);
  }
  setpgid(pid, pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (finished_runs().empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(-pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(fs::is_empty(tmp));
  CHECK_FALSE(fs::exists(out / "compare.json"));
  const auto kept = finished_runs();
  REQUIRE(kept.size() >= 1);
  REQUIRE(kept.size() < 4);  // else the interrupt came too late to test anything
  std::map<fs::path, std::string> before;
  for (const auto& p : kept)
    before[p] = slurp(p) + std::to_string(fs::last_write_time(p).time_since_epoch().count());

  const auto r = run_shell(env + URINGSIM_EXE + args + " --out " + out.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("compare: 4/4 done (" + std::to_string(kept.size()) + " skipped, 0 failed)") !=
        std::string::npos);
  for (const auto& [p, state] : before) {
    INFO(p);
    CHECK(slurp(p) + std::to_string(fs::last_write_time(p).time_since_epoch().count()) == state);
  }
  CHECK(fs::is_empty(tmp));
  // Resumed, it gives what one uninterrupted compare gives.
  const auto fresh = run_shell(env + URINGSIM_EXE + args + " --out " + (dir / "fresh").string());
  REQUIRE(fresh.exit_code == 0);
  CHECK(slurp(out / "compare.json") == slurp(dir / "fresh" / "compare.json"));
  CHECK(slurp(out / "compare.csv") == slurp(dir / "fresh" / "compare.csv"));
}
