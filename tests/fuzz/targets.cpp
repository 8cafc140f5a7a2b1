#include "tests/fuzz/targets.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "config/scenario.hpp"
#include "tools/app/commands.hpp"

namespace uringsim::fuzz {
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// Regular files under dir whose name ends with ext, sorted (the corpus order is part of the seed).
std::vector<fs::path> files_under(const fs::path& dir, const std::string& ext, bool recursive) {
  std::vector<fs::path> v;
  auto take = [&](const fs::directory_entry& e) {
    const std::string n = e.path().filename().string();
    if (e.is_regular_file() && n.size() >= ext.size() &&
        n.compare(n.size() - ext.size(), ext.size(), ext) == 0)
      v.push_back(e.path());
  };
  if (recursive)
    for (const auto& e : fs::recursive_directory_iterator(dir)) take(e);
  else
    for (const auto& e : fs::directory_iterator(dir)) take(e);
  std::sort(v.begin(), v.end());
  return v;
}

void add_seeds(Target& t, const std::vector<fs::path>& files, const fs::path& root) {
  for (const auto& f : files) t.seeds.push_back({fs::relative(f, root).string(), slurp(f), ""});
}

// The loader's answer as the CLI gives it: 0 loaded, 2 refused with a message.
int load(const std::string& text, const config::LoadOptions& lo) {
  try {
    (void)config::load_scenario_text(text, "fuzz.json", lo);
    return app::kExitOk;
  } catch (const config::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return app::kExitBadInput;
  }
}

// Runs the tool (not in a child of ours: sweep and compare start the binary themselves).
void run_tool(const fs::path& exe, const std::string& args) {
  const std::string cmd = exe.string() + " " + args + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("making the fuzz fixtures failed: " + cmd);
}

// Small real outputs of sweep (two shards, merged) and compare, whose files report and merge read.
void make_fixtures(const Setup& s, const fs::path& dir) {
  const std::string mm1 = (s.source_dir / "scenarios/validation/mm1.json").string();
  const std::string quick = " --jobs 1 --set duration_ms=5 --set warmup_ms=1";
  for (const char* shard : {"1", "2"})
    run_tool(s.exe, "sweep " + mm1 + " --grid workload.servers=1,2 --variants rho08 --shard " + shard +
                        "/2 --quiet --out " + (dir / "merge" / ("shard" + std::string(shard))).string() +
                        quick);
  run_tool(s.exe, "merge " + (dir / "merge/shard1").string() + " " + (dir / "merge/shard2").string() +
                      " --quiet --out " + (dir / "report/sweep").string());
  run_tool(s.exe, "compare " + mm1 + " --variants rho08,rho09 --reps 2 --out " +
                      (dir / "report/compare").string() + quick);
}

// Every file of a fixture directory is a seed; an input replaces one of them.
void add_fixture_seeds(Target& t) {
  for (const auto& f : files_under(t.fixture, "", true)) {
    const std::string rel = fs::relative(f, t.fixture).string();
    t.seeds.push_back({t.name + ":" + rel, slurp(f), rel});
  }
}

fs::path place_fixture(const Target& t, const Seed& seed, const std::string& input, const fs::path& work) {
  fs::copy(t.fixture, work, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  write(work / seed.file, input);
  return work;
}

Target target(const std::string& name, Syntax syntax, double timeout_s) {
  Target t;
  t.name = name;
  t.syntax = syntax;
  t.timeout_s = timeout_s;
  return t;
}

}  // namespace

std::vector<Target> make_targets(const Setup& s, const std::function<bool(const std::string&)>& wanted) {
  const fs::path& src = s.source_dir;
  std::vector<Target> all;

  // Scenario files, through the loader (parse, schema, variants, defaults, semantic checks).
  Target scenario = target("scenario", Syntax::Json, 20);
  for (const char* d : {"scenarios/validation", "scenarios/seeds", "scenarios/twin"})
    add_seeds(scenario, files_under(src / d, ".json", false), src);
  add_seeds(scenario, files_under(src / "tests/scenarios", ".json", false), src);
  add_seeds(scenario, files_under(src / "tests/bad_scenarios", ".json", false), src);
  scenario.run = [](const Seed&, const std::string& input, const fs::path&) { return load(input, {}); };
  all.push_back(scenario);

  // The same scenarios run for a few simulated milliseconds (values the loader lets through must not
  // crash or hang the model; the fixed duration keeps each run short).
  Target run = scenario;
  run.name = "run";
  run.timeout_s = 60;
  run.output = "out";
  run.run = [](const Seed&, const std::string& input, const fs::path& work) {
    write(work / "s.json", input);
    app::RunOptions o;
    o.scenario = (work / "s.json").string();
    o.out_dir = (work / "out").string();
    o.quiet = true;
    o.sets = {"duration_ms=2", "warmup_ms=0.5"};
    return app::cmd_run(o);
  };
  all.push_back(run);

  // --set items, one per line of the input, on a valid scenario.
  Target set = target("set", Syntax::Line, 20);
  add_seeds(set, files_under(src / "tests/fuzz/corpus/set", ".txt", false), src);
  const std::string base = slurp(src / "scenarios/seeds/async-hybrid.json");
  set.run = [base](const Seed&, const std::string& input, const fs::path&) {
    config::LoadOptions lo;
    std::istringstream lines(input);
    for (std::string l; std::getline(lines, l);) lo.sets.push_back(l);
    return load(base, lo);
  };
  all.push_back(set);

  // fio job files and command lines, through `import-fio` (parse, meaning, scenario check, write).
  Target job = target("import-fio", Syntax::FioJob, 20);
  job.output = "scenario.json";
  add_seeds(job, files_under(src / "tests/fuzz/corpus/fio", ".fio", false), src);
  job.run = [](const Seed&, const std::string& input, const fs::path& work) {
    write(work / "job.fio", input);
    app::ImportFioOptions o;
    o.job_file = (work / "job.fio").string();
    o.out = (work / "scenario.json").string();
    return app::cmd_import_fio(o);
  };
  all.push_back(job);
  Target cmdline = target("import-fio-cmdline", Syntax::FioJob, 20);
  cmdline.output = "scenario.json";
  add_seeds(cmdline, files_under(src / "tests/fuzz/corpus/fio-cmdline", ".txt", false), src);
  cmdline.run = [](const Seed&, const std::string& input, const fs::path& work) {
    app::ImportFioOptions o;
    o.cmdline = input;
    o.vars = {"1=1000", "2=10"};
    o.out = (work / "scenario.json").string();
    return app::cmd_import_fio(o);
  };
  all.push_back(cmdline);

  if (!wanted("merge") && !wanted("report")) return all;
  // merge: two shards of one sweep, one of their files replaced by the input.
  const fs::path fixtures = s.scratch / "fixtures";
  make_fixtures(s, fixtures);
  Target merge = target("merge", Syntax::Json, 30);
  merge.fixture = fixtures / "merge";
  merge.output = "merged";
  add_fixture_seeds(merge);
  merge.run = [t = merge](const Seed& seed, const std::string& input, const fs::path& work) {
    place_fixture(t, seed, input, work);
    app::MergeOptions o;
    o.dirs = {(work / "shard1").string(), (work / "shard2").string()};
    o.out_dir = (work / "merged").string();
    o.quiet = true;
    return app::cmd_merge(o);
  };
  all.push_back(merge);

  // report: a compare and a (merged) sweep directory, one file replaced by the input.
  Target report = target("report", Syntax::Json, 60);
  report.fixture = fixtures / "report";
  report.output = "report.html";
  add_fixture_seeds(report);
  report.run = [t = report](const Seed& seed, const std::string& input, const fs::path& work) {
    place_fixture(t, seed, input, work);
    app::ReportOptions o;
    o.dir = (work / fs::path(seed.file).begin()->string()).string();  // compare/ or sweep/
    o.out = (work / "report.html").string();
    return app::cmd_report(o);
  };
  all.push_back(report);
  return all;
}

Target self_test_target() {
  Target t = target("self-test", Syntax::Line, 2);
  t.output = "out";
  t.run = [](const Seed&, const std::string& input, const fs::path& work) {
    if (input.rfind("crash", 0) == 0) raise(SIGSEGV);
    if (input.rfind("hang", 0) == 0) pause();
    if (input.rfind("exit3", 0) == 0) return 3;
    if (input.rfind("leave", 0) == 0) {
      write(work / "out", "partial");
      return 2;
    }
    return 0;
  };
  return t;
}

}  // namespace uringsim::fuzz
