// Block completion paths on hand-built cases (docs/models/block-completion.md): hybrid IOPOLL's
// sleep rule, and where an async O_DIRECT write to an XFS file finishes its completion (a dio/
// kworker, or the submitter's task_work). The machine runs at 1 GHz (cycles = ns); io_uring costs
// are zero, the drive takes a constant time.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <vector>

#include "config/scenario.hpp"
#include "models/block/nvme.hpp"
#include "models/block/workqueue.hpp"
#include "models/workloads/fio_params.hpp"
#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::UringWorld;

namespace {
DeviceParams constant_drive(double read_us, double write_us) {
  const auto scen =
      config::load_scenario_text(fmt::format(R"({{"name": "t", "machine": {{"cores": 3, "ghz": 1}},
          "device": {{"read": [{{"bs_bytes": 4096, "service": {{"kind": "constant", "value_us": {}}}}}],
                      "write": [{{"bs_bytes": 4096, "service": {{"kind": "constant", "value_us": {}}}}}]}},
          "workload": {{"type": "fio", "direct": true}}}})",
                                             read_us, write_us),
                                 "test");
  return DeviceParams::from(scen);
}

sim::Cycles cycles_of(const sim::Thread& t, const char* symbol) {
  const auto& c = t.cycles_by_symbol();
  const auto i = static_cast<std::size_t>(sim::intern(symbol));
  return i < c.size() ? c[i] : 0;
}
}  // namespace

TEST_CASE("hybrid iopoll: no sleep until a poll time is learned - then half of it once per request") {
  UringWorld w(3, sim::PrimitiveCosts{}, test::test_kernel(), test::zero_uring_costs());
  w.ctx.setup(false, true);
  w.ctx.set_hybrid_iopoll(true);
  NvmeDevice dev(constant_drive(10, 10), DriveCosts{});
  dev.start(w.engine);
  BlockFile file(dev, true);
  std::vector<double> learned, sleeps, slept, reaped_after;
  std::vector<test::SeenCqe> seen;
  w.spawn_app([&] {
    for (int i = 0; i < 3; ++i) {
      const double t0 = sim::now_ns();
      w.ctx.sq_push(w.request(Op::Read, file, i, 4096, false));
      w.ctx.enter_ring(1, 1, kEnterGetEvents);  // submit, then io_iopoll_check
      reaped_after.push_back(sim::now_ns() - t0);
      w.reap(seen);
      learned.push_back(w.ctx.iopoll_wait().learned_ns());
      sleeps.push_back(static_cast<double>(w.ctx.stats().iopoll_sleeps));
      slept.push_back(w.ctx.stats().iopoll_slept_ns);
    }
  });
  w.engine.run_until_ns(1e6);
  REQUIRE(seen.size() == 3);
  // 1st: nothing learned (LLONG_MAX): classic polling, and the poll time is the whole 10 us.
  CHECK(sleeps[0] == 0);
  CHECK(learned[0] == Approx(10e3));
  // 2nd: sleeps 10/2 = 5 us, then spins 5 us: the poll time excludes the sleep, 5 us: the minimum.
  CHECK(sleeps[1] == 1);
  CHECK(slept[1] == Approx(5e3));
  CHECK(learned[1] == Approx(5e3));
  // 3rd: sleeps 5/2 = 2.5 us, polls 7.5 us; the learned time stays the minimum, 5 us.
  CHECK(sleeps[2] == 2);
  CHECK(slept[2] - slept[1] == Approx(2.5e3));
  CHECK(learned[2] == Approx(5e3));
  // The sleep ends before the drive is done: each request is still found when it completes.
  for (double t : reaped_after) CHECK(t == Approx(10e3).margin(1e3));
}

