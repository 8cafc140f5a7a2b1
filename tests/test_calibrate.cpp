// Calibration: the fit and the arithmetic (pure), the calibration file (strict), how a calibration
// applies to a scenario, `run --calibration` and `calibrate --quick` on this machine's kernel
// (skipped, with the reason, where io_uring is not available).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_helpers.hpp"
#include "config/calibration.hpp"
#include "config/cost_table.hpp"
#include "config/scenario.hpp"
#include "host/calibrate_derive.hpp"
#include "host/calibrate_fit.hpp"

using namespace uringsim;
using testing::fresh_dir;
using testing::run_cli;
using testing::slurp;
using testing::source_path;

namespace {

// A hand-written calibration file: seed 000's machine (64 cores, 2.5 GHz) and the given costs.
nlohmann::json calibration_doc(const nlohmann::json& costs) {
  nlohmann::json c = {{"format", "uringsim-calibration/1"},
                      {"kernel_release", "6.18.0-test"},
                      {"cpu_model", "Test CPU @ 2.50GHz"},
                      {"date", "2025-01-31T12:00:00Z"},
                      {"quick", false},
                      {"machine",
                       {{"cores", 64},
                        {"ghz", 2.5},
                        {"ghz_source", "model name"},
                        {"wake_idle_ns", 5000.0},
                        {"wake_busy_ns", nullptr},
                        {"idle_exit_ns", nullptr},
                        {"halt_poll_ns", nullptr}}},
                      {"costs", nlohmann::json::object()},
                      {"defaults_kept", nlohmann::json::array()}};
  for (const auto& [key, value] : costs.items())
    c["costs"][key] = {{"value", value},   {"unit", key.substr(key.size() - 2) == "ns" ? "ns" : "cycles"},
                       {"method", "test"}, {"samples", 1},
                       {"median", value},  {"spread", "p25-p75 0-0"}};
  return c;
}

std::string write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p.string();
}

// The InputError message of parsing `text` as a calibration named "cal.json" ("" if it parses).
std::string parse_error(const std::string& text) {
  try {
    config::parse_calibration_text(text, "cal.json");
  } catch (const config::InputError& e) {
    return e.what();
  }
  return "";
}

const char* const kQueueScenario = R"({
  "name": "q",
  "machine": {"cores": 8, "ghz": 3.0},
  "costs": {"wake_cycles": 111},
  "workload": {
    "type": "queue",
    "servers": 2,
    "arrival": {"kind": "exponential", "mean_us": 10},
    "service": {"kind": "constant", "value_us": 5}
  }
})";

// Synthetic benchmark figures (ns), roughly a 2-vCPU VM's, several rounds each.
host::calib::Measurements synthetic() {
  host::calib::Measurements m;
  auto v = [](double x) { return std::vector<double>{x * 0.98, x, x * 1.03}; };
  m.clock_read = v(20);
  m.null_syscall = v(100);
  m.futex_wake_none = v(120);
  m.enter_null = v(110);
  m.sched_yield = v(210);
  m.nop_batches = {1, 2, 4, 8, 16, 32, 64};
  m.nop_a = v(150);
  m.nop_b = v(20);
  m.app_prep = v(8);
  m.app_reap = v(30);
  m.loop_a = v(120);
  m.loop_b = v(41);
  m.spin_pair = v(10);
  m.mutex_pair = v(18);
  m.line_one_way = v(60);
  m.wake_call_idle = v(2000);
  m.wake_idle = v(6000);
  // Wake-ups after 2 us, 100 us and 1 ms of idle: 1 us more after 100 us, 5 us more after 1 ms.
  m.idle_ladder_ns = {2e3, 100e3, 1e6};
  m.wake_by_idle = {v(4000), v(5000), v(9000)};
  // The woken thread's CPU across its wait: 500 ns more woken from the other CPU after 2 us idle.
  m.wakee_cpu_by_idle = {v(1500), v(1600), v(2000)};
  m.wakee_cpu_same = v(1000);
  m.wake_busy = v(5000);
  m.wake_call_remote = v(700);
  m.wake_call_busy = v(1900);
  m.speed_ns_per_add = {0.6, 0.5, 0.9};
  // Stalls over 4 s of spinning: 400 of ~20 us, 8 of ~2 ms (a bin a quarter decade wide each).
  m.stalls.seconds = 4;
  for (int i = 0; i < 400; ++i) m.stalls.add(i % 2 ? 19e3 : 21e3);
  for (int i = 0; i < 8; ++i) m.stalls.add(2e6);
  m.pingpong_same = v(1200);
  m.wake_call_same = v(400);
  m.iowq_inline_a = v(160);
  m.iowq_inline_b = v(21);
  m.iowq_async_a = v(2300);
  m.iowq_async_b = v(430);
  m.worker_first_extra = v(4500);
  m.send_small = v(1200);
  m.send_large = v(1400);
  m.recv_small = v(1200);
  m.recv_large = v(1350);
  m.recv_eagain = v(200);
  m.epoll_wait_one = v(300);
  m.poll_add = v(240);
  m.poll_send_armed = v(1300);
  m.poll_getevents = v(220);
  m.poll_enter_null = v(140);
  m.poll_send_plain = v(1240);
  m.poll_recv_arm = v(330);
  m.poll_data = v(1330);
  m.poll_data_fixed = v(1300);
  return m;
}

host::MachineInfo synthetic_machine() {
  host::MachineInfo i;
  i.kernel_release = "6.18.0-test";
  i.cpu_model = "Test CPU";
  i.nproc = 2;
  i.ghz_nominal = 2.0;
  i.ghz_source = "cpu MHz";
  i.date = "2025-01-31T12:00:00Z";
  return i;
}

}  // namespace

TEST_CASE("calibrate fit: T(n) = a + b n separates the fixed cost of a call from the per-item cost") {
  using host::calib::fit_line;
  // Exact data: the syscall part and the per-SQE part come back.
  const std::vector<double> n = {1, 2, 4, 8, 16, 32, 64};
  std::vector<double> t;
  for (double x : n) t.push_back(308 + 58 * x);
  const auto exact = fit_line(n, t);
  CHECK(exact.a == Approx(308));
  CHECK(exact.b == Approx(58));
  // Noise of +-5 ns alternating: the fit stays close; taking T(1) as the fixed cost would not.
  std::vector<double> noisy;
  for (std::size_t i = 0; i < n.size(); ++i) noisy.push_back(t[i] + (i % 2 ? 5 : -5));
  const auto fit = fit_line(n, noisy);
  CHECK(fit.a == Approx(308).margin(6));
  CHECK(fit.b == Approx(58).margin(0.3));
  // A per-SQE cost of 0: all of it is fixed.
  const auto flat = fit_line({1, 64}, {200, 200});
  CHECK(flat.a == Approx(200));
  CHECK(flat.b == Approx(0).margin(1e-12));
  CHECK_THROWS_AS(fit_line({8, 8, 8}, {1, 2, 3}), std::invalid_argument);
  CHECK_THROWS_AS(fit_line({1, 2}, {1}), std::invalid_argument);
  CHECK_THROWS_AS(fit_line({}, {}), std::invalid_argument);
}

