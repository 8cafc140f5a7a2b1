// Who runs a ring's task_work and when (models/uring/tw_delivery.hpp): TWA_SIGNAL kicks a running
// task with an IPI, COOP_TASKRUN does not, and DEFER_TASKRUN keeps the work on the ring until the
// submitter waits, waking it only once enough is queued. Hand-built cases; 1 GHz, so cycles = ns.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "models/net/socket.hpp"
#include "models/uring/task.hpp"
#include "sim/sched.hpp"
#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::DiskFile;
using uringsim::test::SeenCqe;
using uringsim::test::UringWorld;

namespace {
constexpr sim::TimeNs kUs = 1000;

RingSetup setup_of(TwMode m) {
  RingSetup s;
  s.coop_taskrun = m == TwMode::Coop;
  s.single_issuer = s.defer_taskrun = m == TwMode::Defer;
  return s;
}
KernelConfig kernel_6x() {
  KernelConfig k = test::test_kernel();
  k.era = "6.x";
  return k;
}
std::uint64_t count_of(const sim::Thread& t, sim::Label l) {
  const auto w = t.window_counts_by_symbol();
  return l < w.size() ? w[l] : 0;
}
double cycles_of(const sim::Thread& t, sim::Label l) {
  return l < t.cycles_by_symbol().size() ? t.cycles_by_symbol()[l] : 0.0;
}

// A recv armed on an empty socket; its data arrives at 10 us while the application computes in
// user space until 50 us, then waits for the CQE.
struct RunningOwner {
  std::uint64_t ipis = 0;
  double waker_ipi_cycles = 0;
  std::vector<SeenCqe> seen;
};
RunningOwner run_while_owner_computes(TwMode mode) {
  UringCosts uc{};
  uc.tw_notify_ipi = 700;
  UringWorld w(3, sim::PrimitiveCosts{}, kernel_6x(), uc, setup_of(mode));
  SocketCosts sc{};
  Socket sock(0, sc, [](int, std::uint32_t) {});
  RunningOwner out;
  w.spawn_app([&] {
    std::vector<Request*> sqes{&w.request(Op::Recv, sock, 1, 64, false)};
    w.ctx.enter(sqes, 0);                                         // submit only: the poll is armed
    sim::current().compute(50 * kUs, sim::intern("[app] work"));  // user space, not waiting
    w.ctx.enter(sqes, 1);
    w.reap(out.seen);
  });
  sim::Thread& peer = w.spawn_peer("peer", [&] {
    sim::current().sleep_ns(10 * kUs);
    sock.deliver(64);
  });
  w.engine.run_until_ns(1e6);
  out.ipis = w.task.ipis();
  out.waker_ipi_cycles = cycles_of(peer, task_work_ipi_label());
  return out;
}
}  // namespace

TEST_CASE("task_work delivery: TWA_SIGNAL kicks a task running in user space with an IPI") {
  const RunningOwner sig = run_while_owner_computes(TwMode::Signal);
  CHECK(sig.ipis == 1);
  CHECK(sig.waker_ipi_cycles == 700);  // the sender's cost, paid in the waker's context
  // The work runs at the task's next kernel entry, after its 50 us of user work.
  REQUIRE(sig.seen.size() == 1);
  CHECK(sig.seen[0].t >= 50 * kUs);
}

TEST_CASE("task_work delivery: COOP_TASKRUN sends no IPI to a task running in user space") {
  const RunningOwner coop = run_while_owner_computes(TwMode::Coop);
  CHECK(coop.ipis == 0);
  CHECK(coop.waker_ipi_cycles == 0);
  REQUIRE(coop.seen.size() == 1);
  CHECK(coop.seen[0].t >= 50 * kUs);
}

