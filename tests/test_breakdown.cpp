// The per-request latency breakdown (issue 7): every request's stages add up to its latency, and
// each design puts the time where its mechanism says it goes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace testing;

namespace {
nlohmann::json run_json(const std::string& name, const std::string& args) {
  return run_results("breakdown-" + name, args);
}
nlohmann::json echo(const std::string& mode) {
  return run_json("echo-" + mode, source_path("scenarios/seeds/async-hybrid.json") + " --variant " + mode +
                                      " --set warmup_ms=30 --set duration_ms=30");
}
double stage(const nlohmann::json& part, const char* name) {
  return part.at("stages_us").at(name).get<double>();
}
double stage_sum(const nlohmann::json& part) {
  double s = 0;
  for (const auto& [k, v] : part.at("stages_us").items()) s += v.get<double>();
  return s;
}
}  // namespace

TEST_CASE("breakdown: the stages of every request add up to its latency (blocking io-wq)") {
  const auto b = echo("blocking")["breakdown"];
  REQUIRE(b["requests"].get<long>() > 1000);
  // Per request, the largest gap between the sum of stages and the latency is rounding only.
  CHECK(b["max_residual_ns"].get<double>() < 1e-3);
  for (const char* part : {"mean", "p99_and_beyond"})
    CHECK(stage_sum(b[part]) == Approx(b[part]["latency_us"].get<double>()).epsilon(1e-6));
  // Old IOSQE_ASYNC: requests wait on the io-wq list behind workers asleep in recv, and the
  // workers' sleeps in recv show as network time; nothing is polled.
  const auto& m = b["mean"];
  CHECK(stage(m, "iowq_queue") > 0.5 * m["latency_us"].get<double>());
  CHECK(stage(m, "net_or_device") > 0);
  CHECK(stage(m, "poll_wait") == 0);
  // The tail is made of longer queueing, not of the per-request CPU.
  CHECK(stage(b["p99_and_beyond"], "iowq_queue") > stage(m, "iowq_queue"));
}

TEST_CASE("breakdown: hybrid io-wq requests wait in poll, not in a worker") {
  const auto b = echo("hybrid")["breakdown"];
  CHECK(b["max_residual_ns"].get<double>() < 1e-3);
  const auto& m = b["mean"];
  CHECK(stage(m, "poll_wait") > 0.9 * m["latency_us"].get<double>());  // waiting for the client
  CHECK(stage(m, "net_or_device") == 0);                               // no worker ever blocks
  CHECK(stage(m, "task_work_delay") > 0);                              // poll -> task_work -> re-issue
  CHECK(stage(m, "iowq_queue") > 0);
}

TEST_CASE("breakdown: the SQPOLL deputy saves exactly the time SQEs wait for the SQ thread") {
  auto run = [](const std::string& variant) {
    return run_json("sqpoll-" + variant, source_path("scenarios/seeds/sqpoll-deputy.json") + " --variant " +
                                             variant +
                                             " --set kernel.sqpoll.idle_us=110 --set duration_ms=200");
  };
  const auto r_without = run("without");
  const auto without = r_without["breakdown"]["mean"];
  const auto with = run("with")["breakdown"]["mean"];
  // fio's lat and the breakdown start and end at the same instants: the same mean, measured apart.
  CHECK(without["latency_us"].get<double>() ==
        Approx(r_without["latency_us"]["mean"].get<double>()).epsilon(1e-6));
  const double saved = without["latency_us"].get<double>() - with["latency_us"].get<double>();
  const double sq_saved = stage(without, "sq_wait") - stage(with, "sq_wait");
  CHECK(saved > 1.0);
  CHECK(sq_saved == Approx(saved).margin(0.3));
  CHECK(stage(with, "net_or_device") == Approx(stage(without, "net_or_device")).margin(0.3));
}

TEST_CASE("breakdown: run --breakdown prints the stages at the mean and in the tail") {
  const auto dir = fresh_dir("breakdown-print");
  const auto r =
      run_cli("run " + source_path("scenarios/seeds/async-hybrid.json") +
              " --variant hybrid --set warmup_ms=10 --set duration_ms=10 --breakdown --out " + dir.string());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("# Request latency by stage"));
  for (const char* s : {"sq_wait", "issue", "iowq_queue", "worker_run", "lock_wait", "poll_wait",
                        "net_or_device", "task_work_delay", "cq_wait", "tail us"})
    CHECK_THAT(r.output, Catch::Contains(s));
}