TEST_CASE("calibrate fit: a rise that sets in where the cache is full gives the cache's size and cost") {
  using host::calib::fit_cache;
  const std::vector<double> n = {64, 128, 256, 512, 1024};
  std::vector<double> y;
  for (double x : n) y.push_back(3000 * std::max(0.0, 1 - 190 / x));
  const auto exact = fit_cache(n, y);
  CHECK(exact.k == Approx(190));
  CHECK(exact.m == Approx(3000));
  // +-40 ns of noise: still near.
  std::vector<double> noisy;
  for (std::size_t i = 0; i < n.size(); ++i) noisy.push_back(y[i] + (i % 2 ? 40 : -40));
  const auto fit = fit_cache(n, noisy);
  CHECK(fit.k == Approx(190).margin(25));
  CHECK(fit.m == Approx(3000).margin(250));
  // Nothing rises: no cost, and the cache holds all of them.
  const auto flat = fit_cache(n, {-5, 3, -2, 0, -1});
  CHECK(flat.m == 0);
  CHECK(flat.k == 1024);
  CHECK_THROWS_AS(fit_cache({0, 64}, {1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(fit_cache({64}, {}), std::invalid_argument);
}

TEST_CASE("calibrate stats: median and quartiles by interpolation, the spread says which measure it is") {
  const auto s = host::calib::summarize({5, 1, 4, 2, 3});
  CHECK(s.n == 5);
  CHECK(s.median == 3);
  CHECK(s.p25 == 2);
  CHECK(s.p75 == 4);
  CHECK(host::calib::summarize({1, 2}).median == Approx(1.5));
  CHECK(host::calib::spread_text(s) == "p25-p75 2-4");
  CHECK_THROWS_AS(host::calib::summarize({}), std::invalid_argument);
}

TEST_CASE("calibrate derive: every cost key is measured or kept with a reason, arithmetic and clamping") {
  const auto m = synthetic();
  const auto c = host::calib::derive_calibration(m, synthetic_machine(), true);
  const auto table = config::CostTable::defaults();
  for (const auto& key : table.keys()) {
    INFO(key);
    const int kept = static_cast<int>(std::count_if(c.defaults_kept.begin(), c.defaults_kept.end(),
                                                    [&](const auto& k) { return k.first == key; }));
    CHECK(static_cast<int>(c.costs.count(key)) + kept == 1);
  }
  for (const auto& [key, reason] : c.defaults_kept) CHECK(!reason.empty());
  for (const auto& [key, e] : c.costs) {
    INFO(key);
    CHECK(e.value >= 0);
    CHECK(std::isfinite(e.value));
    CHECK(!e.method.empty());
    CHECK(e.samples == 3);
  }
  const double G = 2.0;
  // Uncontended locks are the measured pair times.
  CHECK(c.costs.at("spin_lock_fast_cycles").value == Approx(10 * G));
  CHECK(c.costs.at("mutex_fast_cycles").value == Approx(18 * G));
  // The fit's intercept less the two lock fast paths the model charges in the same io_uring_enter.
  CHECK(c.costs.at("syscall_cycles").value == Approx(150 * G - 18 * G - 10 * G));
  // The slope is shared out in the defaults' proportions, and the shares add up to it.
  const double slope = 20 * G;
  const double share_sum = c.costs.at("sqe_submit_cycles").value + c.costs.at("nop_issue_cycles").value +
                           c.costs.at("cqe_post_cycles").value;
  CHECK(share_sum == Approx(slope));
  CHECK(c.costs.at("sqe_submit_cycles").value ==
        Approx(
            slope * table.get("sqe_submit_cycles") /
            (table.get("sqe_submit_cycles") + table.get("nop_issue_cycles") + table.get("cqe_post_cycles"))));
  // Wake-up: the waker's call less FUTEX_WAKE with nobody waiting; the switch from the same-CPU
  // hand-off; the delay is what is left of the cross-CPU one-way time.
  CHECK(c.costs.at("wake_cycles").value == Approx((2000 - 120) * G));
  CHECK(c.costs.at("context_switch_cycles").value == Approx((1200 - 400 - 100) * G));
  CHECK(c.costs.at("wake_local_cycles").value == Approx((400 - 120) * G));
  CHECK(c.costs.at("schedule_noswitch_cycles").value == Approx((210 - 100) * G));
  // The delay from the shortest idle; the halted CPU's extra and where it starts from the ladder.
  // The woken thread's own part (500 ns) is taken out of it: the one-way time stays the same.
  CHECK(c.costs.at("remote_wakee_cycles").value == Approx(500 * G));
  CHECK(c.costs.at("wakeup_latency_ns").value == Approx(4000 - 2000 - (1200 - 400 - 100) - 500));
  // The io-wq intercepts (2300 - 160 = 2140 ns) hold two same-CPU hand-offs; two switches
  // and local wake-ups (2 x (700 + 280) = 1960 ns) fit in them: no remark.
  CHECK(c.costs.at("context_switch_cycles").method.find("cross-check") == std::string::npos);
  {  // a slower futex ping-pong: its switches (2 x (1700 + 280) ns) exceed the io-wq hand-offs
    auto slow = m;
    slow.pingpong_same = {2200 * 0.98, 2200, 2200 * 1.03};
    const auto cs = host::calib::derive_calibration(slow, synthetic_machine(), true);
    CHECK(cs.costs.at("context_switch_cycles")
              .method.find("cross-check: the io-wq NOP batches' two same-CPU "
                           "hand-offs") != std::string::npos);
  }
  {  // a woken thread's part larger than what the one-way time leaves (1300 ns) is capped there
    auto big = m;
    big.wakee_cpu_same = {0, 0, 0};
    const auto cb = host::calib::derive_calibration(big, synthetic_machine(), true);
    CHECK(cb.costs.at("remote_wakee_cycles").value == Approx(1300 * G));
    CHECK(cb.costs.at("wakeup_latency_ns").value == Approx(0).margin(1e-9));
  }
  // The curve: each rung's wake less the shortest idle's; no step fields any more.
  REQUIRE(c.machine.idle_exit_curve);
  const std::vector<std::pair<double, double>> curve = {{2e3, 0}, {100e3, 1000}, {1e6, 5000}};
  CHECK(*c.machine.idle_exit_curve == curve);
  CHECK(!c.machine.idle_exit_ns);
  CHECK(!c.machine.halt_poll_ns);
  CHECK(c.machine.wake_idle_ns == Approx(6000));
  CHECK(c.machine.wake_busy_ns == Approx(5000));
  // A wake onto a busy CPU that it does not preempt (no IPI): its call less the empty FUTEX_WAKE.
  CHECK(c.costs.at("wake_remote_cycles").value == Approx((700 - 120) * G));
  // A wake onto a busy CPU that it preempts (the IPI to a running CPU): likewise.
  CHECK(c.costs.at("wake_preempt_cycles").value == Approx((1900 - 120) * G));
  // The CPU speed probe: the median over the passes, recorded but not a cost.
  REQUIRE(c.machine.speed_ns_per_add);
  CHECK(*c.machine.speed_ns_per_add == Approx(0.6));
  // The null system call's median, recorded for the twin's probe of the same (not a cost).
  REQUIRE(c.machine.syscall_ns);
  CHECK(*c.machine.syscall_ns == Approx(100));
  const auto back = config::parse_calibration_text(c.to_json().dump(), "back.json");
  REQUIRE(back.machine.syscall_ns);
  CHECK(*back.machine.syscall_ns == Approx(100));
  // The CPUs' stalls: each length bin's mean and rate over all the spinning, applied to the machine
  // in place of a period.
  CHECK(!c.machine.stall_every_ns);
  REQUIRE(c.machine.stall_lengths);
  REQUIRE(c.machine.stall_lengths->size() == 2);
  CHECK((*c.machine.stall_lengths)[0].first == Approx(20e3));
  CHECK((*c.machine.stall_lengths)[0].second == Approx(100));
  CHECK((*c.machine.stall_lengths)[1].first == Approx(2e6));
  CHECK((*c.machine.stall_lengths)[1].second == Approx(2));
  // Loopback TCP: per byte averaged over send and recv; send/recv less the syscall and their bytes.
  const double byte = ((1400 - 1200) + (1350 - 1200)) / (2.0 * (16384 - 64)) * G;
  CHECK(c.costs.at("tcp_byte_cycles").value == Approx(byte));
  // Less the socket spinlock section the model takes on its own (spin_lock_fast, 10 ns here).
  CHECK(c.costs.at("tcp_send_cycles").value == Approx((1200 - 100 - 10) * G - 64 * byte));
  CHECK(c.costs.at("epoll_wait_cycles").value == Approx(300 * G));
  // io-wq: the batch slopes' difference less the spin sections, shared among the per-item entries.
  // And the task_work item that frees each request (6.x): tw_add + tw_run as derived here.
  const double item = (430 - 21) * G - host::calib::kIowqSpinSectionsPerItem * 10 * G -
                      c.costs.at("tw_add_cycles").value - c.costs.at("tw_run_cycles").value;
  CHECK(c.costs.at("iowq_prep_cycles").value + c.costs.at("iowq_enqueue_cycles").value +
            c.costs.at("iowq_get_work_cycles").value + c.costs.at("iowq_work_overhead_cycles").value ==
        Approx(item));
  CHECK(c.costs.at("file_lookup_cycles").value == Approx((1330 - 1300) * G));
  // The host runner's own code per SQE and per CQE, as timed.
  CHECK(c.costs.at("app_sqe_prep_cycles").value == Approx(8 * G));
  CHECK(c.costs.at("app_cqe_cycles").value == Approx(30 * G));
  // And once per batch: the intercept of the runner's loop less its syscall.
  CHECK(c.costs.at("app_batch_cycles").value == Approx(120 * G));
  CHECK(c.costs.at("app_batch_cycles").method.find("a = 120.0 ns") != std::string::npos);
  CHECK(c.machine.cores == 2);
  CHECK(c.quick);

  // A subtraction that goes below 0 is clamped, and the method says so.
  auto low = synthetic();
  low.nop_a = {10, 10, 10};  // less than the lock fast paths subtracted from it
  const auto clamped = host::calib::derive_calibration(low, synthetic_machine(), false);
  CHECK(clamped.costs.at("syscall_cycles").value == 0);
  CHECK(clamped.costs.at("syscall_cycles").method.find("clamped to 0") != std::string::npos);

  // With one CPU the cross-CPU entries keep their defaults, with the reason.
  auto one = synthetic();
  one.line_one_way.clear();
  one.wake_call_idle.clear();
  one.wake_idle.clear();
  one.wake_busy.clear();
  one.wake_call_remote.clear();
  one.wake_call_busy.clear();
  one.wake_by_idle.clear();
  one.tcp_rtt_cross.clear();
  one.tcp_rtt_same.clear();
  one.cross_cpu_unavailable = "only one CPU is available to this process";
  const auto single = host::calib::derive_calibration(one, synthetic_machine(), false);
  CHECK(single.costs.count("wake_cycles") == 0);
  CHECK(single.costs.count("wake_remote_cycles") == 0);
  CHECK(single.costs.count("wake_preempt_cycles") == 0);
  CHECK(!single.machine.wake_idle_ns);
  bool listed = false;
  for (const auto& [key, reason] : single.defaults_kept)
    if (key == "wakeup_latency_ns") listed = reason.find("only one CPU") != std::string::npos;
  CHECK(listed);
  // What derive produces is a valid file.
  CHECK_NOTHROW(config::parse_calibration_text(single.to_json().dump(), "single.json"));
}

TEST_CASE(
    "calibrate derive: io-wq's per-item work split into the submitter's, measured apart, and the worker's") {
  const double G = 2.0;  // synthetic_machine()'s GHz
  auto m = synthetic();
  // NOPs queued behind a worker held in an fsync: 60 ns each at the submit.
  m.iowq_queued_a = {900, 1000, 1100};
  m.iowq_queued_b = {58, 60, 62};
  m.iowq_queued_kept = 270;
  const auto c = host::calib::derive_calibration(m, synthetic_machine(), true);
  const auto cost = [&](const char* k) { return c.costs.at(k).value; };
  // The submitter's part: the queued slope less sqe_submit and its two spin sections (10 ns each).
  const double queue = 60 * G - cost("sqe_submit_cycles") - host::calib::kIowqQueuedSpinSections * 10 * G;
  REQUIRE(queue > 0);
  CHECK(cost("iowq_prep_cycles") + cost("iowq_enqueue_cycles") == Approx(queue));
  const auto table = config::CostTable::defaults();
  CHECK(cost("iowq_prep_cycles") / cost("iowq_enqueue_cycles") ==
        Approx(table.get("iowq_prep_cycles") / table.get("iowq_enqueue_cycles")));
  CHECK(c.costs.at("iowq_enqueue_cycles").method.find("held in an fsync") != std::string::npos);
  // The worker's part: the batches' per-item work less the submitter's.
  const double item = (430 - 21) * G - host::calib::kIowqSpinSectionsPerItem * 10 * G -
                      cost("tw_add_cycles") - cost("tw_run_cycles");
  REQUIRE(item - queue > 0);
  CHECK(cost("iowq_get_work_cycles") + cost("iowq_work_overhead_cycles") == Approx(item - queue));
  CHECK(c.costs.at("iowq_get_work_cycles").method.find("the worker's part") != std::string::npos);

  // A submitter's part larger than the whole per-item work leaves the worker's at 0.
  auto big = m;
  big.iowq_queued_b = {400, 400, 400};
  const auto cb = host::calib::derive_calibration(big, synthetic_machine(), true);
  CHECK(cb.costs.at("iowq_prep_cycles").value + cb.costs.at("iowq_enqueue_cycles").value > item);
  CHECK(cb.costs.at("iowq_get_work_cycles").value == 0);
  CHECK(cb.costs.at("iowq_work_overhead_cycles").value == 0);
  CHECK(cb.costs.at("iowq_work_overhead_cycles").method.find("clamped to 0") != std::string::npos);

  // Without it (an fsync that did not hold the worker), the four entries share the whole, as before,
  // and say why.
  auto none = synthetic();
  none.iowq_queued_unavailable = "the fsync did not hold the worker";
  const auto cn = host::calib::derive_calibration(none, synthetic_machine(), true);
  double sum = 0;
  for (const char* k :
       {"iowq_prep_cycles", "iowq_enqueue_cycles", "iowq_get_work_cycles", "iowq_work_overhead_cycles"}) {
    sum += cn.costs.at(k).value;
    CHECK(cn.costs.at(k).method.find("not measured (the fsync did not hold the worker)") !=
          std::string::npos);
  }
  CHECK(sum == Approx(item));
  bool kept = false;
  for (const auto& [key, reason] : cn.defaults_kept)
    if (key == "net_msg_alloc_cycles")
      kept = reason.find("the fsync did not hold the worker") != std::string::npos;
  CHECK(kept);
}

TEST_CASE("calibrate derive: a queued send's async header is what its slope has over a queued NOP's") {
  const double G = 2.0;  // synthetic_machine()'s GHz
  auto m = synthetic();
  m.iowq_queued_a = {900, 1000, 1100};
  m.iowq_queued_b = {58, 60, 62};
  m.iowq_queued_send_a = {1200, 1300, 1400};
  m.iowq_queued_send_b = {130, 140, 148};  // per round, 72, 80 and 86 ns over the NOPs
  m.iowq_queued_kept = 540;
  const auto c = host::calib::derive_calibration(m, synthetic_machine(), true);
  const auto& alloc = c.costs.at("net_msg_alloc_cycles");
  CHECK(alloc.value == Approx(80 * G));  // the median of the rounds' differences
  CHECK(alloc.samples == 3);
  CHECK(alloc.method.find("io_msg_alloc_async") != std::string::npos);
  // The kfree has no benchmark of its own: the default stays, with the reason.
  CHECK(c.costs.count("net_msg_free_cycles") == 0);
  bool kept = false;
  for (const auto& [key, reason] : c.defaults_kept)
    if (key == "net_msg_free_cycles") kept = reason.find("task_work") != std::string::npos;
  CHECK(kept);
  // Without queued sends (a calibration before them), the entry keeps its default and says why.
  auto nosend = m;
  nosend.iowq_queued_send_a.clear();
  nosend.iowq_queued_send_b.clear();
  const auto cn = host::calib::derive_calibration(nosend, synthetic_machine(), true);
  CHECK(cn.costs.count("net_msg_alloc_cycles") == 0);
  CHECK(cn.costs.count("iowq_prep_cycles") == 1);
}

TEST_CASE("calibrate derive: the kick from both sides, and when its IPI lands within the sender's part") {
  auto m = synthetic();  // the poll benchmark's armed send is 60 ns over its plain one
  auto v = [](double x) { return std::vector<double>{x * 0.98, x, x * 1.03}; };
  m.kick_send = v(31000);
  m.kick_send_plain = v(4000);
  m.kick_away = v(26000);
  m.kick_onset = v(24000);
  const double G = 2.0;
  auto c = host::calib::derive_calibration(m, synthetic_machine(), true);
  CHECK(c.costs.at("tw_notify_ipi_cycles").value == Approx((31000 - 4000 - 60) * G));
  // From the send()'s start, less the plain send(): the kick starts no later than that.
  CHECK(c.costs.at("ipi_delivery_ns").value == Approx(24000 - 4000));
  // A gap that began after the sender's kick was over is capped at its end.
  m.kick_onset = v(40000);
  c = host::calib::derive_calibration(m, synthetic_machine(), true);
  CHECK(c.costs.at("ipi_delivery_ns").value == Approx(31000 - 4000 - 60));
  // Not measured: kept, with the reason.
  m.kick_send.clear();
  c = host::calib::derive_calibration(m, synthetic_machine(), true);
  CHECK(c.costs.count("ipi_delivery_ns") == 0);
  CHECK(std::any_of(c.defaults_kept.begin(), c.defaults_kept.end(),
                    [](const auto& k) { return k.first == "ipi_delivery_ns" && !k.second.empty(); }));
}

TEST_CASE("calibration file: what to_json writes parses back to the same content") {
  auto c = host::calib::derive_calibration(synthetic(), synthetic_machine(), false);
  CHECK(!c.to_json().contains("passes"));  // derive does not know them; calibrate() records them
  c.passes = config::CalibrationPasses{8, 7, 3, 0.45, 12.5};
  const auto back = config::parse_calibration_text(c.to_json().dump(2), "c.json");
  CHECK(back.to_json() == c.to_json());
  REQUIRE(back.passes);
  CHECK(back.passes->kept == 7);
  CHECK(back.passes->dropped == 3);
  CHECK(back.passes->max_ns_per_add == 0.45);
  CHECK(back.source == "c.json");
  CHECK(back.provenance() == nlohmann::json{{"kernel_release", "6.18.0-test"},
                                            {"cpu_model", "Test CPU"},
                                            {"date", "2025-01-31T12:00:00Z"}});
}

TEST_CASE("calibration file: bad content is an error naming the file and the JSON path") {
  const auto good = calibration_doc({{"syscall_cycles", 500.0}});
  CHECK(parse_error(good.dump()).empty());
  CHECK(parse_error("{\"format\": ").find("cal.json:1:") == 0);
  auto with = [&](const std::function<void(nlohmann::json&)>& f) {
    auto d = good;
    f(d);
    return parse_error(d.dump());
  };
  CHECK(with([](auto& d) { d["extra"] = 1; }).find("cal.json: /extra: unknown key") == 0);
  CHECK(with([](auto& d) { d["machine"]["threads"] = 1; }).find("cal.json: /machine/threads: unknown key") ==
        0);
  CHECK(with([](auto& d) {
          d["costs"]["syscall_cycles"]["note"] = "x";
        }).find("cal.json: /costs/syscall_cycles/note: unknown key") == 0);
  const std::string unknown_cost =
      with([](auto& d) { d["costs"]["syscal_cycles"] = d["costs"]["syscall_cycles"]; });
  CHECK(unknown_cost.find("cal.json: /costs/syscal_cycles: unknown key (did you mean \"syscall_cycles\"?)") ==
        0);
  CHECK(with([](auto& d) {
          d["costs"]["syscall_cycles"]["unit"] = "ns";
        }).find("cal.json: /costs/syscall_cycles/unit: expected \"cycles\"") == 0);
  CHECK(with([](auto& d) {
          d["costs"]["syscall_cycles"]["value"] = -1;
        }).find("cal.json: /costs/syscall_cycles/value: expected a finite number >= 0, got -1") == 0);
  CHECK(with([](auto& d) {
          d["costs"]["syscall_cycles"]["value"] = "5";
        }).find("cal.json: /costs/syscall_cycles/value: expected a finite number") == 0);
  CHECK(with([](auto& d) {
          d["costs"]["syscall_cycles"].erase("method");
        }).find("cal.json: /costs/syscall_cycles/method: missing required field") == 0);
  CHECK(with([](auto& d) {
          d["machine"]["cores"] = 0;
        }).find("cal.json: /machine/cores: expected an integer") == 0);
  CHECK(with([](auto& d) {
          d["machine"]["ghz"] = 0;
        }).find("cal.json: /machine/ghz: expected a finite number > 0") == 0);
  CHECK(with([](auto& d) { d["format"] = "uringsim-calibration/2"; }).find("cal.json: /format: expected") ==
        0);
  CHECK(with([](auto& d) {
          d["defaults_kept"] = {{{"key", "syscall_cycles"}, {"reason", "x"}}};
        }).find("cal.json: /defaults_kept/0/key: \"syscall_cycles\" is also in /costs") == 0);
  CHECK(with([](auto& d) {
          d["defaults_kept"] = {{{"key", "no_such"}, {"reason", "x"}}};
        }).find("cal.json: /defaults_kept/0/key: expected a cost table key") == 0);
  CHECK(with([](auto& d) {
          d["machine"]["idle_exit_curve"] = {{2000, 0}, {1000, 5}};
        }).find("cal.json: /machine/idle_exit_curve/1/0: expected more than 2000") == 0);
  CHECK(with([](auto& d) {
          d["machine"]["idle_exit_curve"] = {{2000, -1}};
        }).find("cal.json: /machine/idle_exit_curve/0: expected a point [idle_ns, exit_ns]") == 0);
  CHECK(with([](auto& d) {
          d["machine"]["stall_ns"] = 20000;
        }).find("cal.json: /machine: expected stall_every_ns and stall_ns together, or neither") == 0);
  CHECK(with([](auto& d) {
          d["machine"]["stall_every_ns"] = 700000;
          d["machine"]["stall_ns"] = 20000;
          d["machine"]["stall_lengths"] = {{20000, 100}};
        }).find("cal.json: /machine: expected stall_lengths or stall_every_ns and stall_ns, not both") == 0);
  CHECK(with([](auto& d) {
          d["machine"]["stall_lengths"] = {{20000, 100}, {20000, 2}};
        }).find("cal.json: /machine/stall_lengths/1/0: expected more than 20000 (ns must increase)") == 0);
  const nlohmann::json passes = {
      {"asked", 8}, {"kept", 8}, {"dropped", 0}, {"max_ns_per_add", nullptr}, {"waited_s", 0.0}};
  CHECK(with([&](auto& d) { d["passes"] = passes; }).empty());
  CHECK(with([&](auto& d) {
          d["passes"] = passes;
          d["passes"]["kept"] = 9;
        }).find("cal.json: /passes/kept: expected at most asked (8), got 9") == 0);
  CHECK(with([&](auto& d) {
          d["passes"] = passes;
          d["passes"]["kept"] = 0;
        }).find("cal.json: /passes/kept: expected an integer from 1 to 1000, got 0") == 0);
  CHECK(with([&](auto& d) {
          d["passes"] = passes;
          d["passes"].erase("waited_s");
        }).find("cal.json: /passes/waited_s: missing required field") == 0);
  CHECK(with([&](auto& d) {
          d["passes"] = passes;
          d["passes"]["max_ns_per_add"] = -0.5;
        }).find("cal.json: /passes/max_ns_per_add: expected a finite number >= 0, got -0.5") == 0);
  CHECK(parse_error("{\"format\": 1, \"format\": 2}").find("duplicate key") != std::string::npos);
}

TEST_CASE("calibration applied: the CPUs' measured stalls become the scenario machine's") {
  auto doc = calibration_doc({});
  doc["machine"]["stall_every_ns"] = 700000;
  doc["machine"]["stall_ns"] = 20000;
  config::LoadOptions lo;
  lo.calibration = config::parse_calibration_text(doc.dump(), "cal.json");
  const auto s = config::load_scenario_text(kQueueScenario, "q.json", lo);
  CHECK(s.at("/machine/stall_every_ns") == 700000);
  CHECK(s.at("/machine/stall_ns") == 20000);
  CHECK(config::load_scenario_text(kQueueScenario, "q.json").at("/machine/stall_every_ns") == 0);
}

TEST_CASE("calibration applied: measured stall lengths replace the scenario's stall period") {
  auto doc = calibration_doc({});
  doc["machine"]["stall_lengths"] = {{20000, 100}, {2000000, 2}};
  config::LoadOptions lo;
  lo.calibration = config::parse_calibration_text(doc.dump(), "cal.json");
  auto period = nlohmann::json::parse(kQueueScenario);
  period["machine"]["stall_every_ns"] = 1000000;
  period["machine"]["stall_ns"] = 10000;
  const std::string with_period = period.dump();
  const auto s = config::load_scenario_text(with_period, "q.json", lo);
  CHECK(s.at("/machine/stall_lengths") == nlohmann::json::array({{20000, 100}, {2000000, 2}}));
  CHECK(s.at("/machine/stall_every_ns") == 0);
  CHECK(s.at("/machine/stall_ns") == 0);
  // Both ways in one scenario is an error naming the field.
  auto both = nlohmann::json::parse(with_period);
  both["machine"]["stall_lengths"] = {{20000, 100}};
  CHECK_THROWS_WITH(
      config::load_scenario_text(both.dump(), "q.json"),
      Catch::Contains("q.json: /machine/stall_every_ns: expected 0 with machine.stall_lengths"));
  // Stalls that would take half the CPU or more are refused.
  auto heavy = nlohmann::json::parse(with_period);
  heavy["machine"].erase("stall_every_ns");
  heavy["machine"].erase("stall_ns");
  heavy["machine"]["stall_lengths"] = {{1000000, 600}};
  CHECK_THROWS_WITH(config::load_scenario_text(heavy.dump(), "q.json"),
                    Catch::Contains("/machine/stall_lengths: expected stalls taking less than 0.5"));
  // Stalls so short or so frequent that the run would crawl through them are refused too.
  heavy["machine"]["stall_lengths"] = {{0, 1e9}};
  CHECK_THROWS_WITH(config::load_scenario_text(heavy.dump(), "q.json"),
                    Catch::Contains("/machine/stall_lengths/0/0: expected a stall of at least 1000 ns"));
  heavy["machine"]["stall_lengths"] = {{1000, 2e5}};
  CHECK_THROWS_WITH(config::load_scenario_text(heavy.dump(), "q.json"),
                    Catch::Contains("/machine/stall_lengths: expected at most 100000 stalls per second"));
  auto fast = nlohmann::json::parse(kQueueScenario);
  fast["machine"]["stall_every_ns"] = 1;
  fast["machine"]["stall_ns"] = 0.5;
  CHECK_THROWS_WITH(config::load_scenario_text(fast.dump(), "q.json"),
                    Catch::Contains("/machine/stall_every_ns: expected 0 (none) or at least 10000 ns"));
}

TEST_CASE(
    "calibration applied: an idle-exit curve replaces the scenario's halt-poll step, and both given is an "
    "error") {
  auto doc = calibration_doc({});
  doc["machine"]["idle_exit_curve"] = {{2000, 0}, {100000, 9000}};
  config::LoadOptions lo;
  lo.calibration = config::parse_calibration_text(doc.dump(), "cal.json");
  auto text = nlohmann::json::parse(kQueueScenario);
  text["machine"]["idle_exit_ns"] = 30000;
  text["machine"]["halt_poll_ns"] = 5000;
  const auto s = config::load_scenario_text(text.dump(), "q.json", lo);
  CHECK(s.at("/machine/idle_exit_curve") == nlohmann::json::parse("[[2000, 0], [100000, 9000]]"));
  CHECK(s.at("/machine/idle_exit_ns") == 0);
  CHECK(s.at("/machine/halt_poll_ns") == 0);
  // Without a calibration, a scenario that gives both ways is refused, naming the field.
  text["machine"]["idle_exit_curve"] = {{2000, 0}, {100000, 9000}};
  try {
    config::load_scenario_text(text.dump(), "q.json");
    FAIL("expected an InputError");
  } catch (const config::InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("/machine/idle_exit_ns: expected 0 with machine.idle_exit_curve"));
  }
  // Points out of order are refused by the schema.
  text["machine"].erase("idle_exit_ns");
  text["machine"].erase("halt_poll_ns");
  text["machine"]["idle_exit_curve"] = {{2000, 0}, {2000, 9000}};
  try {
    config::load_scenario_text(text.dump(), "q.json");
    FAIL("expected an InputError");
  } catch (const config::InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("/machine/idle_exit_curve/1/0: expected more than 2000"));
  }
}

TEST_CASE(
    "calibration applied: machine replaced, costs fill the defaults, the scenario's costs and --set win") {
  auto cal = config::parse_calibration_text(
      calibration_doc({{"syscall_cycles", 5000.0}, {"wake_cycles", 4000.0}, {"wakeup_latency_ns", 7000.0}})
          .dump(),
      "cal.json");
  config::LoadOptions lo;
  lo.calibration = cal;
  const auto s = config::load_scenario_text(kQueueScenario, "q.json", lo);
  CHECK(s.at("/machine/cores") == 64);  // the scenario said 8
  CHECK(s.at("/machine/ghz") == 2.5);
  CHECK(s.costs.get("syscall_cycles") == 5000);     // calibrated
  CHECK(s.costs.get("wakeup_latency_ns") == 7000);  // calibrated
  CHECK(s.costs.get("wake_cycles") == 111);         // the scenario's own entry wins
  CHECK(s.costs.get("tcp_send_cycles") == config::CostTable::defaults().get("tcp_send_cycles"));
  CHECK(s.at("/costs/syscall_cycles") == 5000);  // what results.json shows
  CHECK(s.calibration == cal.provenance());

  lo.sets = {"costs.syscall_cycles=42", "machine.cores=4"};
  const auto set = config::load_scenario_text(kQueueScenario, "q.json", lo);
  CHECK(set.costs.get("syscall_cycles") == 42);
  CHECK(set.at("/machine/cores") == 4);
  CHECK(set.costs.get("wakeup_latency_ns") == 7000);

  const auto plain = config::load_scenario_text(kQueueScenario, "q.json");
  CHECK(plain.calibration.is_null());
  CHECK(plain.at("/machine/cores") == 8);
  CHECK(plain.costs.get("syscall_cycles") == config::CostTable::defaults().get("syscall_cycles"));
}

TEST_CASE(
    "calibration applied: one made before wake_preempt_cycles existed charges its wake_cycles there, one "
    "that measured it, or kept its default, is taken as it is") {
  auto plain = nlohmann::json::parse(kQueueScenario);
  plain.erase("costs");
  const std::string scenario = plain.dump();
  config::LoadOptions lo;
  lo.calibration =
      config::parse_calibration_text(calibration_doc({{"wake_cycles", 4000.0}}).dump(), "old.json");
  CHECK(config::load_scenario_text(scenario, "q.json", lo).costs.get("wake_preempt_cycles") == 4000);
  // The scenario's own wake_cycles is the one charged, as it was before.
  CHECK(config::load_scenario_text(kQueueScenario, "q.json", lo).costs.get("wake_preempt_cycles") == 111);
  lo.calibration = config::parse_calibration_text(
      calibration_doc({{"wake_cycles", 4000.0}, {"wake_preempt_cycles", 9000.0}}).dump(), "new.json");
  CHECK(config::load_scenario_text(scenario, "q.json", lo).costs.get("wake_preempt_cycles") == 9000);
  auto kept = calibration_doc({{"wake_cycles", 4000.0}});
  kept["defaults_kept"].push_back({{"key", "wake_preempt_cycles"}, {"reason", "not measured"}});
  lo.calibration = config::parse_calibration_text(kept.dump(), "kept.json");
  CHECK(config::load_scenario_text(scenario, "q.json", lo).costs.get("wake_preempt_cycles") ==
        config::CostTable::defaults().get("wake_preempt_cycles"));
  // The scenario's own entry wins, as for any cost.
  plain["costs"]["wake_preempt_cycles"] = 777;
  lo.calibration =
      config::parse_calibration_text(calibration_doc({{"wake_cycles", 4000.0}}).dump(), "old.json");
  CHECK(config::load_scenario_text(plain.dump(), "q.json", lo).costs.get("wake_preempt_cycles") == 777);
}

TEST_CASE("run --calibration: a much larger syscall_cycles lowers seed 000 hybrid's throughput") {
  const auto dir = fresh_dir("calibrate-syscall");
  const std::string cal =
      write(dir / "slow-syscalls.json", calibration_doc({{"syscall_cycles", 1e6}}).dump(2));
  const std::string args = source_path("scenarios/seeds/async-hybrid.json") +
                           " --variant hybrid --set duration_ms=20 --set warmup_ms=10";
  const auto base = testing::run_results("calibrate-syscall-base", args);
  const auto slow = testing::run_results("calibrate-syscall-slow", args + " --calibration " + cal);
  CHECK(slow.at("scenario").at("costs").at("syscall_cycles") == 1e6);
  CHECK(slow.at("scenario").at("machine").at("cores") == 64);
  CHECK(slow.at("throughput").at("ops_per_s").get<double>() <
        0.9 * base.at("throughput").at("ops_per_s").get<double>());
  CHECK(slow.at("calibration") == nlohmann::json{{"kernel_release", "6.18.0-test"},
                                                 {"cpu_model", "Test CPU @ 2.50GHz"},
                                                 {"date", "2025-01-31T12:00:00Z"}});
  CHECK(!base.contains("calibration"));
  // Deterministic: the provenance comes from the file, not from the clock.
  const auto again = fresh_dir("calibrate-syscall-again");
  REQUIRE(run_cli("run " + args + " --calibration " + cal + " --quiet --out " + again.string()).exit_code ==
          0);
  const auto first = testing::test_dir("calibrate-syscall-slow") / "results.json";
  CHECK(slurp(again / "results.json") == slurp(first));
}

TEST_CASE("run --calibration: a scenario's own costs entry wins over the calibration") {
  const auto dir = fresh_dir("calibrate-own-costs");
  const std::string cal = write(dir / "cal.json", calibration_doc({{"syscall_cycles", 1e6}}).dump(2));
  auto scenario = nlohmann::json::parse(slurp(source_path("scenarios/seeds/async-hybrid.json")));
  scenario["costs"] = {{"syscall_cycles", 750}};
  const std::string path = write(dir / "own-costs.json", scenario.dump(2));
  const std::string args = path + " --variant hybrid --set duration_ms=20 --set warmup_ms=10";
  const auto own = testing::run_results("calibrate-own-costs-cal", args + " --calibration " + cal);
  const auto base = testing::run_results("calibrate-own-costs-base", args);
  CHECK(own.at("scenario").at("costs").at("syscall_cycles") == 750);
  // The calibration's machine is the scenario's and its one cost is overridden: the same run.
  CHECK(own.at("throughput") == base.at("throughput"));
  CHECK(own.contains("calibration"));
  // --set wins too.
  const auto set =
      testing::run_results("calibrate-own-costs-set", source_path("scenarios/seeds/async-hybrid.json") +
                                                          " --variant hybrid --set duration_ms=20 "
                                                          "--set warmup_ms=10 --set "
                                                          "costs.syscall_cycles=900 --calibration " +
                                                          cal);
  CHECK(set.at("scenario").at("costs").at("syscall_cycles") == 900);
}

TEST_CASE(
    "run --calibration: a bad calibration file is exit 2 naming the file and JSON path, nothing written") {
  const auto dir = fresh_dir("calibrate-bad");
  const auto good = calibration_doc({{"syscall_cycles", 500.0}});
  struct Case {
    std::string name, text, expected;
  };
  auto edited = [&](const std::function<void(nlohmann::json&)>& f) {
    auto d = good;
    f(d);
    return d.dump(2);
  };
  const std::vector<Case> cases = {
      {"not-json", "{\"format\": \"uringsim-calibration/1\",", "not-json.json:"},
      {"unknown-key", edited([](auto& d) { d["machine"]["turbo"] = true; }),
       "unknown-key.json: /machine/turbo: unknown key"},
      {"unknown-cost", edited([](auto& d) { d["costs"]["syscall_ns"] = d["costs"]["syscall_cycles"]; }),
       "unknown-cost.json: /costs/syscall_ns: unknown key"},
      {"wrong-unit", edited([](auto& d) { d["costs"]["syscall_cycles"]["unit"] = "ns"; }),
       "wrong-unit.json: /costs/syscall_cycles/unit: expected \"cycles\""},
      {"negative", edited([](auto& d) { d["costs"]["syscall_cycles"]["value"] = -5; }),
       "negative.json: /costs/syscall_cycles/value: expected a finite number >= 0"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string file = write(dir / (c.name + ".json"), c.text);
    const auto out = dir / ("out-" + c.name);
    const auto r = run_cli("run " + source_path("scenarios/validation/mm1.json") + " --calibration " + file +
                           " --quiet --out " + out.string());
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("error: " + (dir / c.expected).string()) != std::string::npos);
    CHECK(!std::filesystem::exists(out));
  }
  const auto missing =
      run_cli("run " + source_path("scenarios/validation/mm1.json") + " --calibration " +
              (dir / "absent.json").string() + " --quiet --out " + (dir / "out-absent").string());
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("absent.json: cannot read") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "out-absent"));
}

