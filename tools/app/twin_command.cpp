// `uringsim twin`: the same grid run on the real kernel (`uringsim host`, one point at a time,
// each waiting for a quiet machine) and in the simulator (with a calibration, in parallel), then
// joined per point: host mean and 95 % CI, simulated mean, error. Both halves are ordinary sweeps
// in DIR/host and DIR/sim, so a twin resumes exactly as a sweep does.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "analysis/io.hpp"
#include "analysis/stats.hpp"
#include "config/calibration.hpp"
#include "config/scenario.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/json_input.hpp"
#include "tools/app/load_scenario.hpp"
#include "tools/app/read_file.hpp"
#include "tools/app/twin.hpp"

namespace uringsim::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

}  // namespace

namespace twin {

const std::vector<std::string>& fixed_metrics() {
  // per_request: context switches, IPIs and migrations per completion, which both sides count (the
  // host's IPIs are the machine's reschedule and function-call IPIs, the model's its kicks' and
  // wake-ups'; migrations are every thread's moves to another CPU). iowq.workers_peak: the most
  // io-wq workers the run had at once, a count both sides keep (absent where no ring runs).
  static const std::vector<std::string> m = {
      "/throughput/ops_per_s", "/latency_us/mean",        "/latency_us/p50",
      "/latency_us/p99",       "/cpu/total_pct",          "/per_request/context_switches",
      "/per_request/ipis",     "/per_request/migrations", "/iowq/workers_peak"};
  return m;
}

std::string metric_name(const std::string& pointer) {
  std::string s = pointer.substr(1);
  std::replace(s.begin(), s.end(), '/', '.');
  return s;
}

json compare_side(const std::vector<double>& xs) {
  if (xs.empty()) return {{"n", 0}, {"mean", nullptr}, {"ci95", nullptr}, {"values", json::array()}};
  const auto ci = analysis::student_t_ci(xs);
  return {{"n", xs.size()},
          {"mean", ci.mean},
          {"ci95", std::isfinite(ci.half_width) ? json(ci.half_width) : json()},
          {"values", xs}};
}

json join(const json& host_sweep, const json& sim_sweep, const fs::path& host_dir, const fs::path& sim_dir) {
  // Group the finished points of each side by (grid, variant): the replications of one point.
  struct Group {
    json grid;
    std::string variant;
    std::vector<json> host, sim;
  };
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  auto add = [&](const json& sweep_json, const fs::path& root, bool host) {
    for (const auto& row : sweep_json.at("points")) {
      const std::string key = row.at("grid").dump() + "|" + row.at("variant").get<std::string>();
      auto [it, fresh] = groups.try_emplace(key);
      if (fresh) {
        it->second.grid = row.at("grid");
        it->second.variant = row.at("variant").get<std::string>();
        order.push_back(key);
      }
      json r = read_json_file(root / row.at("results").get<std::string>());
      // The host's CPU by thread is each thread's sum_exec_runtime; the model's figure measured
      // the same way is cpu.accounted_by_thread (results before it have only by_thread).
      const json::json_pointer accounted("/cpu/accounted_by_thread");
      if (!host && r.contains(accounted)) r["cpu"]["by_thread"] = r.at(accounted);
      (host ? it->second.host : it->second.sim).push_back(std::move(r));
    }
  };
  add(host_sweep, host_dir, true);
  add(sim_sweep, sim_dir, false);

  json rows = json::array();
  std::map<std::string, std::vector<double>> abs_errors;  // metric -> |relative error| per point
  std::map<std::string, std::vector<double>> abs_diffs;   // metric -> |sim - host| per point
  for (const auto& key : order) {
    const Group& g = groups.at(key);
    // The fixed metrics, then CPU and the wait for a CPU (per completion) by every thread class
    // either side reports.
    std::vector<std::string> metrics = fixed_metrics();
    auto by_class = [&](const char* section, const char* key) {
      const json::json_pointer at(std::string("/") + section + "/" + key);
      std::set<std::string> classes;
      for (const auto* side : {&g.host, &g.sim})
        for (const auto& r : *side)
          if (r.contains(at) && r.at(at).is_object())
            for (const auto& [k, _] : r.at(at).items()) classes.insert(k);
      for (const auto& c : classes) metrics.push_back(at.to_string() + "/" + c);
    };
    by_class("cpu", "by_thread");
    by_class("per_request", "run_delay_us_by_class");

    json ms = json::object();
    for (const auto& m : metrics) {
      const json::json_pointer jp(m);
      auto values = [&](const std::vector<json>& side, bool zero_if_absent) {
        std::vector<double> xs;
        for (const auto& r : side) {
          if (r.contains(jp) && r.at(jp).is_number())
            xs.push_back(r.at(jp).get<double>());
          else if (zero_if_absent)
            xs.push_back(0.0);
        }
        return xs;
      };
      // A thread class a run does not have used no CPU and waited for none in it.
      const bool of_class =
          m.rfind("/cpu/by_thread/", 0) == 0 || m.rfind("/per_request/run_delay_us_by_class/", 0) == 0;
      json e = {{"host", compare_side(values(g.host, of_class))},
                {"sim", compare_side(values(g.sim, of_class))}};
      const auto& hm = e["host"]["mean"];
      const auto& sm = e["sim"]["mean"];
      e["abs_error"] = nullptr;
      e["rel_error_pct"] = nullptr;
      if (hm.is_number() && sm.is_number()) {
        const double h = hm.get<double>(), s = sm.get<double>();
        e["abs_error"] = s - h;
        abs_diffs[metric_name(m)].push_back(std::abs(s - h));
        if (h != 0) {
          e["rel_error_pct"] = 100.0 * (s - h) / h;
          abs_errors[metric_name(m)].push_back(std::abs(100.0 * (s - h) / h));
        }
      }
      ms[metric_name(m)] = std::move(e);
    }
    rows.push_back({{"grid", g.grid}, {"variant", g.variant}, {"metrics", std::move(ms)}});
  }

  auto median_and_worst = [](std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    const std::size_t n = xs.size();
    return std::make_pair(n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2, xs.back());
  };
  json summary = json::object();
  for (const auto& [m, xs] : abs_diffs) {
    const auto [median, worst] = median_and_worst(xs);
    summary[m] = {{"points", xs.size()}, {"median_abs_error", median}, {"worst_abs_error", worst}};
    if (const auto it = abs_errors.find(m); it != abs_errors.end()) {
      const auto [rel_median, rel_worst] = median_and_worst(it->second);
      summary[m]["median_abs_rel_error_pct"] = rel_median;
      summary[m]["worst_abs_rel_error_pct"] = rel_worst;
    }
  }
  return {{"rows", rows}, {"summary", summary}};
}

json orderings(const json& joined, const std::string& metric, double min_gap) {
  struct Row {
    std::string label;
    double h, ci, s;
  };
  std::vector<Row> rows;
  for (const auto& r : joined.at("rows")) {
    const auto& m = r.at("metrics");
    if (!m.contains(metric)) continue;
    const auto& e = m.at(metric);
    if (!e.at("host").at("mean").is_number() || !e.at("sim").at("mean").is_number()) continue;
    std::string label = r.at("variant").is_string() ? r.at("variant").get<std::string>() : "";
    for (const auto& [k, v] : r.at("grid").items()) label += (label.empty() ? "" : " ") + k + "=" + v.dump();
    const auto& ci = e.at("host").at("ci95");
    rows.push_back({label, e.at("host").at("mean").get<double>(), ci.is_number() ? ci.get<double>() : 0.0,
                    e.at("sim").at("mean").get<double>()});
  }
  int clear = 0, held = 0;
  json broken = json::array();
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = i + 1; j < rows.size(); ++j) {
      const Row &a = rows[i], &b = rows[j];
      const double lo = std::min(std::abs(a.h), std::abs(b.h));
      const bool apart = a.h + a.ci < b.h - b.ci || b.h + b.ci < a.h - a.ci;
      if (lo <= 0 || std::abs(a.h - b.h) / lo <= min_gap || !apart) continue;
      ++clear;
      if ((a.h < b.h) == (a.s < b.s) && a.s != b.s)
        ++held;
      else
        broken.push_back({{"a", a.label}, {"b", b.label}, {"host", {a.h, b.h}}, {"sim", {a.s, b.s}}});
    }
  return {{"metric", metric}, {"min_gap", min_gap}, {"clear", clear}, {"held", held}, {"broken", broken}};
}

