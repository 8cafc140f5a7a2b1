#pragma once
// IORING_OP_NOP has no file. It is modelled as a File that completes at once in whatever context
// issues it (the submitter inline, or an io-wq worker with IOSQE_ASYNC), so NOPs take exactly the
// request paths around the op: submission, io-wq, CQE posting. Not pollable, not hashed: a punted
// NOP is bound work (io_prep_async_work sets UNBOUND only for unbound_nonreg_file ops).
#include <stdexcept>

#include "models/io/file.hpp"
#include "models/uring/kernel_config.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {

class NopFile final : public File {
 public:
  explicit NopFile(const UringCosts& c) : c_(c) {}
  bool pollable() const override { return false; }
  bool try_issue(IoRequest& req) override {
    run(req);
    return true;
  }
  void issue_blocking(IoRequest& req, BlockHooks*) override { run(req); }
  bool poll_ready(const IoRequest&) const override { return true; }  // never waits for anything
  void add_poll(IoRequest&) override { throw std::logic_error("a NOP is never polled"); }

 private:
  void run(IoRequest& req) {
    static const sim::Label sym = sim::intern("io_nop");
    sim::current().charge(c_.nop_issue, sym);
    req.result = 0;
  }
  const UringCosts& c_;
};

}  // namespace uringsim::models
