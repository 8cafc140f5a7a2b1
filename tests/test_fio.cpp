// End-to-end tests of the fio workload on the seed 001 scenario (shortened): fio's pacing, the
// SQ_WAKEUP protocol, completion paths, the deputy's effect on p99 latency, and bad input.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace testing;

namespace {
const std::string kSeed = source_path("scenarios/seeds/sqpoll-deputy.json");

nlohmann::json run_fio(const std::string& name, const std::string& args) {
  return run_results(name, kSeed + " --set warmup_ms=10 --set duration_ms=200 " + args);
}
double p99(const nlohmann::json& r) {
  return r["fio"]["read"]["lat_us"]["p99"].get<double>();
}
}  // namespace

TEST_CASE("fio: rate_iops paces the job, interrupt completions without hipri") {
  const auto r = run_fio("fio-pace", "--set workload.rate_iops=3000 --set workload.hipri=false");
  CHECK(r["fio"]["read"]["iops"].get<double>() == Approx(3000).epsilon(0.01));
  CHECK(r["throughput"]["ops_per_s"].get<double>() == Approx(3000).epsilon(0.01));
  const auto& u = r["fio"]["uring"];
  CHECK(u["iopoll_reaped"].get<long>() == 0);
  CHECK(u["irq_completions"].get<long>() == u["cqes_posted"].get<long>());
  CHECK(r["fio"]["device"]["irqs"].get<long>() > 0);
  // latency_us is fio's lat: at least the drive's 9 us mean service time.
  CHECK(r["latency_us"]["mean"].get<double>() > 9.0);
  CHECK(r["latency_us"]["p99"].get<double>() == Approx(p99(r)));
}

TEST_CASE("fio: with an idle period shorter than the inter-arrival time every I/O needs SQ_WAKEUP") {
  const auto r = run_fio("fio-wake10", "--set kernel.sqpoll.idle_us=10");
  const auto& u = r["fio"]["uring"];
  const long submitted = u["sqes_submitted"].get<long>();
  const auto& sq = r["fio"]["sq_threads"][0];
  // Every I/O after the first finds the thread asleep; each enter wakes it once.
  CHECK(u["sq_wakeup_enters"].get<long>() == submitted - 1);
  CHECK(sq["wakeups"].get<long>() == submitted - 1);
  CHECK(u["deputy_submitted"].get<long>() == 0);
  CHECK(u["iopoll_reaped"].get<long>() == submitted);
  CHECK(r["fio"]["device"]["irqs"].get<long>() == 0);
}

TEST_CASE("fio: with an idle period longer than the inter-arrival time the job never enters the kernel") {
  const auto r = run_fio("fio-wake510", "--set kernel.sqpoll.idle_us=510");
  CHECK(r["fio"]["uring"]["sq_wakeup_enters"].get<long>() == 0);
  CHECK(r["fio"]["sq_threads"][0]["sleeps"].get<long>() == 0);
  CHECK(r["fio"]["sq_thread_cpu_pct"].get<double>() == Approx(100).epsilon(0.001));
}

TEST_CASE("fio: the deputy (condition lifted) cuts p99 at idle 110 by the wake-up, equal at idle 510") {
  const auto without = run_fio("fio-dep-without", "--variant without --set kernel.sqpoll.idle_us=110");
  const auto with = run_fio("fio-dep-with", "--variant with --set kernel.sqpoll.idle_us=110");
  const auto posted = run_fio("fio-dep-posted", "--variant with-as-posted --set kernel.sqpoll.idle_us=110");
  const double gain = p99(without) - p99(with);
  CHECK(gain >= 1.0);
  CHECK(gain <= 3.5);
  CHECK(with["fio"]["uring"]["deputy_submitted"].get<long>() ==
        with["fio"]["uring"]["sq_wakeup_enters"].get<long>());
  // As posted, the IOPOLL condition disables the deputy under hipri: identical to without.
  CHECK(posted["fio"]["uring"]["deputy_submitted"].get<long>() == 0);
  CHECK(p99(posted) == p99(without));
  const auto without510 = run_fio("fio-dep-without510", "--variant without --set kernel.sqpoll.idle_us=510");
  const auto with510 = run_fio("fio-dep-with510", "--variant with --set kernel.sqpoll.idle_us=510");
  CHECK(std::abs(p99(without510) - p99(with510)) <= 0.5);
}

TEST_CASE("fio: SQ thread CPU share grows with idle_us") {
  const auto a = run_fio("fio-cpu60", "--set kernel.sqpoll.idle_us=60");
  const auto b = run_fio("fio-cpu260", "--set kernel.sqpoll.idle_us=260");
  const double sa = a["fio"]["sq_thread_cpu_pct"].get<double>(),
               sb = b["fio"]["sq_thread_cpu_pct"].get<double>();
  // One I/O every 500 us; the thread spins idle_us after each, plus the I/O itself (~10 us).
  CHECK(sa == Approx(100.0 * (60 + 12) / 500).margin(2));
  CHECK(sb - sa == Approx(100.0 * 200 / 500).margin(1));
}

TEST_CASE("fio: bad input: hipri without direct, a block size the drive table does not list") {
  const auto dir = fresh_dir("fio-bad");
  const auto a =
      run_cli("run " + kSeed + " --quiet --set workload.direct=false --out " + (dir / "a").string());
  CHECK(a.exit_code == 2);
  CHECK(a.output.find("/workload/hipri: hipri (IORING_SETUP_IOPOLL) requires direct=true") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(dir / "a" / "results.json"));
  const auto b =
      run_cli("run " + kSeed + " --quiet --set workload.bs_bytes=8192 --out " + (dir / "b").string());
  CHECK(b.exit_code == 2);
  CHECK(b.output.find(
            "/workload/bs_bytes: no read service time for bs_bytes 8192 in /device/read (listed: 4096)") !=
        std::string::npos);
}
