// `uringsim validate`: the engine and primitives against queueing theory. Each check runs a
// validation scenario in its own process and compares the measured mean response time and
// probability of waiting with the closed form (Erlang C, Pollaczek-Khinchine).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "analysis/format.hpp"
#include "analysis/io.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/subprocess.hpp"
#include "uringsim_data.hpp"

namespace uringsim::app {
namespace {

constexpr double kRelTolerance = 0.03;  // the acceptance bound

struct Check {
  std::string name;
  std::string_view (*scenario)();
  std::string variant;
  double quick_duration_ms;  // --quick: shorter runs, same tolerance; 0 = skipped in --quick
};

const std::vector<Check>& checks() {
  static const std::vector<Check> all = {
      // Quick lengths keep the 95 % CI within about 2 %; rho = 0.9 needs a minute of simulated time.
      {"M/M/1 rho=0.5", data::mm1, "", 2000},    {"M/M/1 rho=0.8", data::mm1, "rho08", 6000},
      {"M/M/1 rho=0.9", data::mm1, "rho09", 0},  {"M/M/4 rho=0.8", data::mmc, "", 1000},
      {"M/M/20 rho=0.8", data::mmc, "c20", 300}, {"M/D/1 rho=0.8", data::md1, "", 2000},
  };
  return all;
}

struct Row {
  std::string check, metric;
  double expected = NAN, simulated = NAN, ci95 = NAN;
  bool pass = false;
  std::string error;
};

}  // namespace

void add_validate_options(CLI::App& cmd, ValidateOptions& o) {
  cmd.add_flag("--quick", o.quick, "Shorter runs (same tolerance; for smoke tests)");
  cmd.add_flag("--json", o.json, "Print the table as JSON");
  cmd.add_option("--jobs", o.jobs, "Simulations run at once (default: number of cores)");
}

int cmd_validate(const ValidateOptions& o) {
  namespace fs = std::filesystem;
  char tmpl[] = "/tmp/uringsim-validate-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::cerr << "error: cannot create a temporary directory\n";
    return kExitFailed;
  }
  const fs::path dir = tmpl;
  const std::string exe = self_exe();

  std::vector<std::vector<std::string>> cmds;
  std::vector<Check> all;
  for (const auto& c : checks())
    if (!o.quick || c.quick_duration_ms > 0) all.push_back(c);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const fs::path scen = dir / fmt::format("check{}.json", i);
    std::ofstream(scen) << all[i].scenario();
    std::vector<std::string> c = {exe,       "run",   scen.string(),
                                  "--quiet", "--out", (dir / std::to_string(i)).string()};
    if (!all[i].variant.empty()) c.insert(c.end(), {"--variant", all[i].variant});
    if (o.quick) c.insert(c.end(), {"--set", fmt::format("duration_ms={}", all[i].quick_duration_ms)});
    cmds.push_back(std::move(c));
  }
  const int jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<ChildResult> children;
  try {
    children = run_parallel(cmds, jobs);
  } catch (const Interrupted& e) {
    fs::remove_all(dir);
    return 128 + e.signal;
  }

  std::vector<Row> rows;
  bool all_pass = true;
  for (std::size_t i = 0; i < all.size(); ++i) {
    Row resp, pw;
    resp.check = pw.check = all[i].name;
    resp.metric = "mean response (us)";
    pw.metric = "P(wait > 0)";
    try {
      if (children[i].exit_code != 0)
        throw std::runtime_error("simulation exited with " + std::to_string(children[i].exit_code) + ": " +
                                 children[i].output);
      std::ifstream f(dir / std::to_string(i) / "results.json");
      const auto r = nlohmann::json::parse(f);
      const auto& q = r.at("queue");
      resp.expected = q.at("theory").at("mean_response_us").get<double>();
      resp.simulated = q.at("measured").at("mean_response_us").get<double>();
      resp.ci95 = q.at("measured").at("mean_response_ci95_us").get<double>();
      pw.expected = q.at("theory").at("p_wait").get<double>();
      pw.simulated = q.at("measured").at("p_wait").get<double>();
      pw.ci95 = q.at("measured").at("p_wait_ci95").get<double>();
      for (Row* row : {&resp, &pw})
        row->pass = std::abs(row->simulated - row->expected) <= kRelTolerance * row->expected;
    } catch (const std::exception& e) {
      resp.error = pw.error = e.what();
    }
    all_pass = all_pass && resp.pass && pw.pass;
    rows.push_back(resp);
    rows.push_back(pw);
  }
  fs::remove_all(dir);

  if (o.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows)
      j.push_back({{"check", r.check},
                   {"metric", r.metric},
                   {"expected", r.expected},
                   {"simulated", r.simulated},
                   {"ci95", r.ci95},
                   {"tolerance_rel", kRelTolerance},
                   {"pass", r.pass},
                   {"error", r.error}});
    std::cout << analysis::dump_json(j);
  } else {
    std::vector<std::vector<std::string>> table;
    for (const auto& r : rows) {
      if (!r.error.empty()) {
        table.push_back({r.check, r.metric, "-", "error: " + r.error.substr(0, 200), "-", "FAIL"});
        continue;
      }
      table.push_back({r.check, r.metric, fmt::format("{:.4f}", r.expected),
                       fmt::format("{:.4f} ± {:.4f}", r.simulated, r.ci95),
                       fmt::format("± {:.0f} % ({:+.2f} %)", kRelTolerance * 100,
                                   100 * (r.simulated - r.expected) / r.expected),
                       r.pass ? "pass" : "FAIL"});
    }
    std::cout << analysis::render_table(
        {"check", "metric", "expected", "simulated (95% CI)", "tolerance (error)", "pass"}, table);
    std::cout << (all_pass ? "all checks passed\n" : "SOME CHECKS FAILED\n");
  }
  return all_pass ? kExitOk : kExitFailed;
}

}  // namespace uringsim::app
