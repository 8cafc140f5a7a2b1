// `uringsim host`: the echo and nop workloads on the real kernel, its refusals and its safety, and
// the pieces under it (proc parsing, the io_uring availability check, the guard, the results
// schema). Tests that need io_uring skip, with the reason, where the kernel does not offer it.
#include <liburing.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/results_check.hpp"
#include "cli_helpers.hpp"
#include "config/scenario.hpp"
#include "host/calibrate_bench.hpp"
#include "host/duration_sampler.hpp"
#include "host/guard.hpp"
#include "host/machine_info.hpp"
#include "host/model_fields.hpp"
#include "host/proc_stats.hpp"
#include "host/thread_setup.hpp"
#include "host_helpers.hpp"

using namespace testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string nproc() {
  return std::to_string(::sysconf(_SC_NPROCESSORS_ONLN));
}

// A scenario file in dir; machine.cores matches this machine so that it is not a model-only field.
std::string write_scenario(const fs::path& dir, const std::string& name, json workload,
                           double duration_ms = 200) {
  json s = {{"name", name},
            {"warmup_ms", 50},
            {"duration_ms", duration_ms},
            {"machine", {{"cores", std::stoi(nproc())}}},
            {"workload", std::move(workload)}};
  const fs::path p = dir / (name + ".json");
  std::ofstream(p) << s.dump(2);
  return p.string();
}

json echo_workload() {
  return {{"type", "echo"}, {"connections", 10}, {"client_placement", "local"}, {"client_threads", 2}};
}

json read_json(const fs::path& p) {
  return json::parse(slurp(p));
}

