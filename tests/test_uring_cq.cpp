// io_uring component tests, completion side: a CQ too small for the completions the application
// has not read yet. Nothing may be lost, and the application reads CQEs in completion order.
#include <catch2/catch.hpp>

#include <vector>

#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::DiskFile;
using uringsim::test::SeenCqe;
using uringsim::test::UringWorld;

TEST_CASE("uring: CQ overflow keeps every completion and the application reads them in completion order") {
  constexpr sim::TimeNs kL = 1000;
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = kL;
  KernelConfig k = test::test_kernel();
  k.era = "6.x";  // new CQEs queue behind pending overflow (io_cqe_cache_refill, 6.1+)
  k.tw_on_enter = false;
  k.cq_entries = 2;
  k.max_bound = 6;
  UringWorld w(8, pc, k, test::zero_uring_costs());
  DiskFile disk(11, 0);
  // Forced-async reads, one worker each, finishing in the reverse of submission order, with
  // request 5 last: request i completes at L + service(i).
  const sim::TimeNs service[] = {50e3, 40e3, 30e3, 20e3, 10e3, 190e3};
  for (int i = 0; i < 6; ++i) disk.set_service(i, service[i]);

  struct Snap {
    std::size_t cq, overflow;
    std::uint64_t overflowed;
  };
  Snap at_100us{}, at_300us{};
  auto snap = [&](Snap& s) { s = {w.ctx.cq_ready(), w.ctx.overflow_len(), w.ctx.stats().cq_overflowed}; };
  std::vector<SeenCqe> seen;
  int enters = 0;
  w.spawn_app([&] {
    std::vector<Request*> sqes;
    for (int i = 0; i < 6; ++i) sqes.push_back(&w.request(Op::Read, disk, i, 100 + i, true));
    w.ctx.enter(sqes, 0);
    // The application is busy until 100 us: requests 4, 3 fill the CQ; 2, 1, 0 overflow.
    sim::current().sleep_ns(100e3);
    snap(at_100us);
    models::Cqe cqe;
    if (w.ctx.pop_cqe(cqe)) {  // one slot frees...
      seen.push_back({cqe.user_data, cqe.result, sim::now_ns()});
      w.ctx.release(*cqe.req);
    }
    // ...but request 5 (completing at 191 us) must still queue behind the overflowed ones.
    sim::current().sleep_ns(200e3);
    snap(at_300us);
    std::vector<Request*> none;
    for (int round = 0; round < 10 && seen.size() < 6; ++round) {
      w.reap(seen);
      if (seen.size() < 6) {
        w.ctx.enter(none, 0);  // GETEVENTS: flushes the overflow list into the freed slots
        ++enters;
      }
    }
  });
  w.engine.run_until_ns(1e6);

  CHECK(at_100us.cq == 2);
  CHECK(at_100us.overflow == 3);
  CHECK(at_100us.overflowed == 3);
  CHECK(at_300us.cq == 1);
  CHECK(at_300us.overflow == 4);
  CHECK(at_300us.overflowed == 4);

  REQUIRE(seen.size() == 6);
  std::vector<std::uint64_t> order;
  for (const SeenCqe& c : seen) order.push_back(c.user_data);
  CHECK(order == std::vector<std::uint64_t>{4, 3, 2, 1, 0, 5});
  for (const SeenCqe& c : seen) CHECK(c.result == static_cast<int>(100 + c.user_data));
  // 1 left in the CQ, then 2 flushed per enter: 2, 1 | 0, 5.
  CHECK(enters == 2);
  const auto& s = w.ctx.stats();
  CHECK(s.cqes_posted == 6);
  CHECK(s.cq_overflowed == 4);
  CHECK(w.ctx.overflow_len() == 0);
  CHECK(w.ctx.cq_ready() == 0);
}
