// `uringsim twin`: joining a host sweep and a simulated sweep point by point (host mean and CI,
// simulated mean, errors), its CSV, and the command end to end on a one-point grid.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis/io.hpp"
#include "cli_helpers.hpp"
#include "host_helpers.hpp"
#include "tools/app/json_input.hpp"
#include "tools/app/twin.hpp"

using namespace testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A sweep directory as `uringsim sweep` leaves it: sweep.json and one results.json per point.
// `workers`: the run's iowq.workers_peak, left out when negative (a run without a ring).
json fake_sweep(const fs::path& dir, const std::vector<std::pair<int, double>>& conns_tput, double cpu_server,
                int workers = -1) {
  json points = json::array();
  int i = 0;
  for (const auto& [conns, tput] : conns_tput) {
    const std::string rel = "points/p" + std::to_string(i++) + "/results.json";
    json r = {{"throughput", {{"ops_per_s", tput}}},
              {"latency_us", {{"mean", 10.0}, {"p50", 9.0}, {"p99", 20.0}}},
              {"cpu", {{"total_pct", cpu_server}, {"by_thread", {{"io_uring_echo_s_pct", cpu_server}}}}},
              {"per_request", {{"run_delay_us_by_class", {{"io_uring_echo_s", cpu_server / 10}}}}}};
    if (workers >= 0) r["iowq"] = {{"workers_peak", workers}};
    uringsim::analysis::write_file_atomic((dir / rel).string(), r.dump());
    points.push_back({{"grid", {{"workload.connections", conns}}}, {"variant", ""}, {"results", rel}});
  }
  return {{"grids", json::array({{{"path", "workload.connections"}, {"values", {"10", "100"}}}})},
          {"points", points}};
}

}  // namespace

TEST_CASE("twin join: replications grouped per point, host CI, relative and absolute errors") {
  const auto d = fresh_dir("twin-join");
  // Host: 3 reps at 10 connections (100, 110, 120 -> mean 110), 1 rep at 100 connections, with
  // at most 4 io-wq workers in each run.
  const json host = fake_sweep(d / "host", {{10, 100}, {10, 110}, {10, 120}, {100, 200}}, 50, 4);
  // Simulation: 2 reps at 10 (121, 121), none finished at 100; 10 workers.
  const json sim = fake_sweep(d / "sim", {{10, 121}, {10, 121}}, 40, 10);
  const json j = uringsim::app::twin::join(host, sim, d / "host", d / "sim");

  REQUIRE(j.at("rows").size() == 2);
  const auto& t10 = j["rows"][0]["metrics"]["throughput.ops_per_s"];
  CHECK(j["rows"][0]["grid"]["workload.connections"] == 10);
  CHECK(t10["host"]["n"] == 3);
  CHECK(t10["host"]["mean"].get<double>() == Approx(110));
  // Student-t, 2 degrees of freedom: 4.303 * sd(10) / sqrt(3).
  CHECK(t10["host"]["ci95"].get<double>() == Approx(4.3027 * 10 / std::sqrt(3.0)).epsilon(1e-3));
  CHECK(t10["sim"]["mean"].get<double>() == Approx(121));
  CHECK(t10["rel_error_pct"].get<double>() == Approx(10.0));
  CHECK(t10["abs_error"].get<double>() == Approx(11));
  // CPU by class: compared in points.
  const auto& c10 = j["rows"][0]["metrics"]["cpu.by_thread.io_uring_echo_s_pct"];
  CHECK(c10["abs_error"].get<double>() == Approx(-10));
  // The wait for a CPU per completion, by class, likewise (5 µs on the host, 4 in the model).
  const auto& w10 = j["rows"][0]["metrics"]["per_request.run_delay_us_by_class.io_uring_echo_s"];
  CHECK(w10["abs_error"].get<double>() == Approx(-1));
  CHECK(w10["rel_error_pct"].get<double>() == Approx(-20));
  // The most io-wq workers at once: compared like any count.
  const auto& k10 = j["rows"][0]["metrics"]["iowq.workers_peak"];
  CHECK(k10["host"]["mean"].get<double>() == Approx(4));
  CHECK(k10["sim"]["mean"].get<double>() == Approx(10));
  CHECK(k10["rel_error_pct"].get<double>() == Approx(150));

  // The point with no simulated run has no error, and a single host rep has no interval.
  const auto& t100 = j["rows"][1]["metrics"]["throughput.ops_per_s"];
  CHECK(t100["host"]["ci95"].is_null());
  CHECK(t100["sim"]["n"] == 0);
  CHECK(t100["rel_error_pct"].is_null());

  // The summary counts only points with both sides.
  CHECK(j["summary"]["throughput.ops_per_s"]["points"] == 1);
  CHECK(j["summary"]["throughput.ops_per_s"]["median_abs_rel_error_pct"].get<double>() == Approx(10.0));
  CHECK(j["summary"]["throughput.ops_per_s"]["median_abs_error"].get<double>() == Approx(11));
  CHECK(j["summary"]["cpu.by_thread.io_uring_echo_s_pct"]["worst_abs_error"].get<double>() == Approx(10));

  const std::string csv = uringsim::app::twin::csv(j, {"workload.connections"});
  CHECK(csv.rfind("variant,workload.connections,metric,host_mean,host_ci95,host_n,sim_mean,sim_ci95,sim_n,"
                  "abs_error,rel_error_pct\n",
                  0) == 0);
  CHECK(csv.find(",10,throughput.ops_per_s,110.0,") != std::string::npos);
}