TEST_CASE("calibrate: the io-wq spin sections per item that derive subtracts are the model's") {
  // A batch of IOSQE_ASYNC NOPs worked through by one worker on one CPU, at two depths. Every NOP
  // passes kIowqSpinSectionsPerItem spinlock sections (enqueue under acct->lock, the worker's
  // get-work under acct->lock, __io_worker_busy under acct->workers_lock, the CQE post, the
  // task_work add that frees the request, an atomic on the lockless list); other
  // sections (creation attempts, the sleep hooks) depend on how the worker and the submitter
  // interleave on the CPU. Era 6.x finds the free worker under RCU: no lock at enqueue for it.
  const auto dir = fresh_dir("calibrate-iowq-locks");
  const std::vector<std::pair<std::string, std::string>> per_item_sites = {
      {"acct->workers_lock[bound]", "__io_worker_busy"},
      {"acct->lock[bound]", "io_wqe_enqueue"},
      {"acct->lock[bound]", "io_worker_handle_work"},
      {"ctx->completion_lock", "io_req_complete_post"}};
  REQUIRE(per_item_sites.size() + 1 == static_cast<std::size_t>(host::calib::kIowqSpinSectionsPerItem));
  for (const int depth : {8, 16}) {
    nlohmann::json s = {{"name", "nop-one-worker"},
                        {"seed", 1},
                        {"warmup_ms", 2},
                        {"duration_ms", 10},
                        {"machine", {{"cores", 1}, {"ghz", 1.0}}},
                        {"kernel", {{"era", "6.x"}, {"iowq", {{"max_bound", 1}}}}},
                        {"workload", {{"type", "nop"}, {"depth", depth}, {"force_async", true}, {"cpu", 0}}}};
    const std::string path = write(dir / ("depth" + std::to_string(depth) + ".json"), s.dump());
    const auto r = testing::run_results("calibrate-iowq-locks-" + std::to_string(depth), path);
    const double nops = r.at("nop").at("batches_window").get<double>() * depth;
    REQUIRE(nops > 0);
    for (const auto& [lock, site] : per_item_sites) {
      INFO(lock << " at " << site << ", depth " << depth);
      const double n = r.at("locks").at(lock).at("sites").at(site).at("acquisitions").get<double>();
      CHECK(n / nops == Approx(1.0).margin(0.02));  // once per NOP (the window cuts a batch or two)
    }
    // The fifth: the llist_add of the task_work that frees each request (an atomic).
    const double adds = r.at("atomics")
                            .at("tctx->task_list")
                            .at("sites")
                            .at("io_req_task_work_add")
                            .at("updates")
                            .get<double>();
    CHECK(adds / nops == Approx(1.0).margin(0.02));
  }
}

