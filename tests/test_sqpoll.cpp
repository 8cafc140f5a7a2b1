// SQPOLL and IOPOLL component tests: when the SQ thread sets NEED_WAKEUP, what the seed-001
// deputy submits (and when it may not), and that polled completions surface only when someone
// polls. The machine runs at 1 GHz (cycles = ns); io_uring costs are zero unless a test sets them.
#include <catch2/catch.hpp>

#include <vector>

#include "config/scenario.hpp"
#include "models/block/nvme.hpp"
#include "models/uring/sqpoll.hpp"
#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::UringWorld;

namespace {
// A file whose non-blocking attempt always completes at once (like a NOP).
class InstantFile final : public File {
 public:
  bool pollable() const override { return false; }
  bool try_issue(IoRequest& req) override {
    req.result = 0;
    return true;
  }
  void issue_blocking(IoRequest&, BlockHooks*) override {}
  bool poll_ready(const IoRequest&) const override { return false; }
  void add_poll(IoRequest&) override {}
};

// A SQPOLL world: the SQ thread on CPU 1, the application on CPU 0. A woken thread runs 1 us after
// its wake-up, so a deputy submits before the SQ thread is back (with no latency they would race).
sim::PrimitiveCosts wake_costs() {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1000;
  return pc;
}

struct SqWorld {
  SqWorld(KernelConfig k, bool iopoll) : w(3, wake_costs(), k, test::zero_uring_costs()), sqd(w.k, w.costs) {
    w.ctx.setup(true, iopoll);
    sqd.attach(w.ctx);
    w.ctx.attach_sq_thread(&sqd);
    sqd.start(w.engine, "iou-sqp-1", w.placer.pin(1), true);
  }
  UringWorld w;
  SqThread sqd;
  InstantFile file;
};

KernelConfig sq_kernel(double idle_us) {
  KernelConfig k = test::test_kernel();
  k.sq_idle_ns = idle_us * 1e3;
  return k;
}

// The thread idles out at 10 us; at 50 us the application pushes 20 SQEs and, seeing
// NEED_WAKEUP, calls io_uring_enter(20, 0, SQ_WAKEUP).
UringStats burst_after_sleep(SqWorld& s) {
  s.w.spawn_app([&] {
    sim::current().sleep_ns(50e3);
    for (int i = 0; i < 20; ++i) s.w.ctx.sq_push(s.w.request(Op::Read, s.file, i, 4096, false));
    if (s.w.ctx.sq_need_wakeup()) s.w.ctx.enter_ring(20, 0, kEnterSqWakeup);
  });
  s.w.engine.run_until_ns(200e3);
  return s.w.ctx.stats();
}
}  // namespace

TEST_CASE("sqpoll: NEED_WAKEUP is set only once the SQ thread has been idle for sq_thread_idle") {
  SqWorld s(sq_kernel(100), false);
  std::vector<bool> flag;
  s.w.spawn_app([&] {
    auto& self = sim::current();
    s.w.ctx.sq_push(s.w.request(Op::Nop, s.file, 1, 0, false));  // at 0: the thread submits it at once
    for (double t : {50e3, 99e3, 101e3, 150e3}) {
      self.sleep_ns(t - sim::now_ns());
      flag.push_back(s.w.ctx.sq_need_wakeup());
    }
  });
  s.w.engine.run_until_ns(300e3);
  // Idle from 0 (its last work) to 100 us: awake and polling before, asleep with the flag after.
  CHECK(flag == std::vector<bool>{false, false, true, true});
  CHECK(s.sqd.stats().sleeps == 1);
  CHECK(s.w.ctx.stats().sq_thread_submitted == 1);
  CHECK(s.w.ctx.stats().cqes_posted == 1);
}

TEST_CASE("sqpoll: the deputy submits at most submit_cap SQEs itself, the woken SQ thread the rest") {
  KernelConfig k = sq_kernel(10);
  k.sq_deputy = true;
  SqWorld s(k, false);
  const UringStats st = burst_after_sleep(s);
  CHECK(st.sq_wakeup_enters == 1);
  CHECK(st.deputy_calls == 1);
  CHECK(st.deputy_submitted == 8);
  CHECK(st.sq_thread_submitted == 12);
  CHECK(st.cqes_posted == 20);
}

TEST_CASE("sqpoll: as posted, the deputy never submits on an IOPOLL ring") {
  KernelConfig k = sq_kernel(10);
  k.sq_deputy = true;  // deputy_under_iopoll stays false: the RFC's !IOPOLL condition
  SqWorld s(k, true);
  const UringStats st = burst_after_sleep(s);
  CHECK(st.sq_wakeup_enters == 1);
  CHECK(st.deputy_submitted == 0);
  CHECK(st.sq_thread_submitted == 20);
}

TEST_CASE("sqpoll: deputy_under_iopoll lifts the condition (still at most submit_cap)") {
  KernelConfig k = sq_kernel(10);
  k.sq_deputy = true;
  k.sq_deputy_under_iopoll = true;
  SqWorld s(k, true);
  const UringStats st = burst_after_sleep(s);
  CHECK(st.sq_wakeup_enters == 1);
  CHECK(st.deputy_calls == 1);
  CHECK(st.deputy_submitted == 8);
  CHECK(st.sq_thread_submitted == 12);
}

TEST_CASE("sqpoll: without the deputy the waker submits nothing, the SQ thread submits all") {
  SqWorld s(sq_kernel(10), false);
  const UringStats st = burst_after_sleep(s);
  CHECK(st.sq_wakeup_enters == 1);
  CHECK(st.deputy_calls == 0);
  CHECK(st.sq_thread_submitted == 20);
}

TEST_CASE("iopoll: a polled completion is reaped only by polling: no interrupt, no CQE until GETEVENTS") {
  const auto scen = config::load_scenario_text(
      R"({"name": "t", "machine": {"cores": 3, "ghz": 1},
          "device": {"read": [{"bs_bytes": 4096, "service": {"kind": "constant", "value_us": 10}}]},
          "workload": {"type": "fio", "direct": true, "hipri": true}})",
      "test");
  UringCosts uc = test::zero_uring_costs();
  uc.iopoll_pass = 100;
  UringWorld w(3, sim::PrimitiveCosts{}, test::test_kernel(), uc);
  w.ctx.setup(false, true);
  NvmeDevice dev(DeviceParams::from(scen), DriveCosts{});  // no submit or interrupt cost
  dev.start(w.engine);
  BlockFile file(dev, true);
  std::size_t cq_at_50us = 99;
  std::uint64_t done_at_50us = 0;
  double t_reaped = 0;
  std::vector<test::SeenCqe> seen;
  w.spawn_app([&] {
    w.ctx.sq_push(w.request(Op::Read, file, 5, 4096, false));
    w.ctx.enter_ring(1, 0, 0);
    sim::current().sleep_ns(50e3);  // the drive finished at 10 us; nobody polled
    cq_at_50us = w.ctx.cq_ready();
    done_at_50us = dev.stats().polled_done;
    w.ctx.enter_ring(0, 1, kEnterGetEvents);  // io_iopoll_check: one pass finds it
    t_reaped = sim::now_ns();
    w.reap(seen);
  });
  w.engine.run_until_ns(200e3);
  CHECK(done_at_50us == 1);
  CHECK(cq_at_50us == 0);
  CHECK(dev.stats().irqs == 0);
  CHECK(w.ctx.stats().irq_completions == 0);
  CHECK(w.ctx.stats().iopoll_reaped == 1);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].user_data == 5);
  CHECK(t_reaped == Approx(50e3 + 100));  // one poll pass after the GETEVENTS call
}
