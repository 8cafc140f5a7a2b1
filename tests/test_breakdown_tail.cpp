// The latency breakdown keeps running sums and a bounded tail instead of one record per request
// (issue 14): its figures must be those of summing every record, to the last bit, p99 tail included.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/uring/breakdown.hpp"

using uringsim::models::kStages;
using uringsim::models::LatencyBreakdown;
using uringsim::models::Stage;
using uringsim::models::stage_name;
using Record = LatencyBreakdown::Record;

namespace {

// The breakdown as computed from every record (the record-per-request version's to_json).
nlohmann::json brute_force(const std::vector<Record>& records) {
  auto summarize = [](const std::vector<const Record*>& rs) {
    nlohmann::json j;
    j["requests"] = rs.size();
    double lat = 0;
    std::array<double, kStages> st{};
    for (const Record* r : rs) {
      lat += r->latency_ns;
      for (std::size_t i = 0; i < kStages; ++i) st[i] += r->ns[i];
    }
    const double n = rs.empty() ? 1.0 : static_cast<double>(rs.size());
    j["latency_us"] = lat / n * 1e-3;
    j["stages_us"] = nlohmann::json::object();
    for (std::size_t i = 0; i < kStages; ++i)
      j["stages_us"][stage_name(static_cast<Stage>(i))] = st[i] / n * 1e-3;
    return j;
  };
  std::vector<const Record*> all;
  for (const Record& r : records) all.push_back(&r);
  std::vector<float> lats;
  for (const Record& r : records) lats.push_back(r.latency_ns);
  std::vector<const Record*> tail;
  float p99 = 0;
  if (!lats.empty()) {
    const std::size_t k = static_cast<std::size_t>(std::ceil(0.99 * lats.size())) - 1;
    std::nth_element(lats.begin(), lats.begin() + static_cast<std::ptrdiff_t>(k), lats.end());
    p99 = lats[k];
    for (const Record* r : all)
      if (r->latency_ns >= p99) tail.push_back(r);
  }
  nlohmann::json j;
  j["requests"] = records.size();
  j["max_residual_ns"] = 0.0;
  j["p99_us"] = p99 * 1e-3;
  j["mean"] = summarize(all);
  j["p99_and_beyond"] = summarize(tail);
  return j;
}

// A record whose stages are random (small negative rounding leftovers included) and whose latency
// is `latency` (not their sum: the breakdown only adds them up).
Record record(float latency, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-0.5f, 2000.0f);
  Record r{};
  r.latency_ns = latency;
  for (auto& x : r.ns) x = u(rng);
  return r;
}

// Feeds the records at a steady completion rate (record i of n at the fraction (i+1)/n of the
// window) and checks the figures against the brute force, bit for bit.
void check_same(const std::vector<Record>& records, LatencyBreakdown::Tail policy) {
  LatencyBreakdown b(policy);
  for (std::size_t i = 0; i < records.size(); ++i)
    b.add(records[i], static_cast<double>(i + 1) / static_cast<double>(records.size()));
  INFO("n = " << records.size() << ", min_keep = " << policy.min_keep << ", slack = " << policy.slack);
  CHECK(b.tail_exact());
  CHECK(b.requests() == records.size());
  CHECK(b.to_json().dump() == brute_force(records).dump());
}

const std::vector<LatencyBreakdown::Tail> kPolicies = {{1, 1.0}, {1, 4.0}, {3, 2.0}, {}};

}  // namespace

TEST_CASE("breakdown tail: the same figures as every record, continuous latencies, any n") {
  std::mt19937_64 rng(14);
  std::lognormal_distribution<float> lat(9.0f, 0.8f);
  for (std::size_t n : {0, 1, 2, 3, 7, 99, 100, 101, 150, 199, 200, 201, 999, 1000, 4321, 20000}) {
    std::vector<Record> rs;
    for (std::size_t i = 0; i < n; ++i) rs.push_back(record(lat(rng), rng));
    for (const auto& p : kPolicies) check_same(rs, p);
  }
}

