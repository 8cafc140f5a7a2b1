// `uringsim sweep` and `uringsim merge`: grids, CSV contents, resuming (also after a kill), shards
// merged by hand and through GNU parallel, and bad input rejected before anything is written.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "cli_helpers.hpp"
#include "tools/app/sweep.hpp"

using namespace testing;
namespace fs = std::filesystem;

namespace {

const std::string kMm1 = source_path("scenarios/validation/mm1.json");
const std::string kFast = " --set duration_ms=50 --set warmup_ms=10";
const std::string k2x2 = " --grid workload.service.mean_us=5,8 --variants rho08,rho09";

std::string sweep_args(const fs::path& out, const std::string& extra = "") {
  return "sweep " + kMm1 + kFast + k2x2 + " --jobs 2" + extra + " --out " + out.string();
}

// RFC 4180 rows: the results column holds point ids, which contain commas and are quoted.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        cell += text[++i];
      else if (c == '"')
        quoted = false;
      else
        cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(cell);
      cell.clear();
    } else if (c == '\n') {
      rows.back().push_back(cell);
      cell.clear();
      rows.emplace_back();
    } else {
      cell += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

std::vector<fs::path> point_dirs(const fs::path& out) {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(out / "points")) v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

struct FileState {
  ino_t inode;
  std::int64_t mtime_ns;
  std::string content;
  bool operator==(const FileState& o) const {
    return inode == o.inode && mtime_ns == o.mtime_ns && content == o.content;
  }
};

FileState state_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return {st.st_ino, static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
          slurp(p)};
}

}  // namespace

TEST_CASE("sweep: grid values and ranges parse, ids are filesystem-safe and distinct") {
  using uringsim::app::sweep::parse_grid;
  using uringsim::app::sweep::safe_id;
  const auto g = parse_grid("kernel.iowq.max_unbound=10:510:50");
  CHECK(g.path == "kernel.iowq.max_unbound");
  REQUIRE(g.values.size() == 10);
  CHECK(g.values.front() == "10");
  CHECK(g.values.back() == "460");
  CHECK(parse_grid("x=0:1:0.25").values == std::vector<std::string>{"0", "0.25", "0.5", "0.75"});
  CHECK(parse_grid("x=1,a:b,3").values == std::vector<std::string>{"1", "a:b", "3"});
  CHECK_THROWS_AS(parse_grid("x=1:5:0"), std::invalid_argument);
  CHECK_THROWS_AS(parse_grid("x=5:1:1"), std::invalid_argument);
  CHECK_THROWS_AS(parse_grid("x=1,,2"), std::invalid_argument);
  CHECK_THROWS_AS(parse_grid("noequals"), std::invalid_argument);
  CHECK(safe_id("a.b=4,variant=hybrid,rep=0") == "a.b=4,variant=hybrid,rep=0");
  const auto s1 = safe_id("p=a/b,rep=0"), s2 = safe_id("p=a_b,rep=0");
  CHECK(s1.find('/') == std::string::npos);
  CHECK(s1 != s2);
  CHECK(safe_id(std::string(400, 'x')).size() < 200);
}

