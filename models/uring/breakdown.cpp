#include "models/uring/breakdown.hpp"

#include <algorithm>
#include <cmath>

#include "models/uring/request.hpp"
#include "sim/checks.hpp"

namespace uringsim::models {

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::SqWait:
      return "sq_wait";
    case Stage::Issue:
      return "issue";
    case Stage::IoWqQueue:
      return "iowq_queue";
    case Stage::WorkerRun:
      return "worker_run";
    case Stage::LockWait:
      return "lock_wait";
    case Stage::PollWait:
      return "poll_wait";
    case Stage::NetOrDevice:
      return "net_or_device";
    case Stage::TaskWorkDelay:
      return "task_work_delay";
    case Stage::CqWait:
      return "cq_wait";
    case Stage::kCount:
      break;
  }
  return "?";
}

namespace {
// A request is owned by one context at a time; these are the hand-overs the kernel paths make
// (from -> to). Any other move means two contexts think they own it (e.g. a second wake-up).
bool allowed(Stage from, Stage to) {
  if (from == to) return true;
  switch (to) {
    case Stage::Issue:
      return from == Stage::SqWait || from == Stage::TaskWorkDelay;
    case Stage::IoWqQueue:
      return from == Stage::Issue;
    case Stage::WorkerRun:
      return from == Stage::IoWqQueue || from == Stage::NetOrDevice;
    case Stage::PollWait:
      return from == Stage::Issue || from == Stage::WorkerRun;
    case Stage::TaskWorkDelay:  // from IoWqQueue: io-wq cancelled it unrun (posted from task_work);
                                // from WorkerRun: a worker failed it (a multishot poll it could not arm)
      return from == Stage::PollWait || from == Stage::Issue || from == Stage::NetOrDevice ||
             from == Stage::IoWqQueue || from == Stage::WorkerRun;
    case Stage::NetOrDevice:
      return from == Stage::WorkerRun || from == Stage::Issue;
    case Stage::CqWait:
      return from == Stage::Issue || from == Stage::WorkerRun || from == Stage::TaskWorkDelay ||
             from == Stage::NetOrDevice;
    default:
      return false;
  }
}
}  // namespace

void LatencyBreakdown::start(Request& req, sim::TimeNs t) {
  req.clock = StageClock{};
  req.clock.t_start = req.clock.t_last = t;
}

void LatencyBreakdown::move(Request& req, Stage to, sim::TimeNs t) {
  StageClock& c = req.clock;
  if (!allowed(c.stage, to)) {
    static const sim::Label path = sim::intern("request hand-over");
    sim::report_violation("request_owner", path, req.id,
                          std::string("moved from ") + stage_name(c.stage) + " to " + stage_name(to) +
                              ": two contexts own the request");
  }
  c.ns[static_cast<std::size_t>(c.stage)] += t - c.t_last;
  c.t_last = t;
  c.stage = to;
}

void LatencyBreakdown::lock_wait(Request& req, sim::TimeNs waited) {
  if (waited <= 0) return;
  // The wait happened inside the current stage, which has not been closed yet: move it now, so the
  // stage's share at its close is what is left.
  StageClock& c = req.clock;
  c.ns[static_cast<std::size_t>(c.stage)] -= waited;
  c.ns[static_cast<std::size_t>(Stage::LockWait)] += waited;
}

void LatencyBreakdown::finish(Request& req, sim::TimeNs t, sim::TimeNs window_start_ns,
                              sim::TimeNs window_end_ns) {
  if (req.clock.stage != Stage::CqWait) {
    static const sim::Label path = sim::intern("io_uring_peek_cqe");
    sim::report_violation("request_owner", path, req.id,
                          std::string("CQE read while the request is in ") + stage_name(req.clock.stage));
  }
  move(req, req.clock.stage, t);
  if (t < window_start_ns || t > window_end_ns) return;
  const StageClock& c = req.clock;
  Record r{};
  const double latency = t - c.t_start;
  double sum = 0;
  for (std::size_t i = 0; i < kStages; ++i) {
    r.ns[i] = static_cast<float>(c.ns[i]);
    sum += c.ns[i];
  }
  r.latency_ns = static_cast<float>(latency);
  max_residual_ = std::max(max_residual_, std::abs(sum - latency));
  const double span = window_end_ns - window_start_ns;
  add(r, span > 0 ? (t - window_start_ns) / span : 1.0);
}