TEST_CASE(
    "dio write completion: a workqueue write completes on a kworker of the IRQ CPU and then in task_work") {
  UringWorld w(3, sim::PrimitiveCosts{}, test::test_kernel(), test::zero_uring_costs());
  NvmeDevice dev(constant_drive(10, 10), DriveCosts{});
  dev.start(w.engine);
  Workqueue wq(w.engine, "dio/test", WorkqueueCosts{});
  BlockFile file(dev, true);
  file.set_write_completion(DioWriteCompletion::Workqueue, &wq, 700);
  std::vector<test::SeenCqe> seen;
  sim::Thread* app = nullptr;
  app = &w.spawn_app([&] {
    std::vector<Request*> sqes = {&w.request(Op::Write, file, 7, 4096, false)};
    w.ctx.enter(sqes, 1);
    w.reap(seen);
  });
  w.engine.run_until_ns(1e6);
  REQUIRE(seen.size() == 1);
  CHECK(wq.stats().queued == 1);
  CHECK(wq.stats().run == 1);
  const sim::Thread* kw = wq.worker(0);  // the app runs on CPU 0: hardware queue 0, its IRQ on CPU 0
  REQUIRE(kw != nullptr);
  CHECK(kw->name().rfind("kworker/0:", 0) == 0);
  CHECK(cycles_of(*kw, "iomap_dio_complete") == Approx(700));  // the completion ran on the kworker
  CHECK(cycles_of(*app, "iomap_dio_complete") == 0);
  CHECK(w.task.items_run() == 1);  // ... which then handed the request to the submitter's task_work
}

TEST_CASE(
    "dio write completion: with IOCB_DIO_CALLER_COMP the submitter task_work completes it - no kworker") {
  UringWorld w(3, sim::PrimitiveCosts{}, test::test_kernel(), test::zero_uring_costs());
  NvmeDevice dev(constant_drive(10, 10), DriveCosts{});
  dev.start(w.engine);
  BlockFile file(dev, true);
  file.set_write_completion(DioWriteCompletion::Caller, nullptr, 700);
  std::vector<test::SeenCqe> seen;
  sim::Thread* app = nullptr;
  app = &w.spawn_app([&] {
    std::vector<Request*> sqes = {&w.request(Op::Write, file, 7, 4096, false)};
    w.ctx.enter(sqes, 1);
    w.reap(seen);
  });
  w.engine.run_until_ns(1e6);
  REQUIRE(seen.size() == 1);
  CHECK(cycles_of(*app, "iomap_dio_complete") == Approx(700));  // run in the submitter's task_work
  CHECK(w.task.items_run() == 1);
  CHECK(dev.stats().irqs == 1);
}

TEST_CASE("fio: hybrid_iopoll and filesystem are refused where the kernel or the model has no such path") {
  auto params = [](const std::string& era, const std::string& workload) {
    return FioParams::from(config::load_scenario_text(
        R"({"name": "t", "kernel": {"era": ")" + era + R"("}, "workload": {"type": "fio", "direct": true, )" +
            workload + "}}",
        "t.json"));
  };
  auto refused = [&](const std::string& era, const std::string& workload) {
    try {
      params(era, workload);
    } catch (const config::InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK_NOTHROW(params("6.x", R"("hipri": true, "hybrid_iopoll": true)"));
  CHECK_THAT(refused("6.x", R"("hybrid_iopoll": true)"),
             Catch::Contains("/workload/hybrid_iopoll") && Catch::Contains("requires hipri"));
  CHECK_THAT(refused("5.18", R"("hipri": true, "hybrid_iopoll": true)"),
             Catch::Contains("/workload/hybrid_iopoll") && Catch::Contains("era 5.18"));
  CHECK_THAT(refused("6.x", R"("hipri": true, "hybrid_iopoll": true, "sqthread_poll": true)"),
             Catch::Contains("/workload/hybrid_iopoll"));
  CHECK_THAT(refused("6.x", R"("hipri": true, "rw": "randwrite", "filesystem": "xfs")"),
             Catch::Contains("/workload/filesystem"));
  CHECK_NOTHROW(params("6.x", R"("hipri": true, "rw": "randread", "filesystem": "xfs")"));
  CHECK(params("6.x", R"("rw": "randwrite", "filesystem": "xfs")").kernel.dio_caller_comp == false);
}