TEST_CASE("sweep: a 2x2 sweep writes 4 points and a tidy CSV with the right columns and values") {
  const auto dir = fresh_dir("sweep-2x2");
  const auto r = run_cli(sweep_args(dir));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("sweep: 4/4 done (0 skipped, 0 failed)") != std::string::npos);
  const auto dirs = point_dirs(dir);
  REQUIRE(dirs.size() == 4);
  for (const auto& d : dirs) {
    CHECK(fs::exists(d / "results.json"));
    const auto pj = nlohmann::json::parse(slurp(d / "point.json"));
    CHECK(pj["scenario_hash"].get<std::string>().size() == 16);
    CHECK(pj["grid"]["workload.service.mean_us"].is_number());
    CHECK(pj["seed"] == 1);
    CHECK(pj["rep"] == 0);
  }
  const auto rows = parse_csv(slurp(dir / "sweep.csv"));
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] == std::vector<std::string>{"point", "variant", "rep", "seed", "workload.service.mean_us",
                                            "throughput_ops_per_s", "latency_mean_us", "latency_p50_us",
                                            "latency_p99_us", "cpu_total_pct", "spin_slowpath_pct",
                                            "results"});
  // Enumeration order: the grid varies slowest, then the variant, then the replication.
  const std::vector<std::pair<std::string, std::string>> expect = {
      {"5", "rho08"}, {"5", "rho09"}, {"8", "rho08"}, {"8", "rho09"}};
  std::map<std::pair<std::string, std::string>, double> tput, lat;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& row = rows[i];
    REQUIRE(row.size() == rows[0].size());
    CHECK(row[0] == std::to_string(i - 1));
    CHECK(row[4] == expect[i - 1].first);
    CHECK(row[1] == expect[i - 1].second);
    CHECK(row[2] == "0");
    CHECK(row[3] == "1");
    for (std::size_t c = 5; c <= 9; ++c) CHECK(!row[c].empty());
    const auto res = nlohmann::json::parse(slurp(dir / row[11]));
    CHECK(res["scenario"]["workload"]["service"]["mean_us"] == std::stod(row[4]));
    CHECK(res["variant"] == row[1]);
    CHECK(std::stod(row[5]) == res["throughput"]["ops_per_s"].get<double>());
    tput[{row[4], row[1]}] = std::stod(row[5]);
    lat[{row[4], row[1]}] = std::stod(row[6]);
  }
  // rho09 arrives every 11.1 us, rho08 every 12.5 us: about 90k vs 80k jobs/s at any service time.
  for (const char* s : {"5", "8"}) {
    CHECK(tput[{s, "rho09"}] > tput[{s, "rho08"}] * 1.05);
    CHECK(tput[{s, "rho08"}] == Approx(80000).epsilon(0.1));
  }
  // Longer service, longer response.
  for (const char* v : {"rho08", "rho09"}) CHECK(lat[{"8", v}] > lat[{"5", v}]);
  const auto sj = nlohmann::json::parse(slurp(dir / "sweep.json"));
  CHECK(sj["points"].size() == 4);
  CHECK(sj["reps"] == 1);
  CHECK(sj["variants"] == nlohmann::json({"rho08", "rho09"}));
}

TEST_CASE("sweep: resuming re-runs only the missing point and leaves finished ones untouched") {
  const auto dir = fresh_dir("sweep-resume");
  const auto first = run_cli(sweep_args(dir));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  const auto csv_before = slurp(dir / "sweep.csv");
  auto dirs = point_dirs(dir);
  REQUIRE(dirs.size() == 4);
  const auto removed = dirs[2];
  std::map<fs::path, FileState> before;
  for (const auto& d : dirs)
    if (d != removed) before.emplace(d, state_of(d / "results.json"));
  fs::remove_all(removed);

  const auto again = run_cli(sweep_args(dir));
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  CHECK(again.output.find("4 points, 1 to run") != std::string::npos);
  CHECK(again.output.find("sweep: 4/4 done (3 skipped, 0 failed)") != std::string::npos);
  CHECK(fs::exists(removed / "results.json"));
  CHECK(fs::exists(removed / "point.json"));
  for (const auto& [d, st] : before) CHECK(state_of(d / "results.json") == st);
  // Results are deterministic, so the re-run point reproduces the same CSV.
  CHECK(slurp(dir / "sweep.csv") == csv_before);
}

TEST_CASE("sweep: a sweep killed mid-way resumes to completion and leaves no partial files") {
  const auto dir = fresh_dir("sweep-kill");
  const auto out = dir / "out";
  const std::vector<std::string> args = {URINGSIM_EXE,
                                         "sweep",
                                         kMm1,
                                         "--set",
                                         "duration_ms=300",
                                         "--set",
                                         "warmup_ms=10",
                                         "--grid",
                                         "workload.service.mean_us=2:10:1",
                                         "--variants",
                                         "rho08",
                                         "--jobs",
                                         "1",
                                         "--out",
                                         out.string()};
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);  // its own process group, so one kill reaches the sweep and its children
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent: whichever runs first, the group exists before the kill
  auto finished = [&] {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(out / "points", ec))
      if (fs::exists(e.path() / "point.json")) ++n;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (finished() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const auto at_kill = finished();
  REQUIRE(at_kill >= 1);
  REQUIRE(at_kill < 8);  // else the kill came too late to test anything

  const auto r = run_cli("sweep " + kMm1 +
                         " --set duration_ms=300 --set warmup_ms=10 --grid workload.service.mean_us=2:10:1 "
                         "--variants rho08 --jobs 2 --out " +
                         out.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Built with append: GCC 12 warns falsely (-Wrestrict) on a chain of operator+ here.
  std::string skipped = "(";
  skipped.append(std::to_string(at_kill)).append(" skipped, 0 failed)");
  CHECK(r.output.find(skipped) != std::string::npos);
  CHECK(finished() == 8);
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    const auto name = e.path().filename().string();
    INFO(e.path());
    CHECK(name.find(".tmp") == std::string::npos);
    CHECK(name != "run.log");
  }
  CHECK(parse_csv(slurp(out / "sweep.csv")).size() == 9);
}