TEST_CASE("calibrate --quick writes a file that run --calibration loads (real kernel)") {
  const auto dir = fresh_dir("calibrate-quick");
  const std::string file = (dir / "calibration.json").string();
  const auto r = run_cli("calibrate --quick --quiet --out " + file);
  if (r.exit_code == 2 && r.output.find("cannot calibrate on this machine") != std::string::npos) {
    WARN("skipped: " << r.output);
    CHECK(!std::filesystem::exists(file));
    return;
  }
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto cal = config::load_calibration_file(file);
  CHECK(cal.quick);
  REQUIRE(cal.passes);  // one pass asked, no speed bound: nothing dropped, no wait
  CHECK(cal.passes->asked == 1);
  CHECK(cal.passes->kept == 1);
  CHECK(cal.passes->dropped == 0);
  CHECK(!cal.passes->max_ns_per_add);
  CHECK(cal.passes->waited_s == 0);
  CHECK(cal.machine.cores >= 1);
  CHECK(cal.machine.ghz > 0);
  CHECK(!cal.kernel_release.empty());
  CHECK(cal.costs.count("syscall_cycles") == 1);
  CHECK(cal.costs.count("tcp_send_cycles") == 1);
  CHECK(cal.costs.size() + cal.defaults_kept.size() == config::CostTable::defaults().keys().size());
  const auto res = testing::run_results("calibrate-quick-run",
                                        source_path("scenarios/validation/iowq-nop.json") +
                                            " --set duration_ms=5 --set warmup_ms=1 --calibration " + file);
  CHECK(res.at("scenario").at("machine").at("cores") == cal.machine.cores);
  CHECK(res.at("scenario").at("costs").at("syscall_cycles") == cal.costs.at("syscall_cycles").value);
  CHECK(res.at("calibration").at("kernel_release") == cal.kernel_release);
}