TEST_CASE("twin orderings: a pair counts when the host shows it clearly, and is held or broken") {
  const auto d = fresh_dir("twin-order");
  // Host: 10 -> 100 (tight), 100 -> 200 (tight), 1000 -> 205 (tight, within 15 % of 200).
  const json host = fake_sweep(d / "host",
                               {{10, 99},
                                {10, 100},
                                {10, 101},
                                {100, 199},
                                {100, 200},
                                {100, 201},
                                {1000, 204},
                                {1000, 205},
                                {1000, 206}},
                               50);
  // Simulation: keeps 10 < 100, breaks 10 < 1000 (sim 10 above 1000).
  const json sim = fake_sweep(d / "sim", {{10, 150}, {100, 300}, {1000, 140}}, 50);
  const json j = uringsim::app::twin::join(host, sim, d / "host", d / "sim");
  const json o = uringsim::app::twin::orderings(j, "throughput.ops_per_s");
  CHECK(o["clear"] == 2);  // 10 vs 100 and 10 vs 1000; 100 vs 1000 differ by 2.5 %
  CHECK(o["held"] == 1);
  REQUIRE(o["broken"].size() == 1);
  CHECK(o["broken"][0]["a"] == "workload.connections=10");
  CHECK(o["broken"][0]["b"] == "workload.connections=1000");
  // Wide host intervals make no clear ordering.
  const json noisy = fake_sweep(d / "noisy", {{10, 50}, {10, 150}, {100, 150}, {100, 250}}, 50);
  const json jn = uringsim::app::twin::join(noisy, sim, d / "noisy", d / "sim");
  CHECK(uringsim::app::twin::orderings(jn, "throughput.ops_per_s")["clear"] == 0);
  // Runs without a ring report no io-wq workers: the count is absent on both sides, not 0.
  CHECK(j["rows"][0]["metrics"]["iowq.workers_peak"]["host"]["n"] == 0);
  CHECK(j["rows"][0]["metrics"]["iowq.workers_peak"]["rel_error_pct"].is_null());
  CHECK_FALSE(j["summary"].contains("iowq.workers_peak"));
}