TEST_CASE("sweep: shards merged equal one full sweep byte for byte and conflicting hashes are refused") {
  const auto dir = fresh_dir("sweep-shards");
  REQUIRE(run_cli(sweep_args(dir / "full")).exit_code == 0);
  const auto s1 = run_cli(sweep_args(dir / "a", " --shard 1/2"));
  INFO(s1.output);
  REQUIRE(s1.exit_code == 0);
  REQUIRE(run_cli(sweep_args(dir / "b", " --shard 2/2")).exit_code == 0);
  // Each shard's CSV covers its own points: indices 0, 2 and 1, 3.
  CHECK(parse_csv(slurp(dir / "a" / "sweep.csv")).size() == 3);
  CHECK(point_dirs(dir / "b").size() == 2);

  const auto m = run_cli("merge " + (dir / "a").string() + " " + (dir / "b").string() + " --out " +
                         (dir / "merged").string());
  INFO(m.output);
  REQUIRE(m.exit_code == 0);
  CHECK(slurp(dir / "merged" / "sweep.csv") == slurp(dir / "full" / "sweep.csv"));
  CHECK(slurp(dir / "merged" / "sweep.json") == slurp(dir / "full" / "sweep.json"));
  CHECK(parse_csv(slurp(dir / "merged" / "sweep.csv")).size() == 5);

  // The same point id finished under different inputs cannot be merged.
  const auto tampered = point_dirs(dir / "a").front();
  auto pj = nlohmann::json::parse(slurp(tampered / "point.json"));
  pj["scenario_hash"] = "0123456789abcdef";
  std::ofstream(tampered / "point.json") << pj.dump();
  const auto bad = run_cli("merge " + (dir / "a").string() + " " + (dir / "full").string() + " --out " +
                           (dir / "merged2").string());
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find(tampered.filename().string()) != std::string::npos);
  CHECK(!fs::exists(dir / "merged2"));
}

TEST_CASE("sweep: shards run through GNU parallel and merged equal a single sweep") {
  if (std::system("command -v parallel >/dev/null 2>&1") != 0)
    FAIL("GNU parallel is not installed: run ./setup.sh (it installs the Debian package `parallel`)");
  const auto dir = fresh_dir("sweep-parallel");
  REQUIRE(run_cli(sweep_args(dir / "full")).exit_code == 0);
  const std::string exe = URINGSIM_EXE;
  const std::string cmd = "parallel --will-cite --halt now,fail=1 ::: '" + exe + " " +
                          sweep_args(dir / "s1", " --shard 1/2") + "' '" + exe + " " +
                          sweep_args(dir / "s2", " --shard 2/2") + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  INFO(cmd);
  REQUIRE(WIFEXITED(rc));
  REQUIRE(WEXITSTATUS(rc) == 0);
  const auto m = run_cli("merge " + (dir / "s1").string() + " " + (dir / "s2").string() + " --out " +
                         (dir / "merged").string());
  INFO(m.output);
  REQUIRE(m.exit_code == 0);
  CHECK(slurp(dir / "merged" / "sweep.csv") == slurp(dir / "full" / "sweep.csv"));
  CHECK(slurp(dir / "merged" / "sweep.json") == slurp(dir / "full" / "sweep.json"));
}

TEST_CASE("sweep: a bad grid value, range or shard exits 2 naming it and writes nothing") {
  const auto dir = fresh_dir("sweep-bad");
  const auto out = dir / "out";
  const std::string base = "sweep " + kMm1 + kFast + " --variants rho08 --out " + out.string();
  const auto r = run_cli(base + " --grid workload.service.mean_us=5,abc");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("workload.service.mean_us=abc") != std::string::npos);
  const auto p = run_cli(base + " --grid workload.no_such_field=1");
  CHECK(p.exit_code == 2);
  CHECK(p.output.find("workload.no_such_field=1") != std::string::npos);
  const auto g = run_cli(base + " --grid workload.service.mean_us=1:5:0");
  CHECK(g.exit_code == 2);
  CHECK(g.output.find("1:5:0") != std::string::npos);
  const auto s = run_cli(base + " --grid workload.service.mean_us=5 --shard 3/2");
  CHECK(s.exit_code == 2);
  CHECK(s.output.find("3/2") != std::string::npos);
  CHECK(!fs::exists(out));
}

