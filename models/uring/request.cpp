#include "models/uring/request.hpp"

#include "models/uring/ctx.hpp"
#include "sim/engine.hpp"

namespace uringsim::models {

const char* op_name(Op op) {
  switch (op) {
    case Op::Recv:
      return "recv";
    case Op::Send:
      return "send";
    case Op::Read:
      return "read";
    case Op::Write:
      return "write";
    case Op::Nop:
      return "nop";
  }
  return "?";
}

void trace_step(const Request& req, char phase, const char* what) {
  sim::TraceSink* tr = sim::Engine::get().trace();
  if (!tr) return;
  const sim::Thread& self = sim::current();
  tr->flow(req.ctx ? req.ctx->trace_id(req) : req.id, phase, self.id(), self.local_now_ns(), what);
}

}  // namespace uringsim::models