// The window's figures agree with one another and something was measured.
void check_window_consistent(const json& r) {
  INFO(r.dump(2).substr(0, 3000));
  const auto problems = uringsim::analysis::check_results(r);
  for (const auto& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  CHECK(r.at("source") == "host");
  const auto completions = r.at("/window/completions"_json_pointer).get<std::uint64_t>();
  CHECK(completions > 0);
  const double seconds = r.at("/window/seconds"_json_pointer).get<double>();
  CHECK(r.at("/throughput/ops_per_s"_json_pointer).get<double>() * seconds ==
        Approx(completions).epsilon(1e-9));
  const auto& rq = r.at("requests");
  CHECK(rq.at("submitted").get<std::int64_t>() == rq.at("completed").get<std::int64_t>() +
                                                      rq.at("failed").get<std::int64_t>() +
                                                      rq.at("in_flight_at_end").get<std::int64_t>());
  CHECK(r.at("/cpu/total_pct"_json_pointer).get<double>() > 0);
}

void check_run_info(const json& info) {
  for (const char* k :
       {"kernel_release", "cpu_model", "nproc", "ghz_nominal", "date", "warmup_ms", "window_ms", "wall_s",
        "other_cpu_pct", "quiet_wait", "ignored_fields", "runner_cpu_pct"})
    CHECK(info.contains(k));
  // The CPU's speed just before and after the window (host/speed_probe.hpp).
  for (const char* when : {"before", "after"}) {
    INFO(when);
    REQUIRE(info.contains("cpu_speed"));
    const json& p = info["cpu_speed"][when];
    CHECK(p["ns_per_add"].get<double>() > 0);
    CHECK(p["min_ns_per_add"].get<double>() <= p["ns_per_add"].get<double>());
    CHECK(p["ns_per_add"].get<double>() <= p["max_ns_per_add"].get<double>());
  }
  // An idle CPU's wake-up just before the window (host/wake_probe.hpp): null with one CPU only.
  REQUIRE(info.contains("idle_wake"));
  const json& w = info["idle_wake"]["before"];
  if (!w.is_null()) {
    CHECK(w["samples"].get<int>() >= 1);
    CHECK(w["min_ns"].get<double>() > 0);
    CHECK(w["min_ns"].get<double>() <= w["one_way_ns"].get<double>());
    CHECK(w["one_way_ns"].get<double>() <= w["max_ns"].get<double>());
  }
  // A task_work kick's delivery just before the window (host/kick_probe.hpp): null with one CPU.
  REQUIRE(info.contains("kick"));
  const json& k = info["kick"]["before"];
  if (!k.is_null()) {
    CHECK(k["samples"].get<int>() == 30);
    CHECK(k["min_ns"].get<double>() <= k["delivery_ns"].get<double>());
    CHECK(k["delivery_ns"].get<double>() <= k["max_ns"].get<double>());
    CHECK(std::isfinite(k["delivery_ns"].get<double>()));
    CHECK(std::isfinite(k["send_extra_ns"].get<double>()));
  }
}

// A short echo run of `workload` through the command; its results.json.
json run_echo_ok(const std::string& name, const json& workload) {
  const auto dir = fresh_dir(name);
  const std::string sc = write_scenario(dir, name, workload);
  const auto r = run_cli("host " + sc + " --quiet --out " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const json res = read_json(dir / "out" / "results.json");
  check_window_consistent(res);
  INFO(res.at("echo").dump());
  CHECK(res.at("/echo/failed_ops"_json_pointer) == 0);
  return res;
}

// per_request is per_request_totals over the window's completions.
void check_per_request(const json& r, const std::string& ring_class) {
  INFO(r.at("per_request").dump() << " " << r.at("per_request_totals").dump());
  const json& t = r.at("per_request_totals");
  CHECK(t.at("requests") == r.at("/window/completions"_json_pointer));
  const double n = t.at("requests").get<double>();
  REQUIRE(n > 0);
  const json& by = t.at("context_switches_by_class");
  CHECK(by.size() == 2);
  CHECK(t.at("context_switches").get<std::uint64_t>() ==
        by.at(ring_class).get<std::uint64_t>() + by.at("iou-wrk").get<std::uint64_t>());
  CHECK(r.at("/per_request/context_switches"_json_pointer).get<double>() ==
        Approx(t.at("context_switches").get<double>() / n));
  // /proc/interrupts is readable by anyone on Linux.
  REQUIRE(t.at("ipis").is_number());
  CHECK(t.at("ipis").get<std::uint64_t>() ==
        t.at("/ipis_by_kind/reschedule"_json_pointer).get<std::uint64_t>() +
            t.at("/ipis_by_kind/function_call"_json_pointer).get<std::uint64_t>());
  CHECK(r.at("/per_request/ipis"_json_pointer).get<double>() == Approx(t.at("ipis").get<double>() / n));
  // This kernel (6.13+) always has /proc/PID/task/TID/sched.
  REQUIRE(t.at("migrations").is_number());
  CHECK(r.at("/per_request/migrations"_json_pointer).get<double>() ==
        Approx(t.at("migrations").get<double>() / n));
}

}  // namespace

TEST_CASE("host: a SINGLE_ISSUER + DEFER_TASKRUN echo completes round trips and says so in its results") {
  if (!host_available()) return;
  json w = echo_workload();
  w["setup_flags"] = {"single_issuer", "defer_taskrun"};
  w["wait_nr"] = 4;
  const json res = run_echo_ok("host-echo-defer", w);
  CHECK(res.at("/uring/setup_flags"_json_pointer) == json({"single_issuer", "defer_taskrun"}));
  CHECK(res.at("/echo/wait_nr"_json_pointer) == 4);
  CHECK(res.at("/echo/recv_mode"_json_pointer) == "single");
  check_per_request(res, "io_uring_echo_s");
}

TEST_CASE("host: a wait_nr above the connections waits only for what is in flight, and does not hang") {
  if (!host_available()) return;
  json w = echo_workload();
  w["connections"] = 3;
  w["wait_nr"] = 16;  // three requests in flight can never give 16 CQEs at once
  w["setup_flags"] = {"coop_taskrun", "taskrun_flag"};
  const json res = run_echo_ok("host-echo-wait16", w);
  CHECK(res.at("/uring/setup_flags"_json_pointer) == json({"coop_taskrun", "taskrun_flag"}));
  CHECK(res.at("/requests/in_flight_at_end"_json_pointer).get<int>() <= 3);
}

TEST_CASE("host: a multishot echo with a 2-buffer ring runs dry, ends on -ENOBUFS and re-arms") {
  if (!host_available()) return;
  json w = echo_workload();
  w["connections"] = 8;
  w["recv_mode"] = "multishot";
  w["buf_ring_entries"] = 2;
  const json res = run_echo_ok("host-echo-multishot2", w);
  CHECK(res.at("/echo/recv_mode"_json_pointer) == "multishot");
  CHECK(res.at("/echo/buf_ring_entries"_json_pointer) == 2);
  // 8 clients' messages and 2 buffers: recvs end for want of one, and are armed again.
  CHECK(res.at("/echo/multishot_enobufs"_json_pointer).get<std::uint64_t>() >= 1);
  CHECK(res.at("/echo/multishot_rearms"_json_pointer).get<std::uint64_t>() >= 1);
  // The clients checked every echo byte for byte, and each has at most one message in flight.
  CHECK(res.at("/requests/in_flight_at_end"_json_pointer).get<int>() <= 8);
}

TEST_CASE("host: a multishot echo with buffers to spare keeps each connection's one recv armed") {
  if (!host_available()) return;
  json w = echo_workload();
  w["recv_mode"] = "multishot";
  w["buf_ring_entries"] = 64;  // 10 connections hold at most 10 at once
  const json res = run_echo_ok("host-echo-multishot64", w);
  CHECK(res.at("/echo/multishot_enobufs"_json_pointer) == 0);
  CHECK(res.at("/echo/multishot_rearms"_json_pointer) == 0);
  // One recv SQE per connection, then one send per echo: far fewer SQEs than CQEs.
  CHECK(res.at("/uring/sqes_submitted"_json_pointer).get<double>() <
        0.75 * res.at("/uring/cqes_reaped"_json_pointer).get<double>());
}

TEST_CASE("host: the echo's teardown cancels and reaps what is in flight before freeing its buffers") {
  if (!host_available()) return;
  json w = echo_workload();
  w["force_async"] = true;  // io-wq workers could otherwise still send from a freed buffer
  w["connections"] = 100;
  // A closed loop of 100 usually stops with many recvs and sends still in the kernel (10 to 100
  // in six runs here); none is left after the teardown. On a loaded machine the server may be
  // kept off its CPU until every request has completed, and reap them all with the stop, so
  // that nothing is in the kernel at all (2 of 12 runs beside two busy loops): try again then.
  int in_flight = 0;
  for (int attempt = 0; attempt < 4 && in_flight == 0; ++attempt) {
    const json res = run_echo_ok("host-echo-teardown", w);
    in_flight = res.at("/echo/in_flight_at_stop"_json_pointer).get<int>();
    CHECK(res.at("/echo/left_in_flight"_json_pointer).get<int>() == 0);
  }
  CHECK(in_flight >= 1);
}

TEST_CASE("host: setup_flags the kernel would refuse are bad input naming /workload/setup_flags") {
  const auto dir = fresh_dir("host-setup-flags");
  const std::vector<std::pair<json, std::string>> cases = {
      {{"taskrun_flag"}, "expected coop_taskrun or defer_taskrun with taskrun_flag"},
      {{"defer_taskrun"}, "expected single_issuer with defer_taskrun"},
      {{"coop_taskrun", "defer_taskrun", "taskrun_flag"}, "expected single_issuer with defer_taskrun"}};
  for (const auto& [flags, expected] : cases) {
    for (const char* type : {"echo", "nop"}) {
      json w = std::string(type) == "echo" ? echo_workload() : json{{"type", "nop"}};
      w["setup_flags"] = flags;
      const std::string sc = write_scenario(dir, std::string("bad-") + type, w);
      const auto r = run_cli("host " + sc + " --quiet --out " + (dir / "out").string());
      INFO(type << " " << flags.dump() << "\n" << r.output);
      CHECK(r.exit_code == 2);
      CHECK(r.output.find("/workload/setup_flags: " + expected) != std::string::npos);
      CHECK_FALSE(fs::exists(dir / "out"));
    }
  }
}

TEST_CASE("host: the nop runner with wait_nr reaps whole batches, a few CQEs per wait") {
  if (!host_available()) return;
  const auto dir = fresh_dir("host-nop-wait");
  const std::string sc = write_scenario(dir, "nopw",
                                        {{"type", "nop"},
                                         {"depth", 8},
                                         {"force_async", true},
                                         {"wait_nr", 3},
                                         {"setup_flags", {"single_issuer", "defer_taskrun"}}});
  const auto r = run_cli("host " + sc + " --quiet --out " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const json res = read_json(dir / "out" / "results.json");
  check_window_consistent(res);
  CHECK(res.at("/nop/wait_nr"_json_pointer) == 3);
  CHECK(res.at("/uring/setup_flags"_json_pointer) == json({"single_issuer", "defer_taskrun"}));
  CHECK(res.at("/requests/in_flight_at_end"_json_pointer) == 0);  // whole batches only
  CHECK(res.at("/nop/failed"_json_pointer) == 0);
  check_per_request(res, "nop_test");
}

TEST_CASE("host: /proc/interrupts: reschedule and function-call IPIs summed over CPUs") {
  using uringsim::host::ipis_from_interrupts;
  const std::string x86 =
      "           CPU0       CPU1       \n"
      "  0:         45          0   IO-APIC   2-edge      timer\n"
      "NMI:          0          0   Non-maskable interrupts\n"
      "RES:        100         20   Rescheduling interrupts\n"
      "CAL:          7          3   Function call interrupts\n"
      "TLB:          5          5   TLB shootdowns\n"
      "ERR:          0\n";
  const auto a = ipis_from_interrupts(x86);
  REQUIRE(a.has_value());
  CHECK(a->size() == 2);
  CHECK(a->at("reschedule") == 120);
  CHECK(a->at("function_call") == 10);
  const std::string arm64 =
      "           CPU0       CPU1       CPU2\n"
      " 11:       1000       2000       3000     GICv3  27 Level     arch_timer\n"
      "IPI0:        10         20         30       Rescheduling interrupts\n"
      "IPI1:         1          2          3       Function call interrupts\n"
      "IPI2:         0          0          0       CPU stop interrupts\n";
  const auto b = ipis_from_interrupts(arm64);
  REQUIRE(b.has_value());
  CHECK(b->at("reschedule") == 60);
  CHECK(b->at("function_call") == 6);
  CHECK_FALSE(ipis_from_interrupts("           CPU0\n  0:  5  IO-APIC timer\n").has_value());
  CHECK_FALSE(ipis_from_interrupts("").has_value());
  // This machine's: the counters only grow.
  const auto now = uringsim::host::machine_ipis();
  if (now) CHECK(now->count("reschedule") + now->count("function_call") >= 1);
}

TEST_CASE("host: the echo runner measures round trips consistent with its window") {
  if (!host_available()) return;
  const auto dir = fresh_dir("host-echo");
  const std::string sc = write_scenario(dir, "echo10", echo_workload());
  const auto r = run_cli("host " + sc + " --quiet --out " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const json res = read_json(dir / "out" / "results.json");
  check_window_consistent(res);
  CHECK(res.at("/echo/round_trips_window"_json_pointer) == res.at("/window/completions"_json_pointer));
  CHECK(res.at("/echo/connections"_json_pointer) == 10);
  CHECK(res.at("/echo/failed_ops"_json_pointer) == 0);
  // The server and both client threads ran, under the simulator's class names.
  CHECK(res.at("/cpu/by_thread"_json_pointer).contains("io_uring_echo_s_pct"));
  CHECK(res.at("/cpu/by_thread"_json_pointer).contains("client_pct"));
  // Each connection has at most one message in flight.
  CHECK(res.at("/requests/in_flight_at_end"_json_pointer).get<int>() <= 10);
  CHECK(res.at("/scenario/workload/connections"_json_pointer) == 10);
  const json info = read_json(dir / "out" / "run_info.json");
  check_run_info(info);
  CHECK(info.at("ignored_fields").empty());
}

TEST_CASE("host: the nop runner, inline: NOPs complete without io-wq") {
  if (!host_available()) return;
  const auto dir = fresh_dir("host-nop-inline");
  const std::string sc = write_scenario(dir, "nop8", {{"type", "nop"}, {"depth", 8}, {"force_async", false}});
  const auto r = run_cli("host " + sc + " --quiet --out " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const json res = read_json(dir / "out" / "results.json");
  check_window_consistent(res);
  CHECK(res.at("/nop/depth"_json_pointer) == 8);
  CHECK(res.at("/nop/force_async"_json_pointer) == false);
  CHECK(res.at("/nop/batches_window"_json_pointer).get<std::uint64_t>() > 0);
  CHECK(res.at("/nop/failed"_json_pointer) == 0);
  // Whole batches only: nothing is left in flight.
  CHECK(res.at("/requests/in_flight_at_end"_json_pointer) == 0);
  CHECK(res.at("/cpu/by_thread"_json_pointer).contains("nop_test_pct"));
  CHECK(res.at("/iowq/workers_peak"_json_pointer) == 0);
  check_run_info(read_json(dir / "out" / "run_info.json"));
}

TEST_CASE("host: the nop runner, IOSQE_ASYNC: every NOP goes through io-wq workers") {
  if (!host_available()) return;
  const auto dir = fresh_dir("host-nop-async");
  const std::string sc = write_scenario(dir, "nop8a", {{"type", "nop"}, {"depth", 8}, {"force_async", true}});
  const auto r = run_cli("host " + sc + " --quiet --out " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const json res = read_json(dir / "out" / "results.json");
  check_window_consistent(res);
  CHECK(res.at("/nop/force_async"_json_pointer) == true);
  CHECK(res.at("/requests/in_flight_at_end"_json_pointer) == 0);
  CHECK(res.at("/iowq/workers_peak"_json_pointer).get<double>() >= 1);
  CHECK(res.at("/gauges/iowq.workers/max"_json_pointer).get<double>() >= 1);
  CHECK(res.at("/cpu/by_thread"_json_pointer).contains("iou-wrk_pct"));
}

TEST_CASE("host: a model-only field is refused, naming it, and nothing is written") {
  const auto dir = fresh_dir("host-model-field");
  const std::string sc = write_scenario(dir, "era", echo_workload());
  const auto r = run_cli("host " + sc + " --set kernel.era=5.15 --quiet --out " + (dir / "out").string());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("/kernel/era: \"5.15\" is a model-only field") != std::string::npos);
  CHECK(r.output.find("--ignore-model-fields") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("host: --ignore-model-fields runs anyway and lists the field in run_info.json") {
  if (!host_available()) return;
  const auto dir = fresh_dir("host-ignore");
  const std::string sc = write_scenario(dir, "era", echo_workload());
  const auto r = run_cli("host " + sc + " --set kernel.era=5.15 --ignore-model-fields --quiet --out " +
                         (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const json info = read_json(dir / "out" / "run_info.json");
  REQUIRE(info.at("ignored_fields").size() == 1);
  CHECK(info.at("ignored_fields")[0].at("path") == "/kernel/era");
  CHECK(info.at("ignored_fields")[0].at("value") == "5.15");
  CHECK_FALSE(info.at("ignored_fields")[0].at("why").get<std::string>().empty());
  check_window_consistent(read_json(dir / "out" / "results.json"));
}

TEST_CASE("host: a server_cpu beyond the online CPUs is bad input") {
  const auto dir = fresh_dir("host-server-cpu");
  const std::string sc = write_scenario(dir, "cpu", echo_workload());
  const auto r =
      run_cli("host " + sc + " --set workload.server_cpu=" + nproc() + " --out " + (dir / "out").string());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("/workload/server_cpu") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("host: --target is refused for the echo workload") {
  const auto dir = fresh_dir("host-target");
  const std::string sc = write_scenario(dir, "tgt", echo_workload());
  const auto r = run_cli("host " + sc + " --target /tmp/x --out " + (dir / "out").string());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--target applies only to fio workloads") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("host: --wait-speed without --wait-quiet is bad input, nothing written") {
  const auto dir = fresh_dir("host-wait-speed");
  const std::string sc = write_scenario(dir, "ws", echo_workload());
  const auto r = run_cli("host " + sc + " --wait-speed 0.5 --out " + (dir / "out").string());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--wait-speed needs --wait-quiet") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("host: --wait-speed waits for the CPU speed probe, and runs anyway after --wait-quiet, saying so") {
  if (!host_available()) return;
  const auto dir = fresh_dir("host-wait-speed-run");
  const std::string sc = write_scenario(dir, "ws", echo_workload(), 50);
  // No CPU adds in 1e-6 ns: it waits the whole second, then runs; the record says it was not quiet.
  auto r = run_cli("host " + sc + " --wait-quiet 1 --wait-speed 0.000001 --quiet --out " +
                   (dir / "slow").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  json q = read_json(dir / "slow" / "run_info.json").at("quiet_wait");
  INFO(q.dump());
  CHECK(q.at("quiet") == false);
  CHECK(q.at("waited_s").get<double>() >= 1.0);
  CHECK(q.at("samples").get<int>() >= 2);
  CHECK(q.at("max_ns_per_add").get<double>() == Approx(1e-6));
  // The probe is taken only after a sample where other processes were quiet (not, say, while the
  // test suite runs beside it); where it was, it read more than the bound.
  if (!q.at("ns_per_add").is_null()) CHECK(q.at("ns_per_add").get<double>() > 1e-6);
  // Any CPU adds within 100 ns: one sample does (unless other processes were busy meanwhile).
  r = run_cli("host " + sc + " --wait-quiet 5 --wait-speed 100 --quiet --out " + (dir / "fast").string());
  REQUIRE(r.exit_code == 0);
  q = read_json(dir / "fast" / "run_info.json").at("quiet_wait");
  if (q.at("other_cpu_pct").get<double>() < 10) {
    CHECK(q.at("quiet") == true);
    CHECK(q.at("ns_per_add").get<double>() <= 100);
  }
}

TEST_CASE("host: the io_uring availability check names what is missing") {
  using uringsim::host::io_uring_unavailable_reason;
  CHECK(io_uring_unavailable_reason(0, 0).empty());
  CHECK(io_uring_unavailable_reason(2, EPERM).find("kernel.io_uring_disabled = 2") != std::string::npos);
  CHECK(io_uring_unavailable_reason(1, EPERM).find("kernel.io_uring_group") != std::string::npos);
  CHECK(io_uring_unavailable_reason(0, EPERM).find("seccomp") != std::string::npos);
  CHECK(io_uring_unavailable_reason(-1, ENOSYS).find("CONFIG_IO_URING") != std::string::npos);
  CHECK(io_uring_unavailable_reason(0, ENOMEM).find(std::strerror(ENOMEM)) != std::string::npos);

  // A probe that lists NOP and SEND as supported, RECV not.
  const unsigned n = IORING_OP_RECV + 1;
  std::vector<unsigned char> mem(sizeof(io_uring_probe) + n * sizeof(io_uring_probe_op), 0);
  auto* probe = reinterpret_cast<io_uring_probe*>(mem.data());
  probe->last_op = static_cast<__u8>(n - 1);
  probe->ops_len = static_cast<__u8>(n);
  probe->ops[IORING_OP_NOP].flags = IO_URING_OP_SUPPORTED;
  probe->ops[IORING_OP_SEND].flags = IO_URING_OP_SUPPORTED;
  const auto missing = uringsim::host::missing_ops(*probe, {IORING_OP_NOP, IORING_OP_RECV, IORING_OP_SEND});
  REQUIRE(missing.size() == 1);
  CHECK(missing[0] == "IORING_OP_RECV");
  // An op past the probe's last one is missing too.
  CHECK(uringsim::host::missing_ops(*probe, {IORING_OP_POLL_ADD, IORING_OP_RECV + 5}).size() == 2);
}

TEST_CASE("host: SIGTERM mid-run exits 143, writes nothing and leaves no process behind") {
  if (!host_available()) return;
  const auto dir = fresh_dir("host-sigterm");
  const std::string sc = write_scenario(dir, "long", echo_workload(), 20000);
  const std::string out = (dir / "out").string();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execl(URINGSIM_EXE, URINGSIM_EXE, "host", sc.c_str(), "--quiet", "--out", out.c_str(), nullptr);
    ::_exit(127);
  }
  // Wait (bounded) until the run is under way: its server thread exists.
  bool running = false;
  for (int i = 0; i < 200 && !running; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::error_code ec;
    for (const auto& t : fs::directory_iterator(fmt::format("/proc/{}/task", pid), ec))
      if (slurp(t.path() / "comm").rfind("io_uring_echo_s", 0) == 0) running = true;
  }
  CHECK(running);
  REQUIRE(::kill(pid, SIGTERM) == 0);
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 300 && done == 0; ++i) {  // bounded: kill it if it does not stop
    done = ::waitpid(pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL("uringsim host did not stop within 15 s of SIGTERM");
  }
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 143);
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(fmt::format("/proc/{}", pid)));
}

TEST_CASE("host: the guard turns SIGTERM into a stop and restores the previous handler") {
  using uringsim::host::RunGuard;
  struct sigaction before {};
  ::sigaction(SIGTERM, nullptr, &before);
  {
    RunGuard guard(30);
    CHECK_FALSE(guard.stop_requested());
    ::raise(SIGTERM);  // would end the test process without the guard
    CHECK(guard.stop_requested());
    CHECK(guard.signal() == SIGTERM);
    CHECK_FALSE(guard.sleep_until(RunGuard::Clock::now() + std::chrono::seconds(30)));  // returns at once
    CHECK_THROWS_AS(guard.throw_if_aborted(), uringsim::host::Interrupted);
    try {
      guard.throw_if_aborted();
    } catch (const uringsim::host::Interrupted& e) {
      CHECK(e.exit_code() == 143);
    }
  }
  struct sigaction after {};
  ::sigaction(SIGTERM, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);
}

TEST_CASE("host: the guard's time limit stops the run and counts as a failure") {
  using uringsim::host::RunGuard;
  RunGuard guard(0.05);
  // Bounded wait for the watchdog (it fires after 50 ms; 10 s is only a bound).
  guard.sleep_until(RunGuard::Clock::now() + std::chrono::seconds(10));
  CHECK(guard.stop_requested());
  CHECK(guard.timed_out());
  CHECK(guard.signal() == 0);
  CHECK_THROWS_WITH(guard.throw_if_aborted(), Catch::Contains("hard time limit"));
}

TEST_CASE(
    "host: /proc parsing: thread classes, the machine's busy time, the nominal clock, the kernel version") {
  using namespace uringsim::host;
  CHECK(thread_class("iou-wrk-1234") == "iou-wrk");
  CHECK(thread_class("iou-sqp-99") == "iou-sqp");
  CHECK(thread_class("client-3") == "client");
  CHECK(thread_class("io_uring_echo_s") == "io_uring_echo_s");
  CHECK(thread_class("nop_test") == "nop_test");
  CHECK(thread_class("a-b") == "a-b");
  CHECK(thread_class("x-") == "x-");
  // user nice system idle iowait irq softirq steal guest guest_nice: all but idle, iowait, guest*.
  CHECK(busy_ticks_from_stat_line("cpu  100 2 30 5000 40 5 6 7 50 1") == 100 + 2 + 30 + 5 + 6 + 7);
  CHECK_THROWS(busy_ticks_from_stat_line("intr 1 2 3"));
  CHECK(nominal_ghz("model name\t: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz\ncpu MHz\t\t: 3000.0\n") ==
        std::make_pair(2.1, std::string("model name")));
  CHECK(nominal_ghz("model name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2450.000\n") ==
        std::make_pair(2.45, std::string("cpu MHz")));
  CHECK(nominal_ghz("processor : 0\n").second.empty());
  CHECK(parse_kernel_version("6.18.44-fc-v973") == std::make_pair(6, 18));
  CHECK(parse_kernel_version("garbage") == std::make_pair(0, 0));

  // This process: its own thread is listed with CPU time, a busy thread's time grows.
  const auto tasks = list_tasks();
  REQUIRE_FALSE(tasks.empty());
  const auto self =
      std::find_if(tasks.begin(), tasks.end(), [](const TaskStats& t) { return t.tid == ::gettid(); });
  REQUIRE(self != tasks.end());
  volatile double x = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  const auto later = list_tasks();
  const auto self2 =
      std::find_if(later.begin(), later.end(), [](const TaskStats& t) { return t.tid == ::gettid(); });
  REQUIRE(self2 != later.end());
  CHECK(self2->cpu_ns > self->cpu_ns);
  CHECK(process_cpu_ns() >= self2->cpu_ns / 2);  // getrusage's microseconds vs the thread clock
  CHECK(machine_busy_ns() > 0);
}

namespace {
// This thread's entry in /proc/self/task.
uringsim::host::TaskStats self_now() {
  for (const auto& t : uringsim::host::list_tasks())
    if (t.tid == ::gettid()) return t;
  FAIL("this thread is not listed");
  return {};
}
}  // namespace

TEST_CASE("host: one affinity setter pins or allows CPUs and each caller names a refused CPU") {
  using namespace uringsim::host;
  cpu_set_t saved;
  REQUIRE(::sched_getaffinity(0, sizeof saved, &saved) == 0);
  std::vector<int> allowed;
  for (int c = 0; c < CPU_SETSIZE && allowed.size() < 2; ++c)
    if (CPU_ISSET(c, &saved)) allowed.push_back(c);
  const int outside = static_cast<int>(::sysconf(_SC_NPROCESSORS_CONF)) + 8;  // no such CPU
  // In a thread of its own: the test's thread keeps its affinity.
  std::thread([&] {
    CHECK(set_this_thread_cpus({allowed[0]}) == 0);
    cpu_set_t now;
    REQUIRE(::sched_getaffinity(0, sizeof now, &now) == 0);
    CHECK(CPU_COUNT(&now) == 1);
    CHECK(CPU_ISSET(allowed[0], &now));
    if (allowed.size() == 2) {
      CHECK(set_this_thread_cpus({allowed[0], allowed[1]}) == 0);
      REQUIRE(::sched_getaffinity(0, sizeof now, &now) == 0);
      CHECK(CPU_COUNT(&now) == 2);
    }
    CHECK(set_this_thread_cpus({outside}) == EINVAL);
    CHECK_THROWS_WITH(
        pin_this_thread(outside, "/workload/server_cpu"),
        Catch::StartsWith("/workload/server_cpu: cannot pin to CPU " + std::to_string(outside)));
    // A set the kernel refuses has no CPU it may run on.
    CHECK_THROWS_WITH(calib::allow_cpus({outside, outside + 1}),
                      Catch::StartsWith(fmt::format("calibrate: cannot allow a thread to CPU {} and {}",
                                                    outside, outside + 1)));
  }).join();
}

TEST_CASE("host: a thread's moves to another CPU are read from /proc (se.nr_migrations), and summed") {
  using namespace uringsim::host;
  auto pin = [](int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    REQUIRE(::sched_setaffinity(0, sizeof set, &set) == 0);
  };
  cpu_set_t saved;
  REQUIRE(::sched_getaffinity(0, sizeof saved, &saved) == 0);
  std::vector<int> allowed;  // two CPUs this thread may run on
  for (int c = 0; c < CPU_SETSIZE && allowed.size() < 2; ++c)
    if (CPU_ISSET(c, &saved)) allowed.push_back(c);
  if (allowed.size() < 2) return;  // needs two CPUs
  pin(allowed[0]);
  const TaskStats before = self_now();
  REQUIRE(before.nr_migrations.has_value());
  pin(allowed[1]);  // moves this thread at once
  pin(allowed[0]);
  const TaskStats after = self_now();
  REQUIRE(::sched_setaffinity(0, sizeof saved, &saved) == 0);
  REQUIRE(after.nr_migrations.has_value());
  CHECK(*after.nr_migrations >= *before.nr_migrations + 2);

  SchedCounts sum;
  sum.add_thread("t", after, &before);
  CHECK(sum.migrations == *after.nr_migrations - *before.nr_migrations);
  sum.add_thread("t", after, nullptr);  // born in the window: all of its moves
  CHECK(sum.migrations == 2 * *after.nr_migrations - *before.nr_migrations);
  TaskStats unknown = after;
  unknown.nr_migrations.reset();
  sum.add_thread("t", unknown, &before);
  CHECK_FALSE(sum.migrations.has_value());
  CHECK(sum.run_delay_ns_by_class.has_value());  // the other count stays known
}

TEST_CASE("host: a thread's time waiting for its CPU is read from /proc (schedstat run_delay), and summed") {
  using namespace uringsim::host;
  cpu_set_t saved;
  REQUIRE(::sched_getaffinity(0, sizeof saved, &saved) == 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &saved)) ++cpu;
  REQUIRE(cpu < CPU_SETSIZE);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  const TaskStats before = self_now();
  REQUIRE(before.run_delay_ns.has_value());
  // This thread and a helper spin 200 ms each on one CPU: each waits while the other runs.
  auto spin = [] {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (std::chrono::steady_clock::now() < end) {
    }
  };
  REQUIRE(::sched_setaffinity(0, sizeof one, &one) == 0);
  bool helper_pinned = false;  // Catch2's assertions stay on the test's thread
  std::thread helper([&] {
    helper_pinned = ::sched_setaffinity(0, sizeof one, &one) == 0;
    spin();
  });
  spin();
  helper.join();
  REQUIRE(helper_pinned);
  REQUIRE(::sched_setaffinity(0, sizeof saved, &saved) == 0);
  const TaskStats after = self_now();
  REQUIRE(after.run_delay_ns.has_value());
  CHECK(*after.run_delay_ns - *before.run_delay_ns > 20'000'000);  // fair sharing: about 100 ms

  SchedCounts sum;
  sum.add_thread("t", after, &before);
  REQUIRE(sum.run_delay_ns_by_class.has_value());
  CHECK(sum.run_delay_ns_by_class->at("t") ==
        static_cast<double>(*after.run_delay_ns - *before.run_delay_ns));
  TaskStats unknown = after;
  unknown.run_delay_ns.reset();
  sum.add_thread("t", unknown, &before);
  CHECK_FALSE(sum.run_delay_ns_by_class.has_value());
}

TEST_CASE("host: model-only fields: defaults pass, each changed model field is named") {
  using namespace uringsim::host;
  MachineInfo m;
  m.kernel_release = "6.18.0";
  m.kernel_major = 6;
  m.kernel_minor = 18;
  m.nproc = 2;
  const std::string base =
      R"({"name": "m", "machine": {"cores": 2}, "workload": {"type": "echo", "connections": 1, "client_placement": "local"}})";
  const auto ok = uringsim::config::load_scenario_text(base, "t.json");
  CHECK(model_only_fields(ok, m).empty());
  CHECK(check_model_fields(ok, m, false).empty());

  uringsim::config::LoadOptions lo;
  lo.sets = {"kernel.async_mode=blocking", "kernel.iowq.idle_timeout_ms=10",
             "costs.net_one_way_ns=1",     "device.parallelism=4",
             "machine.cores=64",           "workload.client_placement=remote",
             "kernel.epoll_wake=plain",    "kernel.async_mode=hybrid"};  // hybrid is what the kernel does
  const auto bad = uringsim::config::load_scenario_text(base, "t.json", lo);
  std::vector<std::string> paths;
  for (const auto& f : model_only_fields(bad, m)) paths.push_back(f.path);
  CHECK(paths == std::vector<std::string>{"/kernel/epoll_wake", "/kernel/iowq/idle_timeout_ms",
                                          "/costs/net_one_way_ns", "/device/parallelism", "/machine/cores",
                                          "/workload/client_placement"});
  try {
    check_model_fields(bad, m, false);
    FAIL("expected an InputError");
  } catch (const uringsim::config::InputError& e) {
    const std::string msg = e.what();
    for (const auto& p : paths) CHECK(msg.find("t.json: " + p + ": ") != std::string::npos);
  }
  const json listed = check_model_fields(bad, m, true);
  REQUIRE(listed.size() == paths.size());
  CHECK(listed[4].at("value") == 64);

  // An old kernel cannot honour even the default era.
  m.kernel_major = 5;
  const auto fields = model_only_fields(ok, m);
  REQUIRE(fields.size() == 1);
  CHECK(fields[0].path == "/kernel/era");
}

TEST_CASE("host: think-time sampler: constant, exponential mean, empirical bounds") {
  using uringsim::host::DurationSampler;
  std::mt19937_64 rng(1);
  CHECK(DurationSampler(json{{"kind", "constant"}, {"value_us", 5}}).sample_ns(rng) == 5000);
  const DurationSampler e(json{{"kind", "exponential"}, {"mean_us", 10}});
  const DurationSampler l(json{{"kind", "lognormal"}, {"mean_us", 10}, {"sigma", 0.5}});
  double se = 0, sl = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    se += e.sample_ns(rng);
    sl += l.sample_ns(rng);
  }
  CHECK(se / n == Approx(10000).epsilon(0.02));
  CHECK(sl / n == Approx(10000).epsilon(0.02));
  const DurationSampler emp(json{{"kind", "empirical"}, {"points_us", {{1, 0.5}, {3, 1.0}}}});
  for (int i = 0; i < 1000; ++i) {
    const double v = emp.sample_ns(rng);
    CHECK((v >= 1000 && v <= 3000));
  }
  CHECK(emp.mean_ns() == Approx(0.5 * 1000 + 0.5 * 2000));
}

TEST_CASE("results schema: a good document passes and each broken one is reported") {
  using uringsim::analysis::check_results;
  json good = {
      {"source", "host"},
      {"tool", {{"name", "uringsim"}, {"version", "0"}}},
      {"scenario", json::object()},
      {"window",
       {{"start_ms", 50}, {"end_ms", 250}, {"seconds", 0.2}, {"completions", 10}, {"submitted", 10}}},
      {"throughput", {{"ops_per_s", 50.0}}},
      {"latency_us", {{"count", 10}, {"mean", 1.0}, {"p50", 1.0}, {"p99", 2.0}}},
      {"requests", {{"submitted", 11}, {"completed", 10}, {"failed", 0}, {"in_flight_at_end", 1}}},
      {"cpu", {{"total_pct", 10.0}, {"by_thread", {{"client_pct", 10.0}}}}}};
  CHECK(check_results(good).empty());

  auto problems_with = [&](const std::function<void(json&)>& edit) {
    json j = good;
    edit(j);
    return check_results(j);
  };
  auto names = [](const std::vector<std::string>& p, const std::string& what) {
    return std::any_of(p.begin(), p.end(),
                       [&](const std::string& s) { return s.find(what) != std::string::npos; });
  };
  CHECK(names(problems_with([](json& j) { j.erase("source"); }), "/source: missing"));
  CHECK(names(problems_with([](json& j) { j["source"] = "guess"; }), "/source"));
  CHECK(names(problems_with([](json& j) { j["window"]["seconds"] = 0; }), "/window/seconds"));
  CHECK(names(problems_with([](json& j) { j["throughput"]["ops_per_s"] = 51.0; }), "/throughput/ops_per_s"));
  CHECK(names(problems_with([](json& j) { j["requests"]["completed"] = "ten"; }), "/requests/completed"));
  CHECK(names(problems_with([](json& j) { j["window"]["completions"] = -1; }), "/window/completions"));
  CHECK(names(problems_with([](json& j) { j["cpu"].erase("by_thread"); }), "/cpu/by_thread: missing"));
  CHECK(names(problems_with([](json& j) { j["cpu"]["by_thread"]["x_pct"] = "a"; }), "/cpu/by_thread/x_pct"));
  CHECK(names(problems_with([](json& j) { j["latency_us"]["count"] = 9; }), "/latency_us/count"));
  CHECK(check_results(json::array()).size() == 1);
  // Nothing completed: null latencies are well-formed.
  CHECK(problems_with([](json& j) {
          j["window"]["completions"] = 0;
          j["throughput"]["ops_per_s"] = 0.0;
          j["latency_us"] = {{"count", 0}, {"mean", nullptr}, {"p50", nullptr}, {"p99", nullptr}};
        }).empty());
}

TEST_CASE("results schema: simulated runs pass it, with source simulation") {
  const std::string shorter = " --set duration_ms=20 --set warmup_ms=5";
  for (const std::string& args : {source_path("scenarios/validation/mm1.json") + shorter,
                                  source_path("scenarios/seeds/async-hybrid.json") +
                                      " --variant hybrid --set workload.connections=50" + shorter,
                                  source_path("scenarios/validation/iowq-nop.json") + shorter}) {
    const json r = run_results("host-schema-sim", args);
    const auto problems = uringsim::analysis::check_results(r);
    INFO(args);
    for (const auto& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
    CHECK(r.at("source") == "simulation");
  }
}