TEST_CASE(
    "calibrate --wait-speed: a pass with the CPU slower than the bound is dropped (all of them: nothing "
    "written), real kernel") {
  const auto dir = fresh_dir("calibrate-speed");
  const std::string file = (dir / "calibration.json").string();
  auto r = run_cli("calibrate --quick --quiet --wait-speed 0.5 --out " + file);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--wait-speed needs --wait-quiet") != std::string::npos);
  // No CPU does a dependent add in a thousandth of a nanosecond: each of the two attempts (twice
  // the one pass asked) is dropped, before its benchmarks if the wait probed the CPU, after them if
  // other processes kept the machine busy through the wait.
  r = run_cli("calibrate --quick --quiet --wait-quiet 0.3 --wait-speed 0.001 --out " + file);
  if (r.exit_code == 2 && r.output.find("cannot calibrate on this machine") != std::string::npos) {
    WARN("skipped: " << r.output);
    return;
  }
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("every one of 2 passes was dropped") != std::string::npos);
  CHECK(r.output.find("nothing written") != std::string::npos);
  CHECK(!std::filesystem::exists(file));
  // A bound no CPU misses keeps the pass, and the file says so.
  r = run_cli("calibrate --quick --quiet --wait-quiet 0.3 --wait-speed 1000 --out " + file);
  REQUIRE(r.exit_code == 0);
  const auto cal = config::load_calibration_file(file);
  REQUIRE(cal.passes);
  CHECK(cal.passes->kept == 1);
  CHECK(cal.passes->dropped == 0);
  CHECK(cal.passes->max_ns_per_add == 1000);
  CHECK(cal.passes->waited_s >= 0.19);  // at least one 200 ms sample
}

