// End-to-end tests of the NOP workload (scenarios/validation/iowq-nop.json, shortened): which
// path NOPs take, what a lone NOP's trip through io-wq costs, and bad input.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace testing;

namespace {
const std::string kNop = source_path("scenarios/validation/iowq-nop.json");

nlohmann::json run_nop(const std::string& name, const std::string& args) {
  return run_results(name, kNop + " --set warmup_ms=5 --set duration_ms=20 " + args);
}

double profile_pct(const nlohmann::json& r, const std::string& comm, const std::string& symbol) {
  double pct = 0;
  for (const auto& e : r["profile"]["entries"])
    if (e["comm"] == comm && e["symbol"] == symbol) pct += e["pct"].get<double>();
  return pct;
}
}  // namespace

TEST_CASE("nop: IOSQE_ASYNC NOPs are bound io-wq work, run by at most max_bound workers") {
  const auto r = run_nop("nop-async", "--variant global");
  const auto& u = r["uring"];
  CHECK(u["punted"].get<long>() == u["sqes_submitted"].get<long>());
  CHECK(u["inline_completed"].get<long>() == 0);
  CHECK(u["iowq_completed"].get<long>() == u["cqes_posted"].get<long>());
  // Ten NOPs at a time keep all four bound workers busy; none is unbound.
  CHECK(r["iowq"]["bound"]["workers_peak"].get<int>() == 4);
  CHECK(r["iowq"]["unbound"]["created"].get<int>() == 0);
  CHECK(profile_pct(r, "iou-wrk", "io_nop") > 0);
  CHECK(profile_pct(r, "nop_test", "io_nop") == 0);
  // Whole batches: at most one batch of 10 is in flight at the end.
  CHECK(r["requests"]["in_flight_at_end"].get<long>() <= 10);
}

TEST_CASE("nop: without IOSQE_ASYNC every NOP completes inline on the submitter") {
  const auto r = run_nop("nop-inline", "--variant inline");
  const auto& u = r["uring"];
  CHECK(u["punted"].get<long>() == 0);
  CHECK(u["inline_completed"].get<long>() == u["sqes_submitted"].get<long>());
  CHECK(r["iowq"]["bound"]["created"].get<int>() == 0);
  CHECK(profile_pct(r, "nop_test", "io_nop") > 0);
  CHECK(r["cpu"]["total_pct"].get<double>() == Approx(100).epsilon(0.01));
}

TEST_CASE("nop: a lone NOP's trip through io-wq pays two wake-ups (worker, then submitter)") {
  // Depth 1: the worker sleeps between NOPs and the submitter sleeps in io_uring_enter, so each
  // NOP wakes both. Removing the wake-up latency shortens the round trip by exactly two of them.
  const auto with = run_nop("nop-wake", "--variant global --set workload.depth=1");
  const auto without =
      run_nop("nop-nowake", "--variant global --set workload.depth=1 --set costs.wakeup_latency_ns=0");
  const double d_us = with["latency_us"]["mean"].get<double>() - without["latency_us"]["mean"].get<double>();
  CHECK(d_us == Approx(2 * 2.0).epsilon(0.01));
  CHECK(with["iowq"]["bound"]["workers_peak"].get<int>() == 1);
}

TEST_CASE("nop: a batch larger than the SQ ring is refused, naming the field") {
  const auto dir = fresh_dir("nop-bad");
  const auto r = run_cli("run " + kNop + " --set workload.depth=5000 --out " + dir.string());
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("/workload/depth: expected at most kernel.ring.sq_entries (4096), got 5000") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "results.json"));
}