namespace {
// Four recvs armed on empty sockets, data arriving at 10, 20, 30 and 40 us while the submitter
// waits for all four CQEs.
struct Waiter {
  std::vector<SeenCqe> seen;
  std::uint64_t app_switches = 0, wakeups = 0, skipped = 0, runs = 0;
};
Waiter run_wait_for_four(TwMode mode) {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1 * kUs;
  UringWorld w(3, pc, kernel_6x(), UringCosts{}, setup_of(mode));
  SocketCosts sc{};
  std::vector<std::unique_ptr<Socket>> socks;
  for (int i = 0; i < 4; ++i) socks.push_back(std::make_unique<Socket>(i, sc, [](int, std::uint32_t) {}));
  Waiter out;
  sim::Thread& app = w.spawn_app([&] {
    std::vector<Request*> sqes;
    for (int i = 0; i < 4; ++i) sqes.push_back(&w.request(Op::Recv, *socks[i], i, 64, false));
    w.ctx.enter(sqes, 4);
    w.reap(out.seen);
  });
  w.spawn_peer("peer", [&] {
    for (int i = 0; i < 4; ++i) {
      sim::current().sleep_ns(10 * kUs);
      socks[i]->deliver(64);
    }
  });
  w.engine.run_until_ns(1e6);
  out.app_switches = count_of(app, sim::sym::schedule());
  out.wakeups = w.ctx.tw().stats().wakeups;
  out.skipped = w.ctx.tw().stats().lazy_skipped;
  out.runs = w.task.runs() + w.ctx.tw().stats().runs;
  return out;
}
}  // namespace

TEST_CASE("task_work delivery: with TWA_SIGNAL every completion wakes a submitter waiting for several") {
  const Waiter sig = run_wait_for_four(TwMode::Signal);
  REQUIRE(sig.seen.size() == 4);
  // Each wake-up runs one item, counts 1, 2, 3 CQEs and sleeps again.
  CHECK(sig.app_switches == 4);
  CHECK(sig.runs == 4);
}

TEST_CASE("task_work delivery: DEFER_TASKRUN does not wake the submitter until wait_nr items are queued") {
  const Waiter defer = run_wait_for_four(TwMode::Defer);
  REQUIRE(defer.seen.size() == 4);
  // The lazy wake-up: the first three adds see fewer items than the waiter wants and skip it.
  CHECK(defer.skipped == 3);
  CHECK(defer.wakeups == 1);
  CHECK(defer.app_switches == 1);
  CHECK(defer.runs == 1);
  // All four run in one pass after the fourth arrival, in the order they were queued.
  for (int i = 0; i < 4; ++i) {
    CHECK(defer.seen[static_cast<std::size_t>(i)].user_data == static_cast<std::uint64_t>(i));
    CHECK(defer.seen[static_cast<std::size_t>(i)].t >= 40 * kUs);
  }
}

TEST_CASE(
    "task_work delivery: with DEFER_TASKRUN an io-wq completion is handed to the submitter and wakes it at "
    "once") {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1 * kUs;
  UringWorld w(3, pc, kernel_6x(), UringCosts{}, setup_of(TwMode::Defer));
  DiskFile disk(7, 10 * kUs);
  disk.set_service(2, 30 * kUs);
  std::vector<SeenCqe> seen;
  sim::Thread& app = w.spawn_app([&] {
    std::vector<Request*> sqes{&w.request(Op::Read, disk, 1, 4096, true),
                               &w.request(Op::Read, disk, 2, 4096, true)};
    w.ctx.enter(sqes, 2);
    w.reap(seen);
  });
  w.engine.run_until_ns(1e6);
  REQUIRE(seen.size() == 2);
  // Not lazy (io_req_complete_post under a lockless CQ): each completion wakes the waiter.
  CHECK(w.ctx.tw().stats().wakeups == 2);
  CHECK(w.ctx.tw().stats().lazy_skipped == 0);
  CHECK(w.ctx.tw().stats().items_run == 2);
  CHECK(count_of(app, sim::sym::schedule()) == 2);
  CHECK(w.ctx.stats().cqes_posted == 2);
  // The lockless CQ: only the submitter posts, so completion_lock is never taken.
  int found = 0;
  for (const sim::LockClass* l : w.engine.lock_classes())
    if (l->name() == "ctx->completion_lock") {
      ++found;
      CHECK(l->window_total().acquisitions == 0);
    }
  CHECK(found == 1);
}