TEST_CASE("breakdown tail: the same figures with ties, at the p99 and everywhere") {
  std::mt19937_64 rng(7);
  for (std::size_t n : {1, 2, 5, 100, 101, 250, 3000, 30000}) {
    // A few distinct latencies, so the p99 value is shared by many requests below and above it.
    std::uniform_int_distribution<int> few(1, 6);
    std::vector<Record> rs;
    for (std::size_t i = 0; i < n; ++i) rs.push_back(record(static_cast<float>(100 * few(rng)), rng));
    for (const auto& p : kPolicies) check_same(rs, p);
    // Every latency equal: the tail is every request.
    std::vector<Record> same;
    for (std::size_t i = 0; i < n; ++i) same.push_back(record(5000.0f, rng));
    for (const auto& p : kPolicies) check_same(same, p);
    // m - 1 or m requests above a plateau (the p99 is the m-th largest): the tail is the plateau
    // and all above it, or only those above.
    const std::size_t m = n - (static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n))) - 1);
    for (const std::size_t above : {m - 1, m}) {
      std::vector<Record> plateau;
      for (std::size_t i = 0; i < n; ++i)
        plateau.push_back(
            record(i % 97 == 0 && i / 97 < above ? 9000.0f + static_cast<float>(i) : 700.0f, rng));
      for (const auto& p : kPolicies) check_same(plateau, p);
    }
  }
}

TEST_CASE("breakdown tail: the same figures when the slowest requests come first or last") {
  std::mt19937_64 rng(3);
  for (std::size_t n : {150, 5000, 40000}) {
    std::vector<Record> up, down;
    for (std::size_t i = 0; i < n; ++i) {
      up.push_back(record(static_cast<float>(i), rng));
      down.push_back(record(static_cast<float>(n - i), rng));
    }
    for (const auto& p : kPolicies) {
      check_same(up, p);
      check_same(down, p);
    }
  }
}

TEST_CASE("breakdown tail: memory stays a few percent of the requests") {
  std::mt19937_64 rng(11);
  std::exponential_distribution<float> lat(1e-4f);
  const std::size_t n = 400000;
  LatencyBreakdown b(LatencyBreakdown::Tail{1000, 4.0});
  std::vector<Record> rs;
  std::size_t most = 0;
  for (std::size_t i = 0; i < n; ++i) {
    rs.push_back(record(lat(rng), rng));
    b.add(rs.back(), static_cast<double>(i + 1) / n);
    most = std::max(most, b.tail_kept());
  }
  // keep = 4 x 1 % of the projection (n here) + 1; compaction at 1.5 x keep.
  CHECK(most <= n * 6 / 100 + 10);
  CHECK(b.tail_exact());
  CHECK(b.to_json().dump() == brute_force(rs).dump());
}

TEST_CASE("breakdown tail: a completion rate far above its average so far is detected, not hidden") {
  // 1000 slow requests in the first half of the window, then 100 000 fast ones in the second: the
  // projection at mid-window is 2000 requests, so with slack 1 only the ~21 slowest are kept, but
  // the final tail (1011 requests) holds every slow one.
  std::mt19937_64 rng(5);
  LatencyBreakdown b(LatencyBreakdown::Tail{1, 1.0});
  std::vector<Record> rs;
  for (int i = 0; i < 1000; ++i) {
    rs.push_back(record(1e6f + static_cast<float>(i), rng));
    b.add(rs.back(), 0.5 * (i + 1) / 1000);
  }
  for (int i = 0; i < 100000; ++i) {
    rs.push_back(record(10.0f, rng));
    b.add(rs.back(), 0.5 + 0.5 * (i + 1) / 100000);
  }
  CHECK_FALSE(b.tail_exact());
  const auto j = b.to_json();
  CHECK(j.at("tail_exact") == false);
  CHECK(j.at("mean").dump() == brute_force(rs).at("mean").dump());  // the mean is exact anyway
  CHECK(j.at("requests") == rs.size());
}
