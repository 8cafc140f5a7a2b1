// The CQ ring on its own (models/uring/cq_ring.hpp), without submission or io-wq: the order CQEs
// reach the application once the CQ is full, when deferred completions are posted, and when a
// task sleeping in io_cqring_wait is woken. The machine runs at 1 GHz; io_uring costs are zero.
#include <catch2/catch.hpp>

#include <deque>
#include <vector>

#include "models/uring/cq_ring.hpp"
#include "models/uring/task.hpp"
#include "sim/engine.hpp"
#include "sim/thread.hpp"
#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::cycles_of;

namespace {
KernelConfig cq_kernel(int cq_entries) {
  KernelConfig k = test::test_kernel();
  k.cq_entries = cq_entries;
  return k;
}

// A CQ ring of `cq_entries` whose owner task runs on CPU 0; a poster may run on CPU 1.
struct CqWorld {
  CqWorld(int cq_entries, const sim::PrimitiveCosts& pc)
      : engine(sim::MachineSpec{2, 1.0, 0}, pc),
        k(cq_kernel(cq_entries)),
        costs(test::zero_uring_costs()),
        task(costs, k),
        cq(k, costs, task, stats) {}

  // A request past its issue, ready to complete with `result`.
  Request& request(std::uint64_t user_data, int result) {
    Request& r = reqs.emplace_back();
    r.id = user_data + 1;
    r.user_data = user_data;
    r.result = result;
    r.clock.stage = Stage::Issue;
    return r;
  }
  void spawn_owner(std::function<void()> body) {
    task.set_thread(engine.spawn("owner", "app", 0, std::move(body)));
  }
  // Every CQE now in the CQ, by user_data.
  void pop_all(std::vector<std::uint64_t>& out) {
    Cqe cqe;
    while (cq.pop(cqe)) out.push_back(cqe.user_data);
  }

  sim::Engine engine;  // first: the CQ ring's lock and wait queue register with it
  KernelConfig k;
  UringCosts costs;
  Task task;
  UringStats stats;
  CqRing cq;
  std::deque<Request> reqs;  // stable addresses
};
}  // namespace

TEST_CASE("cq ring: a CQE posted while the overflow list is not empty queues behind it, in order") {
  CqWorld w(2, sim::PrimitiveCosts{});
  struct Snap {
    std::size_t ready, overflow;
  };
  std::vector<Snap> snaps;
  std::vector<std::uint64_t> order;
  w.spawn_owner([&] {
    auto snap = [&] { snaps.push_back({w.cq.ready(), w.cq.overflow_len()}); };
    for (std::uint64_t i = 0; i < 3; ++i) w.cq.complete_post(w.request(i, 10 + static_cast<int>(i)));
    snap();  // 0, 1 in the CQ; 2 overflowed
    Cqe cqe;
    if (w.cq.pop(cqe)) order.push_back(cqe.user_data);
    w.cq.complete_post(w.request(3, 13));
    snap();  // a slot is free, but 3 must not overtake 2
    w.cq.flush_overflow();
    snap();  // 2 moves into the free slot; 3 still waits
    w.pop_all(order);
    w.cq.flush_overflow();
    w.pop_all(order);
  });
  w.engine.run_until_ns(1e6);

  REQUIRE(snaps.size() == 3);
  CHECK(snaps[0].ready == 2);
  CHECK(snaps[0].overflow == 1);
  CHECK(snaps[1].ready == 1);
  CHECK(snaps[1].overflow == 2);
  CHECK(snaps[2].ready == 2);
  CHECK(snaps[2].overflow == 1);
  CHECK(order == std::vector<std::uint64_t>{0, 1, 2, 3});
  CHECK(w.stats.cqes_posted == 4);
  CHECK(w.stats.cq_overflowed == 2);
  CHECK(w.cq.overflow_len() == 0);
}

TEST_CASE("cq ring: deferred completions are posted when the batch is flushed or reaches 32") {
  CqWorld w(64, sim::PrimitiveCosts{});
  std::vector<std::size_t> ready;
  std::vector<std::uint64_t> order;
  w.spawn_owner([&] {
    for (std::uint64_t i = 0; i < 31; ++i) w.cq.complete_deferred(w.request(i, 0));
    ready.push_back(w.cq.ready());  // batched, not posted
    w.cq.complete_deferred(w.request(31, 0));
    ready.push_back(w.cq.ready());  // the 32nd flushes the batch
    w.cq.complete_deferred(w.request(32, 0));
    ready.push_back(w.cq.ready());
    w.cq.flush_completions();
    ready.push_back(w.cq.ready());
    w.pop_all(order);
  });
  w.engine.run_until_ns(1e6);

  CHECK(ready == std::vector<std::size_t>{0, 32, 32, 33});
  REQUIRE(order.size() == 33);
  for (std::size_t i = 0; i < order.size(); ++i) CHECK(order[i] == i);
}

TEST_CASE(
    "cq ring: the waiter is woken once CQ and overflow hold what it waits for, and stuck overflow ends the "
    "wait") {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1000;
  pc.wake_cycles = 600;  // paid by the poster for each wake-up it does
  CqWorld w(2, pc);
  struct {
    sim::TimeNs t = -1;
    std::size_t ready = 0, overflow = 0;
  } back;
  w.spawn_owner([&] {
    w.cq.wait(3);
    back = {sim::now_ns(), w.cq.ready(), w.cq.overflow_len()};
  });
  sim::Thread& poster = w.engine.spawn("poster", "peer", 1, [&] {
    for (std::uint64_t i = 0; i < 3; ++i) {
      sim::current().sleep_ns(10e3);
      w.cq.complete_post(w.request(i, 0));  // the third overflows the 2-entry CQ
    }
  });
  w.engine.run_until_ns(1e6);

  // One wake-up, at the third CQE (2 in the CQ + 1 on the overflow list), none before.
  CHECK(cycles_of(poster, "try_to_wake_up") == Approx(600.0));
  CHECK(back.t >= 30e3 + 1000);
  // The CQ is full and the overflow list cannot drain until the application reads: the wait
  // returns with 2 CQEs of the 3 it asked for (-EBUSY) instead of sleeping again.
  CHECK(back.ready == 2);
  CHECK(back.overflow == 1);
}
