#include "models/uring/submit.hpp"

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
  int n = 0;
  while (n < nr && n < k_.sq_entries) {
    Request* sqe = next();
    if (!sqe) break;
    Request& req = *sqe;
    self.charge(c_.sqe_submit, syms().submit);
    if (!req.fixed_file) self.charge(c_.file_lookup, syms().fget);
    req.task = &submitter;
    ++stats_.sqes_submitted;
    to_stage(req, Stage::Issue);
    trace_step(req, 's', op_name(req.op));
    issue_.queue_sqe(req);
    ++n;
  }
  cq_.flush_completions();
  return n;
}

void Submitter::sq_push(Request& req) {
  // The SQE becomes visible at the application's own time, not at the clock of its pending work.
  sim::current().flush();
  sq_ring_.push_back(&req);
}

int Submitter::submit_from_sq_ring(int nr, Task& submitter) {
  return submit_sqes(nr, submitter, [this]() -> Request* {
    if (sq_ring_.empty()) return nullptr;
    Request* r = sq_ring_.front();
    sq_ring_.pop_front();
    return r;
  });
}

}  // namespace uringsim::models