void LatencyBreakdown::add(const Record& r, double elapsed) {
  ++n_;
  // The same additions, in the same order, as summing the records at the end.
  lat_sum_ += r.latency_ns;
  for (std::size_t i = 0; i < kStages; ++i) stage_sum_[i] += r.ns[i];
  if (r.latency_ns < threshold_) {  // at least the `keep` of the last compaction are slower
    max_dropped_ = std::max(max_dropped_, r.latency_ns);
    return;
  }
  kept_.push_back(r);
  if (kept_.size() >= next_compact_) compact(elapsed);
}

void LatencyBreakdown::compact(double elapsed) {
  // slack x 1 % of the requests the window is on course for, at least min_keep.
  const double projected = static_cast<double>(n_) / std::clamp(elapsed, 1e-9, 1.0);
  const double want = std::ceil(policy_.slack * 0.01 * projected) + 1;
  std::size_t keep =
      want >= static_cast<double>(kept_.size()) ? kept_.size() : static_cast<std::size_t>(want);
  keep = std::max(keep, policy_.min_keep);
  if (keep < kept_.size()) {
    // The keep-th largest latency: every record below it has at least `keep` slower ones.
    std::vector<float> lats(kept_.size());
    for (std::size_t i = 0; i < kept_.size(); ++i) lats[i] = kept_[i].latency_ns;
    const auto nth = lats.begin() + static_cast<std::ptrdiff_t>(kept_.size() - keep);
    std::nth_element(lats.begin(), nth, lats.end());
    threshold_ = *nth;  // >= the previous threshold: every kept record is at or above that
    std::size_t w = 0;
    for (const Record& r : kept_) {
      if (r.latency_ns >= threshold_)
        kept_[w++] = r;  // stable: the kept records stay in the order they finished
      else
        max_dropped_ = std::max(max_dropped_, r.latency_ns);
    }
    kept_.resize(w);
  }
  // Geometric steps, so that the work stays O(1) per record even with many ties at the threshold.
  next_compact_ = kept_.size() + std::max<std::size_t>(std::max(keep, kept_.size()) / 2, 1);
}

LatencyBreakdown::Cut LatencyBreakdown::cut() const {
  Cut c{0, 0.0f, true};
  if (n_ == 0) return c;
  // Nearest rank: the p99 is the k-th smallest latency (0-based), i.e. the m-th largest.
  const std::size_t k = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n_))) - 1;
  c.m = static_cast<std::size_t>(n_) - k;
  std::vector<float> lats(kept_.size());
  for (std::size_t i = 0; i < kept_.size(); ++i) lats[i] = kept_[i].latency_ns;
  const std::size_t m = std::min(c.m, lats.size());
  if (m == 0) return Cut{c.m, 0.0f, false};
  const auto nth = lats.begin() + static_cast<std::ptrdiff_t>(lats.size() - m);
  std::nth_element(lats.begin(), nth, lats.end());
  c.p99 = *nth;
  // Exact if the m-th largest kept latency is the m-th largest of all: nothing dropped reaches it.
  c.exact = m == c.m && max_dropped_ < c.p99;
  return c;
}

bool LatencyBreakdown::tail_exact() const {
  return cut().exact;
}

nlohmann::json LatencyBreakdown::to_json() const {
  auto summarize = [](std::uint64_t count, double lat, const std::array<double, kStages>& st) {
    nlohmann::json j;
    j["requests"] = count;
    const double n = count == 0 ? 1.0 : static_cast<double>(count);
    j["latency_us"] = lat / n * 1e-3;
    j["stages_us"] = nlohmann::json::object();
    for (std::size_t i = 0; i < kStages; ++i)
      j["stages_us"][stage_name(static_cast<Stage>(i))] = st[i] / n * 1e-3;
    return j;
  };
  // The tail: requests at or beyond the 99th percentile of latency (nearest rank).
  const Cut c = cut();
  std::uint64_t tail_n = 0;
  double tail_lat = 0;
  std::array<double, kStages> tail_st{};
  if (n_ > 0)
    for (const Record& r : kept_) {
      if (r.latency_ns < c.p99) continue;
      ++tail_n;
      tail_lat += r.latency_ns;
      for (std::size_t i = 0; i < kStages; ++i) tail_st[i] += r.ns[i];
    }
  nlohmann::json j;
  j["requests"] = n_;
  j["max_residual_ns"] = max_residual_;
  j["p99_us"] = c.p99 * 1e-3;
  j["mean"] = summarize(n_, lat_sum_, stage_sum_);
  j["p99_and_beyond"] = summarize(tail_n, tail_lat, tail_st);
  if (!c.exact) j["tail_exact"] = false;  // absent when exact (always, so far)
  return j;
}

}  // namespace uringsim::models