TEST_CASE(
    "task_work delivery: DEFER_TASKRUN runs at most max(20, wait_nr) items per wait, after a wake-up what is "
    "missing") {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 5 * kUs;  // all 30 arrivals are queued before the woken waiter runs
  UringWorld w(3, pc, kernel_6x(), UringCosts{}, setup_of(TwMode::Defer));
  SocketCosts sc{};
  constexpr int kN = 30;
  std::vector<std::unique_ptr<Socket>> socks;
  for (int i = 0; i < kN; ++i) socks.push_back(std::make_unique<Socket>(i, sc, [](int, std::uint32_t) {}));
  std::vector<std::size_t> per_wait;
  std::vector<SeenCqe> seen;
  w.spawn_app([&] {
    std::vector<Request*> sqes;
    for (int i = 0; i < kN; ++i) sqes.push_back(&w.request(Op::Recv, *socks[i], i, 64, false));
    w.ctx.enter(sqes, 1);
    while (seen.size() < kN) {
      const std::size_t before = seen.size();
      if (before > 0) w.ctx.enter(sqes, 1);
      w.reap(seen);
      per_wait.push_back(seen.size() - before);
    }
  });
  w.spawn_peer("peer", [&] {
    sim::current().sleep_ns(10 * kUs);
    for (int i = 0; i < kN; ++i) socks[i]->deliver(64);
  });
  w.engine.run_until_ns(1e6);
  // After the wake-up: nr_wait (1) item; each later entry: io_run_local_work's cap of 20, then the rest.
  CHECK(per_wait == std::vector<std::size_t>{1, 20, 9});
  for (int i = 0; i < kN; ++i)
    CHECK(seen[static_cast<std::size_t>(i)].user_data == static_cast<std::uint64_t>(i));
}

namespace {
// A kernel thread runs three task_work items under PREEMPT_NONE; the first wakes a sleeper that
// preempts it at once (CFS, the runner ahead by more than the wake-up granularity). Returns the
// items that ran before the sleeper did.
int items_before_wakee(bool resched_per_item) {
  sim::MachineSpec m;
  m.cores = 1;
  m.ghz = 1.0;
  m.sched.policy = sim::SchedPolicy::Cfs;
  m.sched.preempt = sim::PreemptModel::None;
  sim::Engine e(m, sim::PrimitiveCosts{});
  KernelConfig k = test::test_kernel();
  k.tw_resched_per_item = resched_per_item;
  UringCosts uc{};
  Task task(uc, k);
  int done = 0, seen_by_wakee = -1;
  sim::ThreadOptions kthread;
  kthread.kernel = true;
  sim::Thread& wakee = e.spawn("wakee", "wakee", 0, [&] {
    sim::current().park();
    seen_by_wakee = done;
  });
  sim::Thread& owner = e.spawn(
      "owner", "owner", 0,
      [&] {
        auto& self = sim::current();
        self.compute(2e6, sim::intern("work"));  // ahead of the sleeper by more than the granularity
        task.add(nullptr, [&] {
          sim::wake_up_process(wakee);
          ++done;
        });
        for (int i = 0; i < 2; ++i)
          task.add(nullptr, [&] {
            sim::current().compute(10 * kUs, sim::intern("item"));
            ++done;
          });
        task.run();
        self.park();
      },
      kthread);
  task.set_thread(owner);
  e.run_until_ns(1e9);
  return seen_by_wakee;
}
}  // namespace

// io_handle_tw_list: if need_resched() after an item, flush the ring, drop uring_lock and
// cond_resched() (commit f58680085478). Without the check (the model's 5.x eras) a kernel-mode task
// under PREEMPT_NONE runs its whole batch before the thread it woke. One engine per process: two cases.
TEST_CASE("task_work run: 6.8's handle_tw_list lets a woken thread preempt between items") {
  CHECK(items_before_wakee(true) == 1);
}
TEST_CASE("task_work run: without the per-item check the whole batch runs before the woken thread") {
  CHECK(items_before_wakee(false) == 3);
}