std::string csv(const json& joined, const std::vector<std::string>& grid_paths) {
  auto field = [](const json& v) {
    if (v.is_null()) return std::string();
    std::string s = v.is_string() ? v.get<std::string>() : v.dump();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string out = "variant";
  for (const auto& p : grid_paths) out += "," + field(p);
  out += ",metric,host_mean,host_ci95,host_n,sim_mean,sim_ci95,sim_n,abs_error,rel_error_pct\n";
  for (const auto& row : joined.at("rows")) {
    for (const auto& [m, e] : row.at("metrics").items()) {
      out += field(row.at("variant"));
      for (const auto& p : grid_paths) out += "," + field(row.at("grid").value(p, json()));
      out += "," + field(m);
      for (const char* side : {"host", "sim"})
        out += "," + field(e.at(side).at("mean")) + "," + field(e.at(side).at("ci95")) + "," +
               field(e.at(side).at("n"));
      out += "," + field(e.at("abs_error")) + "," + field(e.at("rel_error_pct")) + "\n";
    }
  }
  return out;
}

}  // namespace twin

void add_twin_options(CLI::App& cmd, TwinOptions& o) {
  cmd.add_option("scenario", o.scenario, "Scenario JSON file")->required();
  add_calibration_option(cmd, o.calibration);
  cmd.add_option(
         "--grid", o.grids,
         "dotted.path=v1,v2,... or start:stop:step; repeatable, Cartesian product (default: one point)")
      ->allow_extra_args(false);
  cmd.add_option("--variants", o.variants, "Comma-separated variants (default: all, or the base scenario)");
  cmd.add_option("--reps", o.reps, "Replications per point on each side; rep r uses seed + r")
      ->check(CLI::Range(1, 1000));
  cmd.add_option("--jobs", o.jobs,
                 "Simulations run at once (default: number of cores); host points run one at a time");
  cmd.add_option("--set", o.sets, "Override a field on both sides: dotted.path=value (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--wait-quiet", o.wait_quiet_s,
                 "Before each host point, wait up to this many seconds for other processes to go quiet")
      ->check(CLI::Range(0.0, 3600.0));
  cmd.add_option("--max-slowdown", o.max_slowdown,
                 "With --calibration: within --wait-quiet, also wait before each host point until the CPU "
                 "speed probe is at most this many times the calibration's (e.g. 1.3)")
      ->check(CLI::Range(1.0, 100.0));
  cmd.add_option("--out", o.out_dir, "Output directory")->required();
  cmd.add_flag("--quiet", o.quiet, "No progress output");
}