namespace {
// A packing sweep: per busy share, the wake-ups kept on the waker's CPU out of 100, in the two
// cases (the wakee's last CPU the other one, idle; or the waker's, the other CPU idle). The same
// case's busy shares read `same_offset` above the other's.
host::calib::Measurements with_pack_sweep(const std::vector<std::array<double, 3>>& rungs,
                                          double same_offset = 0) {
  auto m = synthetic();
  for (const auto& [busy, other, same] : rungs) {
    host::calib::Measurements::PackRung r;
    r.other_busy = {busy - 0.002, busy, busy + 0.001};
    r.same_busy = {busy + same_offset - 0.001, busy + same_offset, busy + same_offset + 0.002};
    r.other_n = r.same_n = 100;
    r.other_on = static_cast<int>(other * 100);
    r.same_on = static_cast<int>(same * 100);
    m.pack.push_back(r);
  }
  return m;
}
}  // namespace

TEST_CASE("calibrate derive: wake-up packing's threshold is where half the wake-ups leave the waker's CPU") {
  // Other case: 0.9 at 0.6, 0.1 at 0.7: crosses at 0.65. Same case: 0.7 at 0.7, 0.3 at 0.8: 0.75.
  auto m = with_pack_sweep({{0.4, 1.0, 1.0}, {0.6, 0.9, 0.9}, {0.7, 0.1, 0.7}, {0.8, 0.0, 0.3}});
  auto c = host::calib::derive_calibration(m, synthetic_machine(), false);
  REQUIRE(c.machine.wake_pack_util);
  CHECK(*c.machine.wake_pack_util == Approx((0.65 + 0.75) / 2));
  // Each case crosses at its own measured shares. The same case's read 0.04 above the other's, and
  // it alone packs: (0 + 0.79) / 2. Shares pooled over both cases would give (0 + 0.77) / 2.
  m = with_pack_sweep({{0.4, 0.0, 1.0}, {0.6, 0.0, 0.9}, {0.7, 0.0, 0.7}, {0.8, 0.0, 0.3}}, 0.04);
  c = host::calib::derive_calibration(m, synthetic_machine(), false);
  CHECK(*c.machine.wake_pack_util == Approx(0.79 / 2));
  // Upstream: nothing kept at any share.
  m = with_pack_sweep({{0.4, 0.0, 0.0}, {0.6, 0.0, 0.0}, {0.8, 0.02, 0.0}});
  c = host::calib::derive_calibration(m, synthetic_machine(), false);
  REQUIRE(c.machine.wake_pack_util);
  CHECK(*c.machine.wake_pack_util == 0);
  // Kept at every share measured: at least the highest busy share.
  m = with_pack_sweep({{0.4, 1.0, 1.0}, {0.9, 0.8, 0.6}});
  c = host::calib::derive_calibration(m, synthetic_machine(), false);
  CHECK(*c.machine.wake_pack_util == Approx(0.9));
  // Not measured (one CPU): no entry, and the file round-trips without one.
  c = host::calib::derive_calibration(synthetic(), synthetic_machine(), false);
  CHECK(!c.machine.wake_pack_util);
  CHECK(!c.to_json()["machine"].contains("wake_pack_util"));
}

