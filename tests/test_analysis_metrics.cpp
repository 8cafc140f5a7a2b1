#include <cmath>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "analysis/metrics.hpp"

using namespace uringsim::analysis;

namespace {

constexpr double kMs = 1e6;  // ns per ms

MetricsConfig window_10_to_110ms() {
  return MetricsConfig{10 * kMs, 110 * kMs, {}, 10 * kMs};
}

}  // namespace

TEST_CASE("analysis: metrics count warm-up completions in requests but not in throughput") {
  RunMetrics m(window_10_to_110ms());
  for (int i = 0; i < 5; ++i) {
    m.submitted(1 * kMs);
    m.completed(2 * kMs, 1000.0);  // before warm-up
  }
  for (int i = 0; i < 200; ++i) {
    m.submitted(20 * kMs);
    m.completed(20 * kMs + i * 1000.0, 5000.0);
  }
  m.submitted(50 * kMs);  // still in flight at the end
  m.submitted(120 * kMs);
  m.completed(121 * kMs, 1e9);  // after the window

  CHECK(m.submitted_count() == 207);
  CHECK(m.completed_count() == 206);
  CHECK(m.in_flight() == 1);
  CHECK(m.window_completions() == 200);
  CHECK(m.window_submissions() == 201);
  CHECK(m.window_seconds() == Approx(0.1));
  CHECK(m.throughput_ops_per_s() == Approx(2000.0));
  CHECK(m.latency().max() == 5000.0);  // neither the warm-up nor the late latency leaked in

  const auto j = m.to_json();
  CHECK(j["throughput"]["ops_per_s"].get<double>() == Approx(2000.0));
  CHECK(j["requests"]["submitted"] == 207);
  CHECK(j["requests"]["completed"] == 206);
  CHECK(j["requests"]["in_flight_at_end"] == 1);
  CHECK(j["latency_us"]["count"] == 200);
  CHECK(j["latency_us"]["p50"].get<double>() == Approx(5.0).epsilon(0.01));
  CHECK(j["latency_us"]["max"].get<double>() == 5.0);
  for (const char* k : {"count", "mean", "p50", "p90", "p99", "p999", "max", "min"})
    CHECK(j["latency_us"].contains(k));
}

TEST_CASE("analysis: metrics window bounds are inclusive") {
  RunMetrics m(window_10_to_110ms());
  m.completed(10 * kMs, 1.0);
  m.completed(110 * kMs, 2.0);
  m.completed(10 * kMs - 1, 3.0);
  m.completed(110 * kMs + 1, 4.0);
  CHECK(m.window_completions() == 2);
  // The completion at exactly end_ns falls in the last interval, not one past it.
  const auto ts = m.to_json()["timeseries"];
  REQUIRE(ts["throughput_ops_per_s"].size() == 10);
  CHECK(ts["throughput_ops_per_s"][0].get<double>() == Approx(100.0));  // 1 op in 10 ms
  CHECK(ts["throughput_ops_per_s"][9].get<double>() == Approx(100.0));
}

TEST_CASE("analysis: metrics extra percentiles are reported and merged with the defaults") {
  RunMetrics m(MetricsConfig{0, 1 * kMs, {99.99, 50, 75}, 0});
  CHECK(m.reported_percentiles() == std::vector<double>{50, 75, 90, 99, 99.9, 99.99});
  m.completed(0.5 * kMs, 100.0);
  const auto lat = m.to_json()["latency_us"];
  CHECK(lat.contains("p75"));
  CHECK(lat.contains("p9999"));
  CHECK(lat.contains("p50"));
}

TEST_CASE("analysis: metrics time series throughput per interval, including a partial last interval") {
  // Window 0..25 ms with 10 ms intervals: [0,10), [10,20), [20,25].
  RunMetrics m(MetricsConfig{0, 25 * kMs, {}, 10 * kMs});
  for (int i = 0; i < 10; ++i) m.completed(1 * kMs, 1.0);
  for (int i = 0; i < 5; ++i) m.completed(21 * kMs, 1.0);
  const auto ts = m.to_json()["timeseries"];
  CHECK(ts["interval_ms"].get<double>() == 10.0);
  CHECK(ts["t_ms"] == nlohmann::json::array({0.0, 10.0, 20.0}));
  REQUIRE(ts["throughput_ops_per_s"].size() == 3);
  CHECK(ts["throughput_ops_per_s"][0].get<double>() == Approx(1000.0));
  CHECK(ts["throughput_ops_per_s"][1].get<double>() == 0.0);
  CHECK(ts["throughput_ops_per_s"][2].get<double>() == Approx(1000.0));  // 5 ops in 5 ms
}

