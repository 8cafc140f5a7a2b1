#include "models/uring/submit.hpp"

#include <algorithm>

#include "models/block/plug.hpp"
#include "models/uring/ring_internal.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
using ring::syms;
using ring::to_stage;
}  // namespace

Submitter::Submitter(const KernelConfig& k, const UringCosts& costs, IssuePaths& issue, CqRing& cq,
                     UringStats& stats)
    : k_(k), c_(costs), issue_(issue), cq_(cq), stats_(stats) {}

int Submitter::submit_sqes(int nr, Task& submitter, const std::function<Request*()>& next) {
  auto& self = sim::current();
  // io_submit_state_start: a batch of more than two SQEs may plug; the plug starts at its first
  // request whose op plugs (reads and writes, io_issue_def.plug), and io_submit_state_end
  // finishes it after flushing the deferred completions.
  const bool need_plug = std::min(nr, k_.sq_entries) > 2;
  BlockPlug plug(PlugCosts{c_.blk_plug_flush});
  int n = 0;
  while (n < nr && n < k_.sq_entries) {
    Request* sqe = next();
    if (!sqe) break;
    Request& req = *sqe;
    if (need_plug && !plug.started() && (req.op == Op::Read || req.op == Op::Write)) plug.start();
    self.charge(c_.sqe_submit, syms().submit);
    if (!req.fixed_file) self.charge(c_.file_lookup, syms().fget);
    issue_.prep_net_hdr(req);
    req.task = &submitter;
    ++stats_.sqes_submitted;
    to_stage(req, Stage::Issue);
    trace_step(req, 's', op_name(req.op));
    issue_.queue_sqe(req);
    ++n;
  }
  cq_.flush_completions();
  plug.finish();
  return n;
}

void Submitter::sq_push(Request& req) {
  // The SQE becomes visible at the application's own time, not at the clock of its pending work.
  sim::current().flush();
  sq_ring_.push_back(&req);
}

int Submitter::submit_from_sq_ring(int nr, Task& submitter) {
  nr = std::min(nr, static_cast<int>(sq_ring_.size()));  // io_submit_sqes: min(nr, entries)
  return submit_sqes(nr, submitter, [this]() -> Request* {
    if (sq_ring_.empty()) return nullptr;
    Request* r = sq_ring_.front();
    sq_ring_.pop_front();
    return r;
  });
}

}  // namespace uringsim::models
