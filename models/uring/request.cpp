#include "models/uring/request.hpp"

#include "models/uring/ctx.hpp"
#include "sim/engine.hpp"

namespace uringsim::models {

bool Request::hipri() const {
  return ctx->iopoll();
}

void Request::poll_wake() {
  ctx->poll_wake(*this);
}

void Request::async_done() {
  if (hipri()) {
    iopoll_done = true;  // the completion entry is in memory: only a poller will find it
    ctx->iopoll_device_done(*this);
  } else {
    ctx->rw_complete_irq(*this);
  }
}

void trace_step(const Request& req, char phase, const char* what) {
  sim::TraceSink* tr = sim::Engine::get().trace();
  if (!tr) return;
  const sim::Thread& self = sim::current();
  tr->flow(req.ctx ? req.ctx->trace_id(req) : req.id, phase, self.id(), self.local_now_ns(), what);
}

}  // namespace uringsim::models