TEST_CASE("twin cli: a one-point echo grid on the real kernel and in the simulator writes twin.csv") {
  if (!host_available()) return;
  const auto d = fresh_dir("twin-cli");
  const auto nproc = std::to_string(::sysconf(_SC_NPROCESSORS_ONLN));
  const json s = {
      {"name", "twin-echo"},
      {"warmup_ms", 50},
      {"duration_ms", 200},
      {"machine", {{"cores", std::stoi(nproc)}}},
      {"workload",
       {{"type", "echo"}, {"connections", 10}, {"client_placement", "local"}, {"client_threads", 1}}}};
  std::ofstream(d / "s.json") << s.dump();
  const auto r = run_cli("twin " + (d / "s.json").string() + " --grid workload.connections=10 --reps 1 " +
                         "--wait-quiet 0 --quiet --out " + (d / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string csv = slurp(d / "out" / "twin.csv");
  CHECK(csv.find(",10,throughput.ops_per_s,") != std::string::npos);
  const json tj = json::parse(slurp(d / "out" / "twin.json"));
  REQUIRE(tj.at("rows").size() == 1);
  const auto& t = tj["rows"][0]["metrics"]["throughput.ops_per_s"];
  CHECK(t["host"]["n"] == 1);
  CHECK(t["sim"]["n"] == 1);
  CHECK(t["host"]["mean"].get<double>() > 0);
  CHECK(t["sim"]["mean"].get<double>() > 0);
  // Each side is an ordinary sweep: the host side's results say where they came from.
  const json hs = json::parse(slurp(d / "out" / "host" / "sweep.json"));
  const json hr = json::parse(slurp(d / "out" / "host" / hs["points"][0]["results"].get<std::string>()));
  CHECK(hr["source"] == "host");
  // The report shows both sides.
  const auto rep = run_cli("report " + (d / "out").string());
  INFO(rep.output);
  CHECK(rep.exit_code == 0);
  const std::string html = slurp(d / "out" / "report.html");
  CHECK(html.find("host (error bars: 95 % CI) and simulation") != std::string::npos);

  // A calibration made on another CPU model: said, and kept in twin.json (the host half resumes).
  json cal = json::parse(slurp(fs::path(URINGSIM_SOURCE_DIR) / "scenarios/machines/cpp-2vcpu-6.18.json"));
  cal["cpu_model"] = "a CPU this machine is not";
  cal["machine"]["speed_ns_per_add"] = 0.5;
  cal["machine"]["syscall_ns"] = 400.0;
  cal["costs"]["ipi_delivery_ns"] = {{"value", 8000.0}, {"unit", "ns"},     {"method", "a test's"},
                                     {"samples", 1},    {"median", 8000.0}, {"spread", ""}};
  std::ofstream(d / "other-cpu.json") << cal.dump();
  const auto other = run_cli("twin " + (d / "s.json").string() + " --grid workload.connections=10 --reps 1 " +
                             "--wait-quiet 0 --calibration " + (d / "other-cpu.json").string() + " --out " +
                             (d / "out").string());
  INFO(other.output);
  REQUIRE(other.exit_code == 0);
  CHECK(other.output.find("twin: warning: the calibration") != std::string::npos);
  const json cm = json::parse(slurp(d / "out" / "twin.json")).at("calibration_machine");
  CHECK(cm["cpu_model"] == "a CPU this machine is not");
  CHECK(cm["same_cpu_model"] == false);
  CHECK(cm["host_cpu_models"].size() == 1);
  // The host run's CPU speed probe, and against the calibration's 0.5 ns per add.
  const json sp = json::parse(slurp(d / "out" / "twin.json")).at("host_speed");
  REQUIRE(sp.is_object());
  CHECK(sp["runs"] == 1);
  const double probe = sp["ns_per_add"]["median"].get<double>();
  CHECK(probe > 0);
  CHECK(sp["vs_calibration"]["median"].get<double>() == Approx(probe / 0.5));
  CHECK(other.output.find("twin: the host's CPU speed before its 1 runs") != std::string::npos);
  // The idle-wake probe, against the calibration's machine.wake_idle_ns (null with one CPU).
  const json wk = json::parse(slurp(d / "out" / "twin.json")).at("host_idle_wake");
  if (!wk.is_null()) {
    CHECK(wk["runs"] == 1);
    const double wake = wk["one_way_ns"]["median"].get<double>();
    CHECK(wake > 0);
    CHECK(wk["vs_calibration"]["median"].get<double>() ==
          Approx(wake / cal["machine"]["wake_idle_ns"].get<double>()));
    CHECK(other.output.find("twin: the host's wake-up of an idle CPU before its 1 runs") !=
          std::string::npos);
  }
  // The system call probe, against the calibration's machine.syscall_ns (400 ns here).
  const json sc = json::parse(slurp(d / "out" / "twin.json")).at("host_syscall");
  REQUIRE(sc.is_object());
  CHECK(sc["runs"] == 1);
  const double call = sc["ns"]["median"].get<double>();
  CHECK(call > 0);
  CHECK(sc["vs_calibration"]["median"].get<double>() == Approx(call / 400.0));
  CHECK(other.output.find("twin: the host's system call (getppid) before its 1 runs") != std::string::npos);
  // The task_work kick probe, against the calibration's costs.ipi_delivery_ns (8000 ns here); null
  // with one CPU.
  const json kp = json::parse(slurp(d / "out" / "twin.json")).at("host_kick");
  if (!kp.is_null()) {
    CHECK(kp["runs"] == 1);
    const double delivery = kp["delivery_ns"]["median"].get<double>();
    CHECK(kp["vs_calibration"]["median"].get<double>() == Approx(delivery / 8000.0));
    CHECK(other.output.find("twin: the host's task_work kick delivery before its 1 runs") !=
          std::string::npos);
  }

  // --max-slowdown: the host point waits for the CPU within that many times the calibration's
  // probe (0.5 ns per add here); it needs a calibration with a probe and time to wait.
  const std::string base = "twin " + (d / "s.json").string() + " --grid workload.connections=10 --reps 1 ";
  auto bad = run_cli(base + "--wait-quiet 5 --max-slowdown 2 --out " + (d / "no-cal").string());
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--max-slowdown needs a --calibration") != std::string::npos);
  bad = run_cli(base + "--wait-quiet 0 --max-slowdown 2 --calibration " + (d / "other-cpu.json").string() +
                " --out " + (d / "no-wait").string());
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--max-slowdown needs --wait-quiet") != std::string::npos);
  // A calibration file that is not there: bad input before any host run, nothing written.
  const auto missing = run_cli(base + "--wait-quiet 1 --max-slowdown 1.0 --calibration " +
                               (d / "no-such-cal.json").string() + " --out " + (d / "missing").string());
  INFO(missing.output);
  REQUIRE(missing.exit_code == 2);
  CHECK_FALSE(fs::exists(d / "missing" / "host"));
  json fast = cal;
  fast["machine"]["speed_ns_per_add"] = 1e-6;  // no CPU is that fast: the point waits, then runs
  std::ofstream(d / "fast-cal.json") << fast.dump();
  const auto waited = run_cli(base + "--wait-quiet 1 --max-slowdown 1.5 --calibration " +
                              (d / "fast-cal.json").string() + " --out " + (d / "waited").string());
  INFO(waited.output);
  REQUIRE(waited.exit_code == 0);
  const json sw = json::parse(slurp(d / "waited" / "twin.json")).at("host_speed_wait");
  CHECK(sw["runs"] == 1);
  CHECK(sw["runs_not_at_speed"] == 1);
  CHECK(sw["max_slowdown"].get<double>() == Approx(1.5));
  CHECK(waited.output.find("1 of 1 host runs waited their --wait-quiet") != std::string::npos);
  const json hs2 = json::parse(slurp(d / "waited" / "host" / "sweep.json"));
  const json ri = json::parse(
      slurp(d / "waited" / "host" / fs::path(hs2["points"][0]["results"].get<std::string>()).parent_path() /
            "run_info.json"));
  CHECK(ri["quiet_wait"]["max_ns_per_add"].get<double>() == Approx(1.5e-6));
  CHECK(ri["quiet_wait"]["waited_s"].get<double>() >= 1.0);
}

TEST_CASE("twin join: the model's CPU by class is compared as the kernel accounts it (accounted_by_thread)") {
  const auto d = fresh_dir("twin-join-accounted");
  const json host = fake_sweep(d / "host", {{10, 100}}, 50);
  json sim = fake_sweep(d / "sim", {{10, 100}}, 40);  // ran 40 %, accounted 47 %
  const fs::path rel = d / "sim" / sim["points"][0]["results"].get<std::string>();
  json r = uringsim::app::read_json_file(rel);
  r["cpu"]["accounted_by_thread"] = {{"io_uring_echo_s_pct", 47.0}};
  uringsim::analysis::write_file_atomic(rel.string(), r.dump());
  const json j = uringsim::app::twin::join(host, sim, d / "host", d / "sim");
  const auto& c = j["rows"][0]["metrics"]["cpu.by_thread.io_uring_echo_s_pct"];
  CHECK(c["sim"]["mean"].get<double>() == Approx(47));
  CHECK(c["abs_error"].get<double>() == Approx(-3));
}