namespace {

// Whether the calibration was made on a CPU like the one the host half ran on: a twin against a
// calibration of another machine compares the model with the wrong truth (this VM type has been
// an Intel Xeon and an AMD EPYC). Said on stderr and kept in twin.json; not an error, since a
// cross-machine twin is a legitimate question.
json calibration_machine(const std::string& path, const config::Calibration& c,
                         const std::set<std::string>& host_cpus, bool quiet) {
  const bool same = host_cpus.size() == 1 && *host_cpus.begin() == c.cpu_model;
  if (!same && !quiet)
    std::cerr << fmt::format(
        "twin: warning: the calibration {} was made on \"{}\", the host runs ran on \"{}\": the simulated "
        "side models another machine; calibrate this one (uringsim calibrate)\n",
        path, c.cpu_model, fmt::join(host_cpus, "\", \""));
  return {{"cpu_model", c.cpu_model},
          {"kernel_release", c.kernel_release},
          {"host_cpu_models", json(std::vector<std::string>(host_cpus.begin(), host_cpus.end()))},
          {"same_cpu_model", same}};
}

// The CPU speed probes of the host runs (host/speed_probe.hpp, just before each window): their
// spread, and against the calibration's own probe where it has one (a ratio of ns per add, above
// 1 where the host ran slower). Reported, not corrected for: the kernel's paths need not slow
// down as an add chain does.
// A probe taken before each host run (run_info.json), over the runs: its median and range under
// `key`, and the same as multiples of the calibration's own reading where it has one.
// A measured entry of the calibration's cost table; nullopt if it kept the default.
std::optional<double> calibrated_cost(const config::Calibration& c, const std::string& key) {
  const auto it = c.costs.find(key);
  if (it == c.costs.end()) return std::nullopt;
  return it->second.value;
}

json probe_spread(std::vector<double> v, const std::optional<double>& reference, const std::string& key) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  json out = {{key, {{"median", v[n / 2]}, {"min", v.front()}, {"max", v.back()}}},
              {"runs", n},
              {"vs_calibration", nullptr}};
  if (reference && *reference > 0)
    out["vs_calibration"] = {
        {"median", v[n / 2] / *reference}, {"min", v.front() / *reference}, {"max", v.back() / *reference}};
  return out;
}

