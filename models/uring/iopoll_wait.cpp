#include "models/uring/iopoll_wait.hpp"

#include <algorithm>

#include "sim/thread.hpp"

namespace uringsim::models {
namespace {

class ClassicWait final : public IopollWait {
 public:
  bool hybrid() const override { return false; }
};

class HybridWait final : public IopollWait {
 public:
  bool hybrid() const override { return true; }
  void issued(Request& req) override {
    req.iopoll_start_ns = sim::current().local_now_ns();
    req.iopoll_slept = false;  // every request blocks at most once
    req.iopoll_sleep_ns = 0;
  }
  void before_poll(Request& head, UringStats& stats) override {
    if (head.iopoll_slept || learned_ == kUnknown) return;
    head.iopoll_slept = true;
    head.iopoll_sleep_ns = learned_ / 2;  // "half the running time to do schedule"
    ++stats.iopoll_sleeps;
    stats.iopoll_slept_ns += head.iopoll_sleep_ns;
    static const sim::Label sym = sim::intern("io_hybrid_iopoll_delay");
    sim::current().sleep_ns(head.iopoll_sleep_ns, sym);  // hrtimer sleep: off CPU
  }
  void polled(const Request& head) override {
    const sim::TimeNs runtime = sim::current().local_now_ns() - head.iopoll_start_ns - head.iopoll_sleep_ns;
    learned_ = std::min(learned_, std::max(0.0, runtime));  // the minimum, not an average
  }
  sim::TimeNs learned_ns() const override { return learned_; }

 private:
  sim::TimeNs learned_ = kUnknown;
};

}  // namespace

std::unique_ptr<IopollWait> make_iopoll_wait(bool hybrid) {
  if (hybrid) return std::make_unique<HybridWait>();
  return std::make_unique<ClassicWait>();
}

}  // namespace uringsim::models
