#include <fmt/format.h>

#include <cmath>

#include <filesystem>
#include <iostream>
#include <optional>

#include "analysis/format.hpp"
#include "analysis/io.hpp"
#include "config/scenario.hpp"
#include "models/simulation.hpp"
#include "models/uring/breakdown.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/fio_json.hpp"
#include "tools/app/load_scenario.hpp"
#include "tools/app/lock_stat_text.hpp"
#include "tools/app/profile_text.hpp"
#include "uringsim_version.hpp"

namespace uringsim::app {
namespace {

// The scenario as run: its name and every override given on the command line, as flags.
std::string scenario_label(const config::Scenario& scenario, const RunOptions& o) {
  std::string overrides;
  if (!scenario.variant.empty()) overrides += " --variant " + scenario.variant;
  for (const auto& set : o.sets) overrides += " --set " + set;
  if (o.seed) overrides += " --seed " + std::to_string(*o.seed);
  const std::string name = scenario.doc.at("name").get<std::string>();
  return overrides.empty() ? name : name + " (" + overrides.substr(1) + ")";
}

// The latency breakdown at the mean and in the tail: one row per stage, in µs and as a share.
std::string render_breakdown(const nlohmann::json& b) {
  const auto& mean = b.at("mean");
  const auto& tail = b.at("p99_and_beyond");
  std::vector<std::vector<std::string>> rows;
  const double lm = mean.at("latency_us").get<double>(), lt = tail.at("latency_us").get<double>();
  for (std::size_t i = 0; i < models::kStages; ++i) {  // in the order a request meets them
    const std::string stage = models::stage_name(static_cast<models::Stage>(i));
    const auto& v = mean.at("stages_us").at(stage);
    // Stages timed from different threads' clocks can be off by rounding: show -0 as 0.
    auto clean = [](double x) { return std::abs(x) < 5e-4 ? 0.0 : x; };
    const double m = clean(v.get<double>()), t = clean(tail.at("stages_us").at(stage).get<double>());
    rows.push_back({stage, fmt::format("{:.3f}", m), fmt::format("{:.1f}", lm > 0 ? 100 * m / lm : 0.0),
                    fmt::format("{:.3f}", t), fmt::format("{:.1f}", lt > 0 ? 100 * t / lt : 0.0)});
  }
  rows.push_back({"total (SQE prepared -> CQE read)", fmt::format("{:.3f}", lm), "100.0",
                  fmt::format("{:.3f}", lt), "100.0"});
  return fmt::format("# Request latency by stage: {} requests; tail = the {} at or beyond p99 = {:.3f} us\n",
                     b.at("requests").get<std::uint64_t>(), tail.at("requests").get<std::uint64_t>(),
                     b.at("p99_us").get<double>()) +
         analysis::render_table({"stage", "mean us", "mean %", "tail us", "tail %"}, rows);
}

// Why a file cannot be written at `path` (checked before a run, which would otherwise fail at its end).
std::optional<std::string> file_path_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "is a directory; expected a file name";
  for (fs::path p = fs::path(path).parent_path(); !p.empty(); p = p.parent_path()) {
    if (fs::exists(p, ec)) {
      if (!fs::is_directory(p, ec)) return p.string() + " is not a directory";
      break;
    }
    if (p == p.parent_path()) break;
  }
  return std::nullopt;
}

}  // namespace

void add_run_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("scenario", o.scenario, "Scenario JSON file")->required();
  cmd.add_option("--out", o.out_dir, "Output directory (default: out/<scenario-name>[/<variant>])");
  cmd.add_option("--seed", o.seed, "Override the scenario's seed")->check(CLI::NonNegativeNumber);
  cmd.add_option("--variant", o.variant, "Apply the named variant of the scenario");
  cmd.add_option("--set", o.sets, "Override a field: dotted.path=value (repeatable)")->take_all();
  cmd.add_flag("--quiet", o.quiet, "Print nothing but errors");
  cmd.add_flag("--profile", o.profile,
               "Print CPU cycles by command and symbol, laid out like `perf report --stdio --sort comm,sym`");
  cmd.add_option("--profile-folded", o.profile_folded,
                 "Write the profile as folded stacks (`comm;symbol cycles` per line) for flame-graph tools");
  cmd.add_option("--trace", o.trace_file, "Write a Chrome/Perfetto trace-event JSON timeline to FILE");
  cmd.add_option(
      "--trace-window-ms", o.trace_window,
      "Simulated time span of the timeline, a:b in ms (default: the first 5 ms after the warm-up)");
  cmd.add_flag("--locks", o.locks,
               "Print lock statistics and contention points in the layout of /proc/lock_stat");
  cmd.add_flag(
      "--breakdown", o.breakdown,
      "Print where request latency goes, stage by stage, at the mean and for requests at or beyond p99");
  cmd.add_flag("--allow-violations", o.allow_violations,
               "Exit 0 even if a design-review check failed (violation, lock-order cycle, deadlock)");
  cmd.add_option("--fio-json", o.fio_json,
                 "fio workloads: also write the results to FILE in the layout of fio's --output-format=json");
  add_calibration_option(cmd, o.calibration);
}

