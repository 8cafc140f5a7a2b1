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
    case Stage::TaskWorkDelay:  // from IoWqQueue: io-wq cancelled it unrun (posted from task_work)
      return from == Stage::PollWait || from == Stage::Issue || from == Stage::NetOrDevice ||
             from == Stage::IoWqQueue;
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
  records_.push_back(r);
}

void LatencyBreakdown::merge(const LatencyBreakdown& o) {
  records_.insert(records_.end(), o.records_.begin(), o.records_.end());
  max_residual_ = std::max(max_residual_, o.max_residual_);
}

nlohmann::json LatencyBreakdown::to_json() const {
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
  all.reserve(records_.size());
  for (const Record& r : records_) all.push_back(&r);
  // The tail: requests at or beyond the 99th percentile of latency (nearest rank).
  std::vector<float> lats;
  lats.reserve(records_.size());
  for (const Record& r : records_) lats.push_back(r.latency_ns);
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
  j["requests"] = records_.size();
  j["max_residual_ns"] = max_residual_;
  j["p99_us"] = p99 * 1e-3;
  j["mean"] = summarize(all);
  j["p99_and_beyond"] = summarize(tail);
  return j;
}

}  // namespace uringsim::models
