// `uringsim compare`: every variant of a scenario, replicated with independent seeds, each run in
// its own process (resumable like sweep: finished runs are kept, tools/app/study_runs.hpp); per metric the
// mean with a Student-t 95 % confidence interval, and each variant's difference to the first with a Welch
// interval, marked significant or not.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <thread>

#include "analysis/format.hpp"
#include "analysis/io.hpp"
#include "analysis/stats.hpp"
#include "config/scenario.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/json_input.hpp"
#include "tools/app/load_scenario.hpp"
#include "tools/app/read_file.hpp"
#include "tools/app/study_metrics.hpp"
#include "tools/app/study_runs.hpp"
#include "tools/app/subprocess.hpp"

namespace uringsim::app {
namespace {

namespace fs = std::filesystem;

// A run's marker: its presence with the run's hash is what marks the run finished.
constexpr const char* kMarker = "run.json";

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const auto comma = s.find(',', pos);
    const auto item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

// Readable numbers for the table: integers for large values, a few decimals otherwise.
std::string num(double x) {
  const double a = std::abs(x);
  if (a >= 1000) return fmt::format("{:.0f}", x);
  if (a >= 10) return fmt::format("{:.2f}", x);
  return fmt::format("{:.4g}", x);
}

}  // namespace

void add_compare_options(CLI::App& cmd, CompareOptions& o) {
  cmd.add_option("scenario", o.scenario, "Scenario JSON file")->required();
  cmd.add_option("--variants", o.variants,
                 "Comma-separated variants, the first is the baseline (default: all)");
  cmd.add_option("--reps", o.reps, "Replications per variant, with seeds seed, seed+1, ...")
      ->check(CLI::Range(2, 1000));
  cmd.add_option("--jobs", o.jobs, "Simulations run at once (default: number of cores)");
  cmd.add_option("--out", o.out_dir, "Output directory (default: out/<scenario-name>/compare)");
  cmd.add_option("--set", o.sets, "Override a field in every run: dotted.path=value (repeatable)")
      ->take_all();
  add_calibration_option(cmd, o.calibration);
  cmd.add_flag("--allow-violations", o.allow_violations,
               "Pass --allow-violations to every run: runs whose design-review checks fail still count");
}

int cmd_compare(const CompareOptions& o) {
  const auto loaded = load_for_command(o.scenario, "", o.sets, std::nullopt, o.calibration);
  if (!loaded) return kExitBadInput;
  const config::Scenario& base = *loaded;
  std::vector<std::string> variants = split_list(o.variants);
  if (variants.empty())
    for (const auto& [name, _] : base.doc.at("variants").items()) variants.push_back(name);
  if (variants.empty()) variants.push_back("");  // no variants: replicate the scenario itself
  for (const auto& v : variants) {
    if (!v.empty() && !base.doc.at("variants").contains(v)) {
      std::cerr << "error: " << o.scenario << ": unknown variant \"" << v << "\"\n";
      return kExitBadInput;
    }
  }
  const std::string out =
      o.out_dir.empty() ? "out/" + base.doc.at("name").get<std::string>() + "/compare" : o.out_dir;
  const auto base_seed = base.doc.at("seed").get<std::uint64_t>();
  study::Runner runner;
  runner.calibration = o.calibration;
  std::string file_hash;
  try {
    file_hash = study::file_hash(read_text_file(o.scenario));
    if (!o.calibration.empty()) runner.calibration_hash = study::file_hash(read_text_file(o.calibration));
  } catch (const config::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  }

  // One run per variant and replication, in its own directory; those already finished with the
  // same inputs (an earlier, interrupted compare) are kept.
  struct Run {
    std::string variant;
    int rep;
    std::uint64_t seed;
    fs::path dir;
    std::string hash;
  };
  std::vector<Run> runs;
  for (const auto& v : variants)
    for (int i = 0; i < o.reps; ++i) {
      const std::uint64_t seed = base_seed + static_cast<std::uint64_t>(i);
      runs.push_back({v, i, seed, fs::path(fmt::format("{}/runs/{}/rep{}", out, v.empty() ? "base" : v, i)),
                      study::run_hash(file_hash, v, seed, o.sets, runner)});
    }
  std::vector<std::size_t> todo;
  std::vector<Job> jobs;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const Run& r = runs[k];
    if (study::run_finished(r.dir, kMarker, r.hash)) continue;
    std::error_code ec;
    fs::create_directories(r.dir, ec);
    study::remove_stale_temps(r.dir);
    todo.push_back(k);
    jobs.push_back({study::run_command(o.scenario, r.dir.string(), r.seed, r.variant, o.sets,
                                       o.allow_violations, runner),
                    study::log_path(r.dir)});
  }
  if (!todo.empty()) {
    // The study's outputs appear only once every run is finished: none from an earlier one stays
    // beside runs that no longer match it.
    std::error_code ec;
    fs::remove(out + "/compare.json", ec);
    fs::remove(out + "/compare.csv", ec);
  }
  const int jobs_at_once =
      o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!o.quiet)
    std::cerr << fmt::format("compare: {} runs ({} variants x {} reps), {} to run, {} at a time\n",
                             runs.size(), variants.size(), o.reps, todo.size(), jobs_at_once);
  study::Progress progress("compare", runs.size(), todo.size(), o.quiet);
  progress.skipped(runs.size() - todo.size());
  progress.draw();
  int interrupted = 0;
  try {
    interrupted = run_each(jobs, jobs_at_once, [&](std::size_t j, const ChildResult& c) {
      const Run& r = runs[todo[j]];
      const std::string name = fmt::format("run {} rep {}", r.variant.empty() ? "base" : r.variant, r.rep);
      auto outcome = study::outcome_of(c, r.dir);
      if (outcome == study::Outcome::Ok) {
        try {
          study::mark_finished(
              r.dir, kMarker,
              {{"variant", r.variant}, {"rep", r.rep}, {"seed", r.seed}, {"scenario_hash", r.hash}});
        } catch (const std::exception& e) {
          outcome = study::Outcome::Failed;
          progress.note(fmt::format("compare: {}: cannot write {}: {}", name, kMarker, e.what()));
        }
      } else if (outcome == study::Outcome::Failed) {
        progress.note(fmt::format("compare: {} {}", name, study::describe_failure(c, r.dir)));
      }
      progress.finished(outcome);
      progress.draw();
    });
  } catch (const std::exception& e) {
    progress.end();
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailed;
  }
  progress.end();
  if (interrupted)
    return study::interrupted_exit("compare", interrupted, todo.size() - progress.ran() - progress.failed());
  if (progress.failed() || progress.not_run()) {
    std::cerr << fmt::format(
        "error: {} of {} runs failed{}; the finished ones are kept: run the same command again to retry the "
        "others\n",
        progress.failed() + progress.not_run(), runs.size(),
        progress.not_run() ? fmt::format(" ({} killed before they ended)", progress.not_run()) : "");
    return kExitFailed;
  }

  // values[metric][variant] = per-replication values. compare.csv starts with one row per run
  // (docs/studies.md), its metric columns as in sweep.csv; the summary rows follow.
  std::map<std::string, std::map<std::string, std::vector<double>>> values;
  std::string csv = "row,variant,rep,seed";
  for (const auto& m : study_metrics()) csv += std::string(",") + m.column;
  csv += ",results\n";
  for (const Run& r : runs) {
    nlohmann::json res;
    try {
      res = read_json_file(r.dir / "results.json");
    } catch (const config::InputError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return kExitFailed;
    }
    csv +=
        fmt::format("run,{},{},{}", study::csv_field(r.variant.empty() ? "base" : r.variant), r.rep, r.seed);
    for (const auto& m : study_metrics()) {  // absent metrics are skipped (an empty cell)
      const std::string ptr = m.pointer;
      const nlohmann::json::json_pointer p(ptr);
      const bool has = res.contains(p) && res.at(p).is_number();
      if (has) values[ptr][r.variant].push_back(res.at(p).get<double>());
      csv += "," + (has ? res.at(p).dump() : std::string());
    }
    csv += "," +
           study::csv_field(
               fmt::format("runs/{}/rep{}/results.json", r.variant.empty() ? "base" : r.variant, r.rep)) +
           "\n";
  }
  // Summary rows: per variant, a row per statistic with one cell per metric (empty where the
  // metric is absent in some run, or for the baseline's differences).
  const std::vector<std::string> stats = {
      "n", "mean", "ci95_half_width", "diff_vs_baseline", "diff_ci95_half_width", "significant"};
  std::map<std::string, std::map<std::string, std::map<std::string, std::string>>>
      cell;  // stat, variant, ptr

  nlohmann::json cj;
  cj["scenario"] = o.scenario;
  cj["variants"] = variants;
  cj["reps"] = o.reps;
  cj["seeds"] = nlohmann::json::array();
  for (int i = 0; i < o.reps; ++i) cj["seeds"].push_back(base_seed + static_cast<std::uint64_t>(i));
  cj["confidence"] = 0.95;
  std::vector<std::vector<std::string>> table;
  for (const auto& m : study_metrics()) {
    const std::string ptr = m.pointer, label = m.label;
    if (!values.count(ptr)) continue;
    auto& by_variant = values[ptr];
    const auto& baseline = by_variant[variants.front()];
    nlohmann::json mj;
    mj["label"] = label;
    for (const auto& v : variants) {
      const auto& xs = by_variant[v];
      if (xs.size() != static_cast<std::size_t>(o.reps)) continue;  // metric absent in some runs
      const auto ci = analysis::student_t_ci(xs, 0.95);
      nlohmann::json vj = {{"values", xs}, {"mean", ci.mean}, {"ci95_half_width", ci.half_width}};
      std::string diff_txt = "-", sig_txt = "";
      cell["n"][v][ptr] = std::to_string(xs.size());
      cell["mean"][v][ptr] = fmt::format("{}", ci.mean);
      cell["ci95_half_width"][v][ptr] = fmt::format("{}", ci.half_width);
      if (v != variants.front() && baseline.size() == xs.size()) {
        const auto d = analysis::welch_diff_ci(baseline, xs, 0.95);
        vj["diff_vs_baseline"] = {{"diff", d.diff},
                                  {"ci95_half_width", d.half_width},
                                  {"significant", d.significant},
                                  {"relative_pct", 100.0 * d.diff / analysis::student_t_ci(baseline).mean}};
        diff_txt = (d.diff >= 0 ? "+" : "") + num(d.diff) + " ± " + num(d.half_width);
        sig_txt = d.significant ? "yes" : "no";
        cell["diff_vs_baseline"][v][ptr] = fmt::format("{}", d.diff);
        cell["diff_ci95_half_width"][v][ptr] = fmt::format("{}", d.half_width);
        cell["significant"][v][ptr] = d.significant ? "true" : "false";
      }
      mj["by_variant"][v.empty() ? "base" : v] = vj;
      table.push_back(
          {label, v.empty() ? "base" : v, num(ci.mean) + " ± " + num(ci.half_width), diff_txt, sig_txt});
    }
    cj["metrics"][ptr] = mj;
  }
  for (const auto& v : variants)
    for (const auto& stat : stats) {
      const bool about_diff = stat.rfind("diff", 0) == 0 || stat == "significant";
      if (about_diff && v == variants.front()) continue;  // the baseline has no difference to itself
      csv += fmt::format("{},{},,", stat, study::csv_field(v.empty() ? "base" : v));
      for (const auto& m : study_metrics()) {
        const auto& by_ptr = cell[stat][v];
        const auto it = by_ptr.find(m.pointer);
        csv += "," + (it == by_ptr.end() ? std::string() : it->second);
      }
      csv += ",\n";
    }
  try {
    analysis::write_file_atomic(out + "/compare.json", analysis::dump_json(cj));
    analysis::write_file_atomic(out + "/compare.csv", csv);
  } catch (const std::exception& e) {
    std::cerr << "error: cannot write " << out << ": " << e.what() << "\n";
    return kExitFailed;
  }
  if (!o.quiet) {
    std::cout << analysis::render_table({"metric", "variant", "mean ± 95% CI",
                                         fmt::format("diff vs {} ± 95% CI", variants.front()), "significant"},
                                        table);
    std::cout << fmt::format("{} replications per variant (seeds {}..{}); results in {}\n", o.reps, base_seed,
                             base_seed + o.reps - 1, out);
  }
  return kExitOk;
}

}  // namespace uringsim::app