TEST_CASE("analysis: metrics gauges keep the last value per interval, carry it forward and track the max") {
  RunMetrics m(MetricsConfig{10 * kMs, 50 * kMs, {}, 10 * kMs});  // intervals start at 10, 20, 30, 40 ms
  m.sample("iowq.workers_running", 5 * kMs, 3);                   // before the window: carried in
  m.sample("iowq.workers_running", 12 * kMs, 8);                  // interval 0
  m.sample("iowq.workers_running", 15 * kMs, 2);                  // interval 0, last
  m.sample("iowq.workers_running", 35 * kMs, 6);                  // interval 2
  m.sample("iowq.workers_running", 60 * kMs, 99);                 // after the window: ignored
  m.sample("sq.depth", 25 * kMs, 1);                              // first sample in interval 1

  const auto j = m.to_json();
  const auto& ts = j["timeseries"];
  CHECK(ts["iowq.workers_running"] == nlohmann::json::array({2.0, 2.0, 6.0, 6.0}));
  CHECK(j["timeseries_max"]["iowq.workers_running"] == nlohmann::json::array({8.0, 2.0, 6.0, 6.0}));
  CHECK(ts["sq.depth"] == nlohmann::json::array({nullptr, 1.0, 1.0, 1.0}));
  CHECK(j["gauges"]["iowq.workers_running"]["max"].get<double>() == 8.0);
  CHECK(j["gauges"]["iowq.workers_running"]["last"].get<double>() == 6.0);
  CHECK(j["gauges"]["sq.depth"]["max"].get<double>() == 1.0);

  // Carry-in participates in the interval max: the gauge sat at 3 when the window opened.
  RunMetrics c(MetricsConfig{10 * kMs, 30 * kMs, {}, 10 * kMs});
  c.sample("g", 0, 3);
  c.sample("g", 15 * kMs, 1);
  const auto cj = c.to_json();
  CHECK(cj["timeseries_max"]["g"] == nlohmann::json::array({3.0, 1.0}));
  CHECK(cj["gauges"]["g"]["max"].get<double>() == 3.0);

  CHECK_THROWS_AS(m.sample("t_ms", 20 * kMs, 1), std::invalid_argument);
  CHECK_THROWS_AS(m.sample("", 20 * kMs, 1), std::invalid_argument);
}

TEST_CASE("analysis: metrics json is identical for identical call sequences") {
  auto run = [] {
    RunMetrics m(window_10_to_110ms());
    for (int i = 0; i < 1000; ++i) {
      const double t = i * 0.12 * kMs;
      m.submitted(t);
      m.completed(t, 1000.0 + (i * 7919) % 5000);
      m.sample(i % 2 ? "b" : "a", t, i % 13);
    }
    return m.to_json().dump();
  };
  CHECK(run() == run());
}

TEST_CASE("analysis: metrics merged from two recorders equal one recorder of both") {
  RunMetrics one(window_10_to_110ms()), a(window_10_to_110ms()), b(window_10_to_110ms());
  for (int i = 0; i < 1000; ++i) {
    const double t = i * 0.13 * kMs;                // 0 to 130 ms: before, inside and after the window
    const double lat = 1000.0 + (i * 7919) % 5000;  // whole ns: sums do not depend on their order
    RunMetrics& part = i % 3 ? a : b;
    one.submitted(t);
    part.submitted(t);
    if (i % 17 == 0) {
      one.failed();
      part.failed();
    } else {
      one.completed(t, lat);
      part.completed(t, lat);
    }
  }
  a.merge(b);
  CHECK(a.to_json() == one.to_json());
  CHECK(a.window_completions() > 0);
  CHECK(a.in_flight() == 0);

  RunMetrics other_window(MetricsConfig{10 * kMs, 120 * kMs, {}, 10 * kMs});
  CHECK_THROWS_AS(a.merge(other_window), std::invalid_argument);
  RunMetrics other_percentiles(MetricsConfig{10 * kMs, 110 * kMs, {99.99}, 10 * kMs});
  CHECK_THROWS_AS(a.merge(other_percentiles), std::invalid_argument);
  RunMetrics with_gauge(window_10_to_110ms());
  with_gauge.sample("g", 20 * kMs, 1);
  CHECK_THROWS_AS(a.merge(with_gauge), std::invalid_argument);
}

TEST_CASE("analysis: metrics reject invalid configuration and input") {
  CHECK_THROWS_AS(RunMetrics(MetricsConfig{10, 10, {}, 1}), std::invalid_argument);
  CHECK_THROWS_AS(RunMetrics(MetricsConfig{-1, 10, {}, 1}), std::invalid_argument);
  CHECK_THROWS_AS(RunMetrics(MetricsConfig{0, INFINITY, {}, 1}), std::invalid_argument);
  CHECK_THROWS_AS(RunMetrics(MetricsConfig{0, 10, {}, -1}), std::invalid_argument);
  CHECK_THROWS_AS(RunMetrics(MetricsConfig{0, 10, {0.0}, 1}), std::invalid_argument);
  CHECK_THROWS_AS(RunMetrics(MetricsConfig{0, 1e12, {}, 1}), std::invalid_argument);  // 1e12 intervals
  RunMetrics m(MetricsConfig{0, 10, {}, 0});
  CHECK_THROWS_AS(m.completed(1, -5), std::invalid_argument);
  CHECK(m.to_json()["timeseries"]["t_ms"].empty());  // interval 0 disables the series
}

TEST_CASE("analysis: metrics count failed requests apart from completions and in-flight ones") {
  RunMetrics m(window_10_to_110ms());
  for (int i = 0; i < 4; ++i) m.submitted(20 * kMs);
  m.completed(30 * kMs, 2000.0);
  m.failed();  // e.g. -ECANCELED: out of the system, but no latency and no throughput
  m.failed();
  CHECK(m.in_flight() == 1);
  CHECK(m.window_completions() == 1);
  const auto j = m.to_json();
  CHECK(j["requests"]["failed"] == 2);
  CHECK(j["requests"]["completed"] == 1);
  CHECK(j["requests"]["in_flight_at_end"] == 1);
  CHECK(j["throughput"]["ops_per_s"].get<double>() == Approx(10.0));
}
