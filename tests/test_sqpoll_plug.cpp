// The SQ thread's task_work cap (kernel.sqpoll.tw_cap, io_sq_tw since 6.9), the block plug that
// io_submit_sqes holds around a batch of more than two SQEs, and the null_blk device preset. Hand-
// built worlds at 1 GHz (cycles = ns) with zero io_uring costs unless a test sets them.
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include "config/scenario.hpp"
#include "models/block/nvme.hpp"
#include "models/block/plug.hpp"
#include "models/uring/sqpoll.hpp"
#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::UringWorld;

namespace {
sim::PrimitiveCosts wake_costs() {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1000;
  return pc;
}

// A drive that services every command in `service_ns`, completing by interrupt.
DeviceParams fixed_drive(double service_ns) {
  DeviceParams p;
  p.hw_queues = 3;
  p.parallelism = 1 << 20;
  p.fixed = Distribution::from_json({{"kind", "constant"}, {"value_us", service_ns / 1e3}});
  return p;
}

// SQPOLL world (SQ thread pinned on CPU 1, idle 10 us) with an O_DIRECT block file on `drive`.
struct PlugWorld {
  PlugWorld(KernelConfig k, double service_ns, sim::Cycles flush_cycles = 0)
      : w(3, wake_costs(), k, costs(flush_cycles)),
        dev(fixed_drive(service_ns), DriveCosts{}),
        file(dev, true),
        sqd(w.k, w.costs) {
    dev.start(w.engine);
    w.ctx.setup(true, false);
    sqd.attach(w.ctx);
    w.ctx.attach_sq_thread(&sqd);
    sqd.start(w.engine, "iou-sqp-1", w.placer.pin(1), true);
  }
  static UringCosts costs(sim::Cycles flush) {
    UringCosts c = test::zero_uring_costs();
    c.blk_plug_flush = flush;
    return c;
  }
  // At 50 us (the SQ thread asleep) the application writes n read SQEs and wakes the thread.
  void burst(int n) {
    w.spawn_app([this, n] {
      sim::current().sleep_ns(50e3);
      for (int i = 0; i < n; ++i) w.ctx.sq_push(w.request(Op::Read, file, i, 4096, false));
      if (w.ctx.sq_need_wakeup()) w.ctx.enter_ring(n, 0, kEnterSqWakeup);
    });
  }
  UringWorld w;
  NvmeDevice dev;
  BlockFile file;
  SqThread sqd;
};

KernelConfig sq_kernel(int tw_cap) {
  KernelConfig k = test::test_kernel();
  k.sq_idle_ns = 10e3;
  k.sq_tw_cap = tw_cap;
  return k;
}
}  // namespace

TEST_CASE(
    "sqpoll tw_cap: at most tw_cap task_work items per SQ pass, the rest run in the next passes in order") {
  PlugWorld s(sq_kernel(8), 1000);
  std::vector<std::pair<int, std::uint64_t>> ran;  // (item, SQ pass it ran in)
  // 20 task_work items queued for the SQ thread at once (as 20 completions arriving together).
  s.w.spawn_app([&] {
    sim::current().sleep_ns(50e3);
    for (int i = 0; i < 20; ++i)
      s.sqd.task().add(nullptr, [&, i] { ran.emplace_back(i, s.sqd.stats().passes); });
  });
  s.w.engine.run_until_ns(200e3);
  REQUIRE(ran.size() == 20);
  std::map<std::uint64_t, int> per_pass;
  for (std::size_t i = 0; i < ran.size(); ++i) {
    CHECK(ran[i].first == static_cast<int>(i));  // FIFO: the retry list runs before newer work
    ++per_pass[ran[i].second];
  }
  std::vector<int> counts;
  for (const auto& [pass, n] : per_pass) counts.push_back(n);
  CHECK(counts == std::vector<int>{8, 8, 4});
  CHECK(s.sqd.stats().tw_max_per_pass == 8);
  CHECK(s.sqd.stats().tw_capped_passes == 2);
}

