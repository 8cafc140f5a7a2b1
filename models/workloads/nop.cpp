#include "models/workloads/nop.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "sim/engine.hpp"

namespace uringsim::models {

NopModel::NopModel(const NopParams& p, const config::CostTable& costs) : p_(p), c_(UringCosts::from(costs)) {}

NopModel::~NopModel() = default;

void NopModel::build(sim::Engine& engine, analysis::RunMetrics& metrics) {
  engine_ = &engine;
  metrics_ = &metrics;
  placer_ = std::make_unique<CpuPlacer>(engine.machine().cores);
  const int cpu = p_.cpu >= 0 ? placer_->pin(p_.cpu) : placer_->pick();
  ring_ = std::make_unique<Uring>(engine, p_.kernel, c_, *placer_, p_.setup);
  file_ = std::make_unique<NopFile>(c_);
  sim::ThreadOptions o;
  o.pinned = p_.cpu >= 0;
  ring_->task.set_thread(engine.spawn(
      "nop_test", "nop_test", cpu, [this] { submitter_main(); }, o));
  const std::string ring = "io_uring (SQ/CQ)";
  engine.declare("ring", ring);
  engine.declare_edge("nop_test", ring, "io_uring_enter: submit a batch, wait for all of it");
  engine.declare_edge(ring, "ctx->uring_lock", "submission under");
  engine.declare_edge(ring, "ctx->completion_lock", "CQE posting under");
  engine.declare_edge(ring, "io-wq", p_.force_async ? "punt (IOSQE_ASYNC)" : "not used (inline NOPs)");
}

void NopModel::submitter_main() {
  static const sim::Label prep = sim::intern("[app] io_uring_prep"), reap = sim::intern("[app] reap"),
                          batch = sim::intern("[app] batch loop");
  auto& self = sim::current();
  std::vector<Request*> sqes;
  for (;;) {
    const sim::TimeNs t_start = self.local_now_ns();
    for (int i = 0; i < p_.depth; ++i) {
      self.charge(c_.app_sqe_prep, prep);
      Request& r = ring_->ctx.new_request();
      r.op = Op::Nop;
      r.file = file_.get();
      r.force_async = p_.force_async;
      sqes.push_back(&r);
      metrics_->submitted(t_start);
    }
    // wait_nr 0: io_uring_submit_and_wait(ring, depth), then reap the whole batch. N: wait for N
    // CQEs at a time (at most what is missing), reaping what is there, until the batch is reaped.
    const int per_wait = p_.setup.wait_nr > 0 ? std::min(p_.setup.wait_nr, p_.depth) : p_.depth;
    ring_->ctx.enter(sqes, per_wait);
    int got = 0;
    for (;;) {
      Cqe cqe;
      while (ring_->ctx.pop_cqe(cqe)) {
        ++got;
        self.charge(c_.app_cqe, reap);
        ring_->ctx.release(*cqe.req);
        const sim::TimeNs t = self.local_now_ns();
        if (cqe.result < 0) {
          ++failed_;  // e.g. -ECANCELED: io-wq could not create a worker
          metrics_->failed();
        } else if (t <= engine_->window_end_ns())
          metrics_->completed(t, t - t_start);
      }
      if (p_.setup.wait_nr == 0 || got >= p_.depth) break;
      ring_->ctx.enter(sqes, std::min(per_wait, p_.depth - got));  // sqes is empty: GETEVENTS only
    }
    const sim::TimeNs t = self.local_now_ns();
    if (t >= engine_->window_start_ns() && t <= engine_->window_end_ns()) ++batches_window_;
    // The loop's own work once per batch (the host runner's end-of-batch records, the next
    // batch's start time), outside the batch's latencies.
    self.charge(c_.app_batch, batch);
  }
}

void NopModel::final_checks() const {
  ring_->ctx.final_checks();
}

void NopModel::report(nlohmann::json& r) const {
  ring_->report(r);
  r["nop"] = {{"depth", p_.depth},
              {"force_async", p_.force_async},
              {"batches_window", batches_window_},
              {"failed", failed_}};
}

std::string NopModel::latency_measure() const {
  return "per request, SQE -> CQE: its batch's SQE preparation starts -> its CQE is read";
}

std::vector<std::pair<std::string, std::string>> NopModel::summary() const {
  const auto& b = ring_->wq.acct(0);
  return {{"io-wq bound", fmt::format("max {}  peak {}  created {}  queue peak {}", b.max_workers,
                                      b.workers_peak, b.created, b.list_peak)},
          {"io_uring", fmt::format("sqes {}  cqes {}  punted {}  inline {}",
                                   ring_->ctx.stats().sqes_submitted, ring_->ctx.stats().cqes_posted,
                                   ring_->ctx.stats().punted, ring_->ctx.stats().inline_completed)}};
}

}  // namespace uringsim::models
