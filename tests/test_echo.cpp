// End-to-end tests of the echo workload on the seed 000 scenario (shortened): conservation, the
// mechanism the seed is about (blocking workers held vs freed), and that results move the way the
// mechanism says when the scenario changes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace testing;

namespace {
const std::string kSeed = source_path("scenarios/seeds/async-hybrid.json");

nlohmann::json run_echo(const std::string& name, const std::string& args) {
  return run_results(name, kSeed + " --set warmup_ms=100 --set duration_ms=100 " + args);
}

double tput(const nlohmann::json& r) {
  return r["throughput"]["ops_per_s"].get<double>();
}

void check_conservation(const nlohmann::json& r) {
  const auto& rq = r["requests"];
  CHECK(rq["submitted"].get<long>() == rq["completed"].get<long>() + rq["in_flight_at_end"].get<long>());
  const auto& u = r["uring"];
  CHECK(u["sqes_submitted"].get<long>() == u["cqes_posted"].get<long>() + u["in_flight_at_end"].get<long>());
  // One recv or send outstanding per connection at any time.
  CHECK(u["in_flight_at_end"].get<long>() <= r["scenario"]["workload"]["connections"].get<long>());
}
}  // namespace

TEST_CASE("echo: blocking mode holds every unbound worker; hybrid frees them; both conserve requests") {
  const auto blocking = run_echo("echo-blocking", "--variant blocking");
  const auto hybrid = run_echo("echo-hybrid", "--variant hybrid");
  check_conservation(blocking);
  check_conservation(hybrid);
  CHECK(blocking["iowq"]["unbound"]["workers_peak"] == 20);
  // Blocked workers sleep in recv: the work list backs up with the other connections' requests.
  CHECK(blocking["uring"]["worker_blocking_issues"].get<long>() > 1000);
  CHECK(blocking["iowq"]["unbound"]["queue_peak"].get<long>() > 500);
  // Sampled over the window: most of the 20 workers sit blocked in a recv at any time.
  CHECK(blocking["gauges"]["iowq.unbound.blocked_in_work"]["max"].get<double>() >= 15);
  CHECK(hybrid["gauges"]["iowq.unbound.blocked_in_work"]["max"].get<double>() == 0);
  CHECK(hybrid["gauges"]["iowq.free_workers"]["max"].get<double>() >= 15);
  // Hybrid: workers never block in recv; they arm poll and the owner re-issues through task_work.
  CHECK(hybrid["uring"]["worker_blocking_issues"] == 0);
  CHECK(hybrid["uring"]["poll_armed"].get<long>() > 1000);
  CHECK(hybrid["uring"]["task_work_items"].get<long>() > 1000);
  CHECK(hybrid["iowq"]["unbound"]["queue_peak"].get<long>() < 100);
  const double ratio = tput(hybrid) / tput(blocking);
  INFO("hybrid " << tput(hybrid) << " blocking " << tput(blocking));
  CHECK(ratio > 1.6);
  CHECK(ratio < 3.0);
}

TEST_CASE("echo: enough unbound workers for every connection closes the gap") {
  // With a worker per connection, a blocked recv no longer holds up anyone else's request.
  const auto blocking =
      run_echo("echo-many-workers", "--variant blocking --set kernel.iowq.max_unbound=1200");
  const auto hybrid = run_echo("echo-many-workers-h", "--variant hybrid --set kernel.iowq.max_unbound=1200");
  check_conservation(blocking);
  INFO("hybrid " << tput(hybrid) << " blocking " << tput(blocking));
  CHECK(tput(blocking) > 0.85 * tput(hybrid));
  CHECK(blocking["iowq"]["unbound"]["workers_peak"].get<long>() > 20);
}

TEST_CASE("echo: fewer workers lower blocking-mode throughput") {
  // Fewer workers: the list backs up more, so more data has arrived by the time a recv is picked
  // up and fewer recvs block; throughput falls, but less than in proportion to the workers.
  const auto w20 = run_echo("echo-w20", "--variant blocking");
  const auto w4 = run_echo("echo-w4", "--variant blocking --set kernel.iowq.max_unbound=4");
  INFO("20 workers " << tput(w20) << ", 4 workers " << tput(w4));
  CHECK(tput(w4) < 0.9 * tput(w20));
  CHECK(tput(w4) > 0.2 * tput(w20));
  CHECK(w4["iowq"]["unbound"]["workers_peak"] == 4);
}

TEST_CASE("echo: requests cancelled because io-wq could not create a worker are retried") {
  // The first two creations fail with no worker in the account: the two IOSQE_ASYNC requests that
  // asked for them complete with -ECANCELED, the server submits them again, and nothing is lost.
  const auto r = run_echo("echo-create-fail",
                          "--variant hybrid --set 'kernel.iowq.create_errors=[\"enomem\",\"enomem\"]'");
  CHECK(r["iowq"]["unbound"]["create_failed"].get<int>() == 2);
  CHECK(r["iowq"]["unbound"]["cancelled"].get<int>() == 2);
  CHECK(r["uring"]["iowq_cancelled"].get<int>() == 2);
  CHECK(r["echo"]["failed_ops"].get<int>() == 2);
  CHECK(tput(r) == Approx(166900).epsilon(0.02));  // the clients' rate, as without failures
}