int cmd_run(const RunOptions& o) {
  const auto loaded = load_for_command(o.scenario, o.variant, o.sets, o.seed, o.calibration);
  if (!loaded) return kExitBadInput;
  const config::Scenario& scenario = *loaded;

  std::string out = o.out_dir;
  if (out.empty()) {
    out = "out/" + scenario.doc.at("name").get<std::string>();
    if (!scenario.variant.empty()) out += "/" + scenario.variant;
  }

  models::TraceRequest trace;
  if (!o.trace_file.empty()) {
    trace.path = o.trace_file;
    trace.start_ms = scenario.doc.at("warmup_ms").get<double>();
    trace.end_ms = trace.start_ms + 5;
    if (!o.trace_window.empty()) {
      const auto colon = o.trace_window.find(':');
      try {
        if (colon == std::string::npos) throw std::invalid_argument("no colon");
        std::size_t n1 = 0, n2 = 0;
        const std::string a = o.trace_window.substr(0, colon), b = o.trace_window.substr(colon + 1);
        trace.start_ms = std::stod(a, &n1);
        trace.end_ms = std::stod(b, &n2);
        // stod also reads "nan" and "inf", which no comparison below would refuse.
        if (n1 != a.size() || n2 != b.size() || !std::isfinite(trace.start_ms) ||
            !std::isfinite(trace.end_ms) || trace.start_ms < 0 || trace.end_ms <= trace.start_ms)
          throw std::invalid_argument("range");
      } catch (const std::exception&) {
        std::cerr << "error: --trace-window-ms: expected a:b in ms, finite numbers with 0 <= a < b, got \""
                  << o.trace_window << "\"\n";
        return kExitBadInput;
      }
    }
    if (const auto problem = file_path_problem(trace.path)) {
      std::cerr << "error: --trace " << trace.path << ": " << *problem << "\n";
      return kExitBadInput;
    }
    const double run_ms =
        scenario.doc.at("warmup_ms").get<double>() + scenario.doc.at("duration_ms").get<double>();
    if (trace.start_ms >= run_ms)
      std::cerr << fmt::format(
          "warning: --trace-window-ms {}:{} starts after the run ends ({} ms): the timeline will be empty\n",
          trace.start_ms, trace.end_ms, run_ms);
  } else if (!o.trace_window.empty()) {
    std::cerr << "error: --trace-window-ms needs --trace FILE\n";
    return kExitBadInput;
  }
  if (!o.profile_folded.empty())
    if (const auto problem = file_path_problem(o.profile_folded)) {
      std::cerr << "error: --profile-folded " << o.profile_folded << ": " << *problem << "\n";
      return kExitBadInput;
    }

  if (!o.fio_json.empty()) {
    const auto type = scenario.at("/workload/type").get<std::string>();
    if (type != "fio") {
      std::cerr << "error: --fio-json: fio's JSON layout needs a fio workload; workload.type is \"" << type
                << "\"\n";
      return kExitBadInput;
    }
    if (const auto problem = file_path_problem(o.fio_json)) {
      std::cerr << "error: --fio-json " << o.fio_json << ": " << *problem << "\n";
      return kExitBadInput;
    }
  }

  models::RunOutput result;
  if (const int rc = simulate_or_report([&] {
        result = models::simulate(scenario, URINGSIM_VERSION, trace.path.empty() ? nullptr : &trace);
      }))
    return rc;
  if (!trace.path.empty() && result.trace_events == 0)
    std::cerr << fmt::format("warning: the timeline {} holds no event: nothing happened in {}:{} ms\n",
                             trace.path, trace.start_ms, trace.end_ms);

  try {
    analysis::write_file_atomic(out + "/results.json", analysis::dump_json(result.results));
    analysis::write_file_atomic(out + "/run_info.json", analysis::dump_json(result.run_info));
    if (!o.profile_folded.empty())
      analysis::write_file_atomic(o.profile_folded, folded_stacks(result.results.at("profile")));
    if (!o.fio_json.empty())
      analysis::write_file_atomic(
          o.fio_json, analysis::dump_json(fio::fio_json(scenario, result.results, URINGSIM_VERSION)));
  } catch (const std::exception& e) {
    std::cerr << "error: cannot write results to " << out << ": " << e.what() << "\n";
    return kExitFailed;
  }

  if (!o.quiet) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"scenario", scenario_label(scenario, o)});
    for (const auto& [k, v] : result.summary) rows.push_back({k, v});
    rows.push_back({"wall time",
                    fmt::format("{:.2f} s (real-time factor {:.2f})", result.run_info["wall_s"].get<double>(),
                                result.run_info["real_time_factor"].get<double>())});
    rows.push_back({"results", out + "/results.json"});
    std::cout << analysis::render_table({}, rows);
    if (!result.text.empty()) std::cout << "\n" << result.text;
  }
  if (!o.quiet)
    for (const auto& r : result.reports) std::cout << "\n" << r;
  if (o.profile) std::cout << "\n" << perf_report_text(result.results.at("profile"));
  if (o.locks) std::cout << "\n" << lock_stat_text(result.results.at("locks"));
  if (o.breakdown) {
    if (result.results.contains("breakdown"))
      std::cout << "\n" << render_breakdown(result.results.at("breakdown"));
    else
      std::cout << "\n(no latency breakdown: this workload has no io_uring requests)\n";
  }
  if (result.checks_ok || o.allow_violations) return kExitOk;
  const auto& c = result.results.at("checks");
  std::cerr << fmt::format(
      "error: design-review checks failed ({} violations, {} lock-order cycles{}); results are in {}; "
      "--allow-violations exits 0\n",
      c.at("violations_total").get<std::uint64_t>(), c.at("lock_order").at("cycles").size(),
      c.at("deadlock").is_null() ? "" : ", deadlock", out);
  return kExitFailed;
}

}  // namespace uringsim::app
