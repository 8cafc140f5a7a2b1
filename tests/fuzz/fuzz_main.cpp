// uringsim_fuzz: a deterministic mutation fuzzer over the tool's input paths (tests/fuzz/README.md).
// Each input runs in a forked child; a finding is a crash (signal), a hang (timeout), an exit status
// other than 0, 1 or 2, or an exit 2 that left its output behind. Exit 0: no finding; 1: findings.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "tests/fuzz/sandbox.hpp"
#include "tests/fuzz/targets.hpp"

namespace fs = std::filesystem;
using namespace uringsim::fuzz;

namespace {

struct Counts {
  std::size_t inputs = 0, crashes = 0, hangs = 0, bad_exits = 0, files_left = 0;
  std::map<int, std::size_t> exits;  // exit status -> inputs
  std::size_t findings() const { return crashes + hangs + bad_exits + files_left; }
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs one input; a finding is printed and, with a findings directory, saved there as a corpus file
// (findings/<target>/<fixture file with / as %>~<n>) with its log beside it.
void run_one(const Target& t, const Seed& seed, const std::string& input, const fs::path& scratch,
             const fs::path& findings, const std::string& label, Counts& total, Counts& per_target) {
  const fs::path work = scratch / "work";
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path log = scratch / "log";
  const Outcome o = run_in_child([&] { return t.run(seed, input, work); }, t.timeout_s, log);
  std::string what;
  for (Counts* c : {&total, &per_target}) {
    ++c->inputs;
    if (o.kind == Outcome::Kind::Exit) ++c->exits[o.code];
  }
  if (o.kind == Outcome::Kind::Signal) {
    what = "crash (signal " + std::to_string(o.code) + ")";
    ++total.crashes, ++per_target.crashes;
  } else if (o.kind == Outcome::Kind::Timeout) {
    what = "hang (no exit after " + std::to_string(static_cast<int>(t.timeout_s)) + " s)";
    ++total.hangs, ++per_target.hangs;
  } else if (o.code != 0 && o.code != 1 && o.code != 2) {
    what = "exit status " + std::to_string(o.code);
    ++total.bad_exits, ++per_target.bad_exits;
  } else if (o.code == 2 && !t.output.empty() && fs::exists(work / t.output)) {
    what = "exit 2 left " + t.output;
    ++total.files_left, ++per_target.files_left;
  }
  if (what.empty()) return;
  std::cout << "FINDING " << t.name << " " << label << " (from " << seed.name << "): " << what << "\n";
  std::ifstream l(log);
  std::string line;
  for (int i = 0; i < 6 && std::getline(l, line); ++i) std::cout << "  | " << line.substr(0, 200) << "\n";
  if (findings.empty()) return;
  std::string file = seed.file.empty() ? "input" : seed.file;
  std::replace(file.begin(), file.end(), '/', '%');
  const fs::path dir = findings / t.name;
  fs::create_directories(dir);
  const std::string base = file + "~" + std::to_string(total.findings());
  std::ofstream(dir / base, std::ios::binary) << input;
  fs::copy_file(log, dir / (base + ".log"), fs::copy_options::overwrite_existing);
}

void print_counts(const std::string& name, const Counts& c) {
  std::cout << name << ": " << c.inputs << " inputs (";
  bool first = true;
  for (const auto& [code, n] : c.exits)
    std::cout << (first ? "" : ", ") << "exit " << code << ": " << n, first = false;
  std::cout << "); " << c.findings() << " findings: crashes " << c.crashes << ", hangs " << c.hangs
            << ", bad exit codes " << c.bad_exits << ", files left " << c.files_left << "\n";
}

// The seed of the fixture file a finding replaced, from its name (see run_one).
const Seed* seed_for(const Target& t, std::string name) {
  name = name.substr(0, name.find('~'));
  std::replace(name.begin(), name.end(), '%', '/');
  for (const auto& s : t.seeds)
    if (s.file == name || (s.file.empty() && name == "input")) return &s;
  return t.seeds.empty() ? nullptr : &t.seeds.front();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uringsim_fuzz: deterministic mutation fuzzing of uringsim's input paths"};
  std::uint64_t seed = 1;
  std::size_t inputs = 2000;
  std::string only, replay, findings, source = URINGSIM_SOURCE_DIR, exe = URINGSIM_EXE;
  app.add_option("--seed", seed, "Seed of the mutations (same seed, same inputs)");
  app.add_option("--inputs", inputs, "How many mutated inputs to run");
  app.add_option("--targets", only, "Comma-separated targets (default: all)");
  app.add_option("--replay", replay,
                 "Run the files of DIR/<target>/ as they are (regression corpus) instead of fuzzing");
  app.add_option("--findings", findings, "Save each finding's input and log under this directory");
  app.add_option("--source", source, "The uringsim repository (seed corpus)");
  app.add_option("--exe", exe, "The uringsim binary (to make the merge and report fixtures)");
  CLI11_PARSE(app, argc, argv);

  const fs::path scratch = fs::temp_directory_path() / ("uringsim-fuzz-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  int rc = 0;
  try {
    auto wanted = [&](const std::string& name) {
      if (!replay.empty() && !fs::is_directory(fs::path(replay) / name)) return false;
      if (only.empty()) return name != "self-test";
      return ("," + only + ",").find("," + name + ",") != std::string::npos;
    };
    std::vector<Target> targets = make_targets({source, exe, scratch}, wanted);
    targets.push_back(self_test_target());
    targets.erase(
        std::remove_if(targets.begin(), targets.end(), [&](const Target& t) { return !wanted(t.name); }),
        targets.end());
    Counts total;
    std::map<std::string, Counts> per;
    if (!replay.empty()) {
      for (const auto& t : targets) {
        const fs::path dir = fs::path(replay) / t.name;
        if (!fs::is_directory(dir)) continue;
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(dir))
          if (e.is_regular_file() && e.path().extension() != ".log") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
          const Seed* s = seed_for(t, f.filename().string());
          const Seed none{f.filename().string(), "", ""};
          run_one(t, s ? *s : none, slurp(f), scratch, "", f.filename().string(), total, per[t.name]);
        }
      }
    } else {
      // Weights: the in-process loaders are fast; runs, merges and reports cost a process' work each.
      const std::map<std::string, std::size_t> weight = {
          {"scenario", 6}, {"set", 4},    {"import-fio", 4}, {"import-fio-cmdline", 2},
          {"merge", 3},    {"report", 2}, {"run", 1},        {"self-test", 1}};
      std::vector<const Target*> wheel;
      for (const auto& t : targets)
        if (!t.seeds.empty())
          for (std::size_t i = 0; i < (weight.count(t.name) ? weight.at(t.name) : 1); ++i)
            wheel.push_back(&t);
      if (wheel.empty()) throw std::runtime_error("no target with seeds");
      for (std::size_t i = 0; i < inputs; ++i) {
        Rng rng(seed * 0x9e3779b97f4a7c15ULL + i);  // each input depends only on (seed, i)
        const Target& t = *wheel[rng.below(wheel.size())];
        const Seed& s = t.seeds[rng.below(t.seeds.size())];
        std::vector<std::string> others;
        for (std::size_t k = 0; k < 3; ++k) others.push_back(t.seeds[rng.below(t.seeds.size())].text);
        const std::string input = mutate(s.text, t.syntax, others, rng);
        run_one(t, s, input, scratch, findings, "input " + std::to_string(i), total, per[t.name]);
        if ((i + 1) % 500 == 0) std::cerr << "fuzz: " << (i + 1) << "/" << inputs << "\n";
      }
    }
    for (const auto& [name, c] : per) print_counts("  " + name, c);
    print_counts(replay.empty() ? "fuzz seed " + std::to_string(seed) : "replay " + replay, total);
    rc = total.findings() == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "uringsim_fuzz: " << e.what() << "\n";
    rc = 2;
  }
  fs::remove_all(scratch);
  return rc;
}