namespace {

// Copies shard `from` to `to`, then lets `tamper` spoil it.
fs::path spoiled_copy(const fs::path& from, const fs::path& to,
                      const std::function<void(const fs::path&)>& tamper) {
  fs::remove_all(to);
  fs::copy(from, to, fs::copy_options::recursive);
  tamper(to);
  return to;
}

// The process ids of pid's children (from /proc).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  for (pid_t c = 0; f >> c;) out.push_back(c);
  return out;
}

// Starts `uringsim sweep ARGS` in its own process group, output to `log`; before exec, `prepare`.
pid_t start_sweep(const std::vector<std::string>& args, const fs::path& log,
                  const std::function<void()>& prepare) {
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    freopen(log.c_str(), "w", stdout);
    dup2(fileno(stdout), 2);
    prepare();
    std::vector<char*> argv{const_cast<char*>(URINGSIM_EXE)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

// Whether process `pid` exists and has not exited: a zombie (ended, not yet reaped) can still be
// signalled, but killing it kills no run.
bool is_live(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

std::size_t finished_points(const fs::path& out) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out / "points", ec))
    if (fs::exists(e.path() / "point.json")) ++n;
  return n;
}

// Waits (at most two minutes) until `ready` holds. `ready` is called until it first returns true
// and never again, so it may act (kill a run): calling it once more after it held would act twice.
bool wait_for(const std::function<bool()>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    if (ready()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

TEST_CASE("sweep: merge checks every shard before writing: bad specs and points exit 2 naming file and key") {
  const auto dir = fresh_dir("merge-bad");
  REQUIRE(run_cli(sweep_args(dir / "a", " --shard 1/2")).exit_code == 0);
  REQUIRE(run_cli(sweep_args(dir / "b", " --shard 2/2")).exit_code == 0);
  const auto spec_of = [](const fs::path& d) { return nlohmann::json::parse(slurp(d / "sweep_spec.json")); };
  const auto write_spec = [](const fs::path& d, const std::string& text) {
    std::ofstream(d / "sweep_spec.json") << text;
  };
  auto expect_refused = [&](const fs::path& first, const fs::path& second, const std::string& needle) {
    const auto out = dir / "out";
    const auto r = run_cli("merge " + first.string() + " " + second.string() + " --out " + out.string());
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(needle) != std::string::npos);
    CHECK(r.output.find("json.exception") == std::string::npos);
    CHECK_FALSE(fs::exists(out));
  };
  const auto a = dir / "a", b = dir / "b";
  expect_refused(
      spoiled_copy(a, dir / "notjson", [&](const fs::path& d) { write_spec(d, "{\"points\": [,]}"); }), b,
      "notjson/sweep_spec.json:1:");
  expect_refused(spoiled_copy(a, dir / "array", [&](const fs::path& d) { write_spec(d, "[]"); }), b,
                 "array/sweep_spec.json: (top level): expected an object, got []");
  expect_refused(spoiled_copy(a, dir / "norep",
                              [&](const fs::path& d) {
                                auto s = spec_of(d);
                                s["points"][0].erase("rep");
                                write_spec(d, s.dump());
                              }),
                 b, "norep/sweep_spec.json: /points/0/rep: missing");
  expect_refused(spoiled_copy(a, dir / "reptype",
                              [&](const fs::path& d) {
                                auto s = spec_of(d);
                                s["reps"] = "many";
                                write_spec(d, s.dump());
                              }),
                 b, "reptype/sweep_spec.json: /reps: expected an integer, got \"many\"");
  expect_refused(spoiled_copy(a, dir / "escape",
                              [&](const fs::path& d) {
                                auto s = spec_of(d);
                                s["points"][0]["id"] = "../../escape";
                                write_spec(d, s.dump());
                              }),
                 b, "escape/sweep_spec.json: /points/0/id: expected a point id");
  expect_refused(spoiled_copy(a, dir / "resultsdir",
                              [&](const fs::path& d) {
                                const auto p = point_dirs(d).front();
                                fs::remove(p / "results.json");
                                fs::create_directories(p / "results.json");
                              }),
                 b, "results.json: is a directory");
  // An empty spec in the first shard is no sweep, not a wildcard that skips the same-sweep check.
  const auto other = dir / "other";
  REQUIRE(run_cli("sweep " + kMm1 + kFast + " --grid workload.service.mean_us=6 --variants rho08 --out " +
                  other.string())
              .exit_code == 0);
  expect_refused(spoiled_copy(a, dir / "empty", [&](const fs::path& d) { write_spec(d, ""); }), other,
                 "empty/sweep_spec.json:1:");
  // The good shards still merge.
  const auto m = run_cli("merge " + a.string() + " " + b.string() + " --out " + (dir / "good").string());
  INFO(m.output);
  CHECK(m.exit_code == 0);
}

TEST_CASE("sweep: runs killed by a signal are not run, not failed, and an ignored SIGINT kills none") {
  const auto dir = fresh_dir("sweep-signals");
  const std::vector<std::string> base = {
      "sweep",      kMm1,           "--set",  "duration_ms=300",
      "--set",      "warmup_ms=10", "--grid", "workload.service.mean_us=2:6:1",
      "--variants", "rho08",        "--jobs", "1",
      "--out"};
  auto args = [&](const fs::path& out) {
    auto a = base;
    a.push_back(out.string());
    return a;
  };
  int status = 0;

  // As a background job of a shell: SIGINT ignored. A SIGINT to the group stops no run. It is sent
  // once a run has been going for a while (SimGrid used to catch SIGINT once it had started).
  const auto bg = dir / "background";
  auto bg_args = args(bg);
  // Long enough that a run outlives the 300 ms below on a fast machine too (at 1500 ms a run of
  // the mean_us=5 point took about 300 ms on an AMD EPYC VM, and the wait below could run out).
  bg_args[3] = "duration_ms=6000";
  pid_t pid = start_sweep(bg_args, dir / "bg.log", [] { signal(SIGINT, SIG_IGN); });
  std::map<pid_t, std::chrono::steady_clock::time_point> seen;
  REQUIRE(wait_for([&] {
    const auto now = std::chrono::steady_clock::now();
    for (const pid_t c : children_of(pid)) {
      seen.emplace(c, now);
      if (now - seen[c] > std::chrono::milliseconds(300)) return true;
    }
    return false;
  }));
  kill(-pid, SIGINT);
  waitpid(pid, &status, 0);
  {
    const auto log = slurp(dir / "bg.log");
    INFO(log);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(log.find("failed (exit") == std::string::npos);
    CHECK(finished_points(bg) == 4);
  }

  // A run killed while the sweep goes on: "not run", the sweep exits 1, and resuming finishes it.
  // The first live run is killed, so three more runs separate the kill from the sweep's end: on a
  // loaded machine under a sanitizer, waiting for a later run once let the sweep finish first.
  const auto killed = dir / "killed";
  pid = start_sweep(args(killed), dir / "killed.log", [] {});
  bool sweep_ended = false;
  const bool hit = wait_for([&] {
    if (waitpid(pid, &status, WNOHANG) == pid) return sweep_ended = true;
    for (const pid_t c : children_of(pid))
      if (is_live(c) && kill(c, SIGKILL) == 0) return true;
    return false;
  });
  if (!hit || sweep_ended) {
    INFO(slurp(dir / "killed.log"));
    FAIL("no run of the sweep was killed (the sweep "
         << (sweep_ended ? "ended first" : "had no run for 2 min") << ")");
  }
  waitpid(pid, &status, 0);
  {
    const auto log = slurp(dir / "killed.log");
    INFO(log);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(log.find("1 not run") != std::string::npos);
    CHECK(log.find("0 failed") != std::string::npos);
    CHECK(log.find("failed (exit") == std::string::npos);
  }
  std::string cmd;
  for (const auto& a : args(killed)) cmd += " " + a;
  const auto r = run_cli(cmd);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("0 failed)") != std::string::npos);
  CHECK(finished_points(killed) == 4);
}

TEST_CASE("sweep run order: as enumerated, or every point's rep 0 first, then rep 1, ...") {
  using uringsim::app::sweep::run_order;
  // Two points of three reps each, enumerated point by point (reps inner), as sweep does.
  const std::vector<int> reps = {0, 1, 2, 0, 1, 2};
  CHECK(run_order(reps, false) == std::vector<std::size_t>{0, 1, 2, 3, 4, 5});
  CHECK(run_order(reps, true) == std::vector<std::size_t>{0, 3, 1, 4, 2, 5});
  CHECK(run_order({}, true).empty());
}