TEST_CASE("nop: on 6.x io-wq workers inherit the pinned submitter's CPU, on 5.18 they may run elsewhere") {
  // The twin's NOP loop: one submitter pinned to CPU 0 of two, IOSQE_ASYNC NOPs one at a time.
  const std::string nop = source_path("scenarios/twin/nop.json") +
                          " --variant async --set warmup_ms=5 --set duration_ms=20 --set workload.depth=1";
  const auto today = run_results("nop-affinity-6x", nop);
  const auto before = run_results("nop-affinity-518", nop + " --set kernel.era=5.18");
  // Submitter and worker take turns on CPU 0: together at most one CPU, and nobody moves.
  CHECK(today["cpu"]["total_pct"].get<double>() <= 100.5);
  CHECK(today["per_request"]["migrations"].get<double>() == 0);
  CHECK(today["cpu"]["by_thread"]["iou-wrk_pct"].get<double>() > 10);
  // Unpinned, the worker wakes on the idle CPU 1: a cross-CPU wake-up each way, so fewer NOPs.
  CHECK(before["throughput"]["ops_per_s"].get<double>() <
        0.8 * today["throughput"]["ops_per_s"].get<double>());
  // The results' wake-up counts say the same: the wake-ups are on the waker's CPU on 6.x and on
  // the other one on 5.18.
  auto wakes = [](const nlohmann::json& r, const char* waker, const char* wakee, const char* where) {
    return r["wakeups"]["per_request"][waker][wakee][where].get<double>();
  };
  for (const auto& [waker, wakee] : {std::pair{"nop_test", "iou-wrk"}, std::pair{"iou-wrk", "nop_test"}}) {
    INFO(waker << " -> " << wakee);
    CHECK(wakes(today, waker, wakee, "on_other_cpu") == 0);
    CHECK(wakes(before, waker, wakee, "on_other_cpu") == Approx(1).epsilon(0.01));
    CHECK(wakes(before, waker, wakee, "on_waker_cpu") == 0);
  }
  // On 5.18 each NOP wakes the worker on its own CPU, and then the submitter. On 6.x, sharing
  // CPU 0, the worker wakes the submitter for most NOPs, and the submitter preempts it before it
  // sleeps: the worker is then still runnable when the next NOP is queued, and needs no wake-up.
  // The host does the same (bench/sched_trace.sh on this loop, 2026-12-06: 0.39 wake-ups of the
  // worker per NOP and 0.61 preemptions of it by the submitter).
  CHECK(wakes(today, "iou-wrk", "nop_test", "on_waker_cpu") > 0.75);
  const double preempted =
      today["context_switches"]["involuntary_by_per_request"]["iou-wrk"]["nop_test"].get<double>();
  CHECK(preempted > 0.4);
  CHECK(preempted < 0.8);
  const double worker_woken = wakes(today, "nop_test", "iou-wrk", "on_waker_cpu");
  CHECK(worker_woken > 0.1);
  CHECK(worker_woken < 0.9);
  CHECK(today["per_request"]["context_switches"].get<double>() > 2);
  CHECK(wakes(today, "nop_test", "nop_test", "total") == 0);
}

TEST_CASE("nop: on 6.x the submitter's task_work frees each NOP io-wq completed, on 5.18 the worker does") {
  // io_wq_free_work -> io_free_req queues io_req_task_complete for the submitter (6.x). NOPs have
  // no other task_work, so on 5.18 none runs at all.
  const auto today = run_nop("nop-free-6x", "--variant global --set kernel.era=6.x");
  const auto before = run_nop("nop-free-518", "--variant global --set kernel.era=5.18");
  CHECK(today["uring"]["task_work"]["runs"].get<long>() > 0);
  CHECK(today["per_request"]["task_work_runs"].get<double>() > 0);
  CHECK(before["uring"]["task_work"]["runs"].get<long>() == 0);
}

TEST_CASE("nop: on 6.x an enqueue counts an awake free worker as found, so one bound worker serves it all") {
  // Batches of 10 with up to 4 bound workers: the first enqueue wakes the idle worker, the next
  // nine find it still on the free list (awake) and neither wake nor create another. On 5.18
  // each enqueue looks for a worker the wake-up actually wakes, and all four are created. The
  // woken worker runs 20 us later, after the batch's enqueues: once it has taken an item it is
  // off the free list, and a later enqueue would create a second worker on any era.
  const std::string slow_wake = " --set costs.wakeup_latency_ns=20000";
  const auto today = run_nop("nop-first-free-6x", "--variant global --set kernel.era=6.x" + slow_wake);
  const auto before = run_nop("nop-first-free-518", "--variant global --set kernel.era=5.18" + slow_wake);
  CHECK(today["iowq"]["bound"]["workers_peak"].get<int>() == 1);
  CHECK(before["iowq"]["bound"]["workers_peak"].get<int>() == 4);
}

TEST_CASE("nop: the loop's own work per batch (app_batch_cycles) is paid once per batch by the submitter") {
  // One thread, inline NOPs, nothing else on its CPU: a batch takes depth / throughput, and the
  // extra cycles add extra / ghz ns to every batch, whatever its depth.
  const std::string nop = source_path("scenarios/twin/nop.json") +
                          " --variant inline --set warmup_ms=5 --set duration_ms=20 --set workload.depth=";
  const double extra = 1000;
  for (const int depth : {1, 32}) {
    INFO("depth " << depth);
    const std::string args = nop + std::to_string(depth);
    const std::string name = "nop-batch-" + std::to_string(depth);
    const auto without = run_results(name + "-0", args + " --set costs.app_batch_cycles=0");
    const auto with =
        run_results(name + "-1000", args + " --set costs.app_batch_cycles=" + std::to_string(extra));
    const double ghz = without["scenario"]["machine"]["ghz"].get<double>();
    const double batch_ns = depth * 1e9 / without["throughput"]["ops_per_s"].get<double>();
    const double expected = depth * 1e9 / (batch_ns + extra / ghz);
    CHECK(with["throughput"]["ops_per_s"].get<double>() == Approx(expected).epsilon(0.01));
    CHECK(profile_pct(without, "nop_test", "[app] batch loop") == 0);
    // Its share of the submitter's CPU is that of a batch's time.
    CHECK(profile_pct(with, "nop_test", "[app] batch loop") ==
          Approx(100 * (extra / ghz) / (batch_ns + extra / ghz)).epsilon(0.02));
  }
}