void say_probe(const json& p, const std::string& key, const std::string& what, const std::string& unit,
               int digits) {
  if (p.is_null()) return;
  const json& v = p.at(key);
  std::cerr << fmt::format("twin: {} before its {} runs: median {:.{}f} {}, from {:.{}f} to {:.{}f}\n", what,
                           p.at("runs").get<int>(), v.at("median").get<double>(), digits, unit,
                           v.at("min").get<double>(), digits, v.at("max").get<double>(), digits);
  const json& r = p.at("vs_calibration");
  if (!r.is_null())
    std::cerr << fmt::format("twin: that is {:.2f}x the calibration's (from {:.2f}x to {:.2f}x)\n",
                             r.at("median").get<double>(), r.at("min").get<double>(),
                             r.at("max").get<double>());
}

}  // namespace

int cmd_twin(const TwinOptions& o) {
  // sweep needs a grid; a twin of the scenario as it is sweeps its own seed over that one value.
  std::vector<std::string> grids = o.grids;
  if (grids.empty()) {
    try {
      config::LoadOptions lo;
      lo.sets = o.sets;
      grids.push_back(fmt::format(
          "seed={}", config::load_scenario_file(o.scenario, lo).doc.at("seed").get<std::uint64_t>()));
    } catch (const config::InputError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  // The simulated side's calibration, once, before any host run: what the host runs are compared
  // with, and with --max-slowdown the bound on their speed probe.
  std::optional<config::Calibration> calibration;
  try {
    if (!o.calibration.empty()) calibration = config::load_calibration_file(o.calibration);
  } catch (const config::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  }
  SweepOptions host;
  host.scenario = o.scenario;
  host.grids = grids;
  host.variants = o.variants;
  host.reps = o.reps;
  host.jobs = 1;  // one real-kernel run at a time: they would disturb each other
  // This VM's speed drifts by 10-30 % over minutes: every point's first rep, then every second
  // one, so that a slow spell widens all intervals rather than moving one point.
  host.reps_outer = true;
  host.sets = o.sets;
  host.out_dir = (fs::path(o.out_dir) / "host").string();
  host.quiet = o.quiet;
  host.runner = "host";
  // The scenario's model-only fields (era, costs, ...) apply to the simulated side only.
  host.runner_args = {"--ignore-model-fields", "--wait-quiet", fmt::format("{}", o.wait_quiet_s)};
  if (o.max_slowdown > 0) {  // the host's bound on its speed probe, from the calibration's own reading
    const std::optional<double> speed = calibration ? calibration->machine.speed_ns_per_add : std::nullopt;
    if (!speed || *speed <= 0) {
      std::cerr << "error: --max-slowdown needs a --calibration with a CPU speed probe "
                   "(machine.speed_ns_per_add)\n";
      return kExitBadInput;
    }
    if (o.wait_quiet_s <= 0) {
      std::cerr << "error: --max-slowdown needs --wait-quiet SECONDS: how long each host point may wait\n";
      return kExitBadInput;
    }
    host.runner_args.push_back("--wait-speed");
    host.runner_args.push_back(fmt::format("{}", o.max_slowdown * *speed));
  }

  SweepOptions sim = host;
  sim.jobs = o.jobs;
  sim.out_dir = (fs::path(o.out_dir) / "sim").string();
  sim.runner = "run";
  sim.runner_args.clear();
  sim.calibration = o.calibration;
  sim.allow_violations = true;  // a twin compares performance; the checks are `run`'s business

  if (!o.quiet) std::cerr << "twin: the real kernel (" << host.out_dir << ")\n";
  const int rc_host = cmd_sweep(host);
  if (rc_host == kExitBadInput) return rc_host;
  if (!o.quiet) std::cerr << "twin: the simulator (" << sim.out_dir << ")\n";
  const int rc_sim = cmd_sweep(sim);
  if (rc_sim == kExitBadInput) return rc_sim;

  try {
    const json host_sweep = read_json_file(fs::path(host.out_dir) / "sweep.json");
    const json sim_sweep = read_json_file(fs::path(sim.out_dir) / "sweep.json");
    json joined = twin::join(host_sweep, sim_sweep, host.out_dir, sim.out_dir);
    std::vector<std::string> grid_paths;
    for (const auto& g : host_sweep.at("grids")) grid_paths.push_back(g.at("path").get<std::string>());

    // What the host side could not honour, from its run_info files (the same for every point).
    std::set<std::string> ignored;
    json ignored_list = json::array();
    std::set<std::string> host_cpus;          // the CPU models the host runs recorded
    std::vector<double> host_speeds;          // their CPU speed probes before each window, ns per add
    std::vector<double> host_wakes;           // their idle-wake probes before each window, ns one-way
    std::vector<double> host_syscalls;        // their system call probes before each window, ns
    std::vector<double> host_kicks;           // their task_work kick probes before each window, ns
    int speed_bounded = 0, speed_missed = 0;  // runs held to --max-slowdown, and those that ran slower
    for (const auto& row : host_sweep.at("points")) {
      const fs::path info = fs::path(host.out_dir) /
                            fs::path(row.at("results").get<std::string>()).parent_path() / "run_info.json";
      std::error_code ec;
      if (!fs::exists(info, ec)) continue;
      const json ri = read_json_file(info);
      if (ri.contains("cpu_model") && ri["cpu_model"].is_string())
        host_cpus.insert(ri["cpu_model"].get<std::string>());
      static const json::json_pointer probe("/cpu_speed/before/ns_per_add");
      if (ri.contains(probe) && ri.at(probe).is_number()) host_speeds.push_back(ri.at(probe).get<double>());
      // --max-slowdown: a point that waited its whole --wait-quiet without the CPU at speed ran anyway.
      static const json::json_pointer bound("/quiet_wait/max_ns_per_add"), met("/quiet_wait/quiet");
      if (ri.contains(bound) && ri.at(bound).is_number()) {
        ++speed_bounded;
        if (ri.contains(met) && ri.at(met).is_boolean() && !ri.at(met).get<bool>()) ++speed_missed;
      }
      static const json::json_pointer wake("/idle_wake/before/one_way_ns");
      if (ri.contains(wake) && ri.at(wake).is_number()) host_wakes.push_back(ri.at(wake).get<double>());
      static const json::json_pointer sys("/syscall/before/ns");
      if (ri.contains(sys) && ri.at(sys).is_number()) host_syscalls.push_back(ri.at(sys).get<double>());
      static const json::json_pointer kick("/kick/before/delivery_ns");
      if (ri.contains(kick) && ri.at(kick).is_number()) host_kicks.push_back(ri.at(kick).get<double>());
      if (ri.contains("ignored_fields"))
        for (const auto& f : ri["ignored_fields"])
          if (ignored.insert(f.dump()).second) ignored_list.push_back(f);
    }
    json out = {
        {"scenario", o.scenario},
        {"calibration", o.calibration.empty() ? json() : json(o.calibration)},
        {"grids", host_sweep.at("grids")},
        {"variants", host_sweep.at("variants")},
        {"reps", o.reps},
        {"host_dir", "host"},
        {"sim_dir", "sim"},
        {"model_only_fields", ignored_list},
        {"calibration_machine",
         calibration ? calibration_machine(o.calibration, *calibration, host_cpus, o.quiet) : json()},
        {"host_speed",
         probe_spread(host_speeds, calibration ? calibration->machine.speed_ns_per_add : std::nullopt,
                      "ns_per_add")},
        {"host_idle_wake",
         probe_spread(host_wakes, calibration ? calibration->machine.wake_idle_ns : std::nullopt,
                      "one_way_ns")},
        {"host_syscall",
         probe_spread(host_syscalls, calibration ? calibration->machine.syscall_ns : std::nullopt, "ns")},
        {"host_kick",
         probe_spread(host_kicks,
                      calibration ? calibrated_cost(*calibration, "ipi_delivery_ns") : std::nullopt,
                      "delivery_ns")},
        {"rows", joined.at("rows")},
        {"summary", joined.at("summary")},
        {"orderings",
         {twin::orderings(joined, "throughput.ops_per_s"), twin::orderings(joined, "latency_us.p50")}}};
    if (speed_bounded > 0)
      out["host_speed_wait"] = {
          {"max_slowdown", o.max_slowdown}, {"runs", speed_bounded}, {"runs_not_at_speed", speed_missed}};
    if (!o.quiet) {
      say_probe(out["host_speed"], "ns_per_add", "the host's CPU speed", "ns per dependent add", 3);
      if (speed_bounded > 0)
        std::cerr << fmt::format(
            "twin: {} of {} host runs waited their --wait-quiet without the CPU within "
            "{:.2f}x the calibration's speed, and ran anyway\n",
            speed_missed, speed_bounded, o.max_slowdown);
      say_probe(out["host_idle_wake"], "one_way_ns", "the host's wake-up of an idle CPU", "ns one-way", 0);
      say_probe(out["host_syscall"], "ns", "the host's system call (getppid)", "ns", 0);
      say_probe(out["host_kick"], "delivery_ns", "the host's task_work kick delivery", "ns", 0);
    }
    analysis::write_file_atomic(o.out_dir + "/twin.json", analysis::dump_json(out));
    analysis::write_file_atomic(o.out_dir + "/twin.csv", twin::csv(joined, grid_paths));
    if (!o.quiet) {
      for (const auto& [m, s] : joined.at("summary").items())
        if (m == "throughput.ops_per_s" || m == "latency_us.p50")
          std::cerr << fmt::format("twin: {}: median |error| {:.1f} %, worst {:.1f} % over {} points\n", m,
                                   s.value("median_abs_rel_error_pct", 0.0),
                                   s.value("worst_abs_rel_error_pct", 0.0), s.at("points").get<int>());
        else if (m == "cpu.total_pct")
          std::cerr << fmt::format("twin: {}: median |error| {:.1f} points, worst {:.1f} over {} points\n", m,
                                   s.at("median_abs_error").get<double>(),
                                   s.at("worst_abs_error").get<double>(), s.at("points").get<int>());
      for (const auto& ord : out.at("orderings"))
        std::cerr << fmt::format(
            "twin: {}: {} of {} clear host orderings held (> {:.0f} %, intervals apart)\n",
            ord.at("metric").get<std::string>(), ord.at("held").get<int>(), ord.at("clear").get<int>(),
            100 * ord.at("min_gap").get<double>());
      std::cerr << "twin: results in " << o.out_dir << "/twin.csv\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "error: cannot join " << o.out_dir << ": " << e.what() << "\n";
    return kExitFailed;
  }
  return rc_host != kExitOk || rc_sim != kExitOk ? kExitFailed : kExitOk;
}

}  // namespace uringsim::app