TEST_CASE("calibration applied: the measured wake-up packing becomes the scenario machine's") {
  auto doc = calibration_doc({});
  config::LoadOptions lo;
  lo.calibration = config::parse_calibration_text(doc.dump(), "cal.json");
  CHECK(config::load_scenario_text(kQueueScenario, "q.json", lo).at("/machine/wake_pack_util") == 0);
  doc["machine"]["wake_pack_util"] = 0.69;
  lo.calibration = config::parse_calibration_text(doc.dump(), "cal.json");
  CHECK(config::load_scenario_text(kQueueScenario, "q.json", lo).at("/machine/wake_pack_util") == 0.69);
  lo.sets = {"machine.wake_pack_util=0"};  // --set still wins
  CHECK(config::load_scenario_text(kQueueScenario, "q.json", lo).at("/machine/wake_pack_util") == 0);
  doc["machine"]["wake_pack_util"] = 1.5;
  CHECK_THROWS_WITH(
      config::parse_calibration_text(doc.dump(), "cal.json"),
      Catch::Contains("cal.json: /machine/wake_pack_util: expected a fraction of one CPU from 0 to 1"));
  auto text = nlohmann::json::parse(kQueueScenario);
  text["machine"]["wake_pack_util"] = -0.1;
  CHECK_THROWS_WITH(config::load_scenario_text(text.dump(), "q.json"),
                    Catch::Contains("/machine/wake_pack_util"));
}

TEST_CASE("calibrate derive: stalls beyond what a scenario accepts are left out, so the file still loads") {
  auto m = synthetic();  // 400 of ~20 us and 8 of 2 ms over 4 s: 0.6 % of the CPU, recorded
  CHECK(host::calib::derive_calibration(m, synthetic_machine(), true).machine.stall_lengths);
  // Another process on the CPU: 0.6 s of gaps in every second, far more than a machine's stalls.
  for (int i = 0; i < 4 * 300; ++i) m.stalls.add(2e6);
  const auto c = host::calib::derive_calibration(m, synthetic_machine(), true);
  CHECK(!c.machine.stall_lengths);
  config::LoadOptions lo;
  lo.calibration = config::parse_calibration_text(c.to_json().dump(), "cal.json");
  CHECK_NOTHROW(config::load_scenario_text(kQueueScenario, "q.json", lo));
}
