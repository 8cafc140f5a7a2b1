// io_uring component tests, io-wq: what finding a free worker costs the enqueuer. The walk of the
// free list reads the worker's io_worker line (its reference count), and wake_up_process() of a
// worker that is already awake takes its pi_lock and reads its state. Those lines are where the
// worker last ran: they cost a transfer only when that is another CPU than the enqueuer's, and
// under the workers lock (before 6.6) the worker's line comes with the lock's own free-list lines.
// 5.x, which looks on past an awake worker, is not charged for it. Every other cost is zero and the machine
// runs at 1 GHz, so the enqueuer's CPU time is exactly what these charges add up to.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::DiskFile;
using uringsim::test::SeenCqe;
using uringsim::test::UringWorld;

namespace {
constexpr sim::TimeNs kL = 1000;     // wake-up latency: the woken worker runs this much later
constexpr sim::Cycles kLine = 100;   // one cache line from another CPU
constexpr sim::Cycles kPiLock = 10;  // the uncontended pi_lock
constexpr std::uint32_t kBytes = 4096;

struct Seen {
  sim::TimeNs enter_cpu = -1;  // the app's CPU time in the enter that queues reads 2 and 3
  int worker_cpu = -1;
};

// Read 1 creates worker 0 and leaves it asleep on the free list. Then one enter queues reads 2
// and 3 (IOSQE_ASYNC): read 2 wakes the sleeping worker; read 3 finds it awake on the free list
// (it runs kL later), which 6.x counts as found and 5.x passes over.
Seen enqueue_two(const char* era, int cores) {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = kL;
  KernelConfig k = test::test_kernel();
  const KernelConfig e = KernelConfig::for_era(era);
  k.era = e.era;
  k.iowq_lock = e.iowq_lock;
  k.iowq_rcu_wake = e.iowq_rcu_wake;
  k.iowq_wake_first_free = e.iowq_wake_first_free;
  UringCosts uc = test::zero_uring_costs();
  uc.cacheline_transfer = kLine;
  uc.pi_lock = kPiLock;
  uc.iowq_worker_lines = 1;
  uc.ttwu_running_lines = 1;
  // Three CPUs: the app on 0, the peer's CPU 2 reserved, worker 0 on CPU 1. One: all share it.
  UringWorld w(cores, pc, k, uc);
  DiskFile disk(11, 10000);
  Seen s;
  std::vector<SeenCqe> cqes;
  w.spawn_app([&] {
    std::vector<Request*> first{&w.request(Op::Read, disk, 1, kBytes, true)};
    w.ctx.enter(first, 1);
    w.reap(cqes);
    sim::current().sleep_ns(100000);  // worker 0 is idle and asleep
    std::vector<Request*> two{&w.request(Op::Read, disk, 2, kBytes, true),
                              &w.request(Op::Read, disk, 3, kBytes, true)};
    const sim::TimeNs t0 = sim::current().local_now_ns();
    w.ctx.enter(two, 0);
    s.enter_cpu = sim::current().local_now_ns() - t0;
    w.ctx.enter(two, 2);
    w.reap(cqes);
  });
  w.engine.run_until_ns(1e7);
  for (const auto& t : w.engine.threads())
    if (t->name() == "iou-wrk-0") s.worker_cpu = t->cpu();
  CHECK(cqes.size() == 3);
  return s;
}
}  // namespace

// Each case builds one engine (one simulation per process).
TEST_CASE(
    "uring: 6.x's lockless walk pays for a free worker's line from its CPU, and for waking one that is "
    "awake") {
  const Seen s = enqueue_two("6.x", 3);
  CHECK(s.worker_cpu == 1);
  // Read 2: the worker's line. Read 3: the line again, the pi_lock and the worker's state line.
  CHECK(s.enter_cpu == Approx(kLine + kLine + kPiLock + kLine));
}

TEST_CASE(
    "uring: 6.x's walk of a free worker on the enqueuer's own CPU pays only the awake worker's pi_lock") {
  const Seen s = enqueue_two("6.x", 1);
  CHECK(s.worker_cpu == 0);
  CHECK(s.enter_cpu == Approx(kPiLock));  // the lines are on the enqueuer's CPU already
}

TEST_CASE(
    "uring: before 6.6 the workers lock brings the worker's line, and passing over an awake worker is not "
    "charged") {
  const Seen s = enqueue_two("5.16", 3);
  CHECK(s.worker_cpu == 1);
  // No iowq_worker_lines: the lock's free-list lines (0 here) carry the worker's node. Read 3
  // passes over the awake worker uncharged: this walk visits more awake workers than the
  // kernel's, which would stop at one still TASK_INTERRUPTIBLE (docs/models/io-wq.md).
  CHECK(s.enter_cpu == Approx(0));
}