TEST_CASE("sqpoll tw_cap: 0 (before 6.9) runs all pending task_work in one pass") {
  PlugWorld s(sq_kernel(0), 1000);
  std::map<std::uint64_t, int> per_pass;
  s.w.spawn_app([&] {
    sim::current().sleep_ns(50e3);
    for (int i = 0; i < 20; ++i) s.sqd.task().add(nullptr, [&] { ++per_pass[s.sqd.stats().passes]; });
  });
  s.w.engine.run_until_ns(200e3);
  REQUIRE(per_pass.size() == 1);
  CHECK(per_pass.begin()->second == 20);
  CHECK(s.sqd.stats().tw_capped_passes == 0);
}

TEST_CASE("block plug: one flush per SQ pass dispatches the pass's requests together") {
  // 10 SQEs in one pass: one plug, flushed once with 10 requests (the flush costs 500 ns).
  PlugWorld s(sq_kernel(32), 1000, 500);
  s.burst(10);
  s.w.engine.run_until_ns(200e3);
  CHECK(s.dev.stats().submitted == 10);
  CHECK(s.dev.stats().plugged == 10);
  CHECK(s.dev.stats().plug_flushes == 1);
  CHECK(s.dev.stats().completed == 10);
  CHECK(s.w.ctx.stats().cqes_posted == 10);
}

TEST_CASE("block plug: more than BLK_MAX_REQUEST_COUNT requests flush early (every 32)") {
  PlugWorld s(sq_kernel(0), 1000);
  s.burst(70);
  s.w.engine.run_until_ns(300e3);
  CHECK(s.dev.stats().plugged == 70);
  CHECK(s.dev.stats().plug_flushes == 3);  // 32 + 32 at the 33rd and 65th add, 6 at the end
  CHECK(s.w.ctx.stats().cqes_posted == 70);
}

TEST_CASE("block plug: a batch of two SQEs is not plugged (need_plug = max_ios > 2)") {
  PlugWorld s(sq_kernel(32), 1000);
  s.burst(2);
  s.w.engine.run_until_ns(200e3);
  CHECK(s.dev.stats().submitted == 2);
  CHECK(s.dev.stats().plugged == 0);
  CHECK(s.dev.stats().plug_flushes == 0);
  CHECK(s.w.ctx.stats().cqes_posted == 2);
}

TEST_CASE("null_blk preset: a fixed service time for any size (0 for softirq, completion_nsec for timer)") {
  auto load = [](const std::string& device) {
    return config::load_scenario_text(
        R"({"name": "t", "machine": {"cores": 4}, "device": )" + device +
            R"(, "workload": {"type": "fio", "rw": "randread", "bs_bytes": 4096}})",
        "t.json");
  };
  sim::Rng rng(1, "t");
  const DeviceParams soft = DeviceParams::from(load(R"({"preset": "null_blk"})"));
  REQUIRE(soft.fixed.has_value());
  CHECK(soft.fixed->sample_ns(rng) == 0);
  CHECK(soft.hw_queues == 4);  // the completion is taken on the submitting CPU
  CHECK_NOTHROW(soft.check_block_size(Op::Write, 1 << 20, "t"));  // no table: every size
  const DeviceParams timer = DeviceParams::from(
      load(R"({"preset": "null_blk", "null_blk_irqmode": "timer", "null_blk_completion_ns": 2500})"));
  CHECK(timer.fixed->sample_ns(rng) == Approx(2500));
  // A field the preset sets, also set by the scenario, is refused, naming both.
  CHECK_THROWS_WITH(DeviceParams::from(load(R"({"preset": "null_blk", "parallelism": 64})")),
                    Catch::Contains("device.parallelism") && Catch::Contains("null_blk"));
  CHECK_THROWS_WITH(DeviceParams::from(load(R"({"null_blk_irqmode": "timer"})")),
                    Catch::Contains("device.preset"));
}
