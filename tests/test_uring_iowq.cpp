// io_uring component tests, io-wq: punting a non-pollable request, worker creation when a worker
// blocks, the max_workers cap, idle exit, hashed (per-inode) serialisation, and the lock design each
// era and kernel.iowq.lock value gets. The work is a disk double whose blocking issue sleeps a known
// service time between the scheduler hooks. Every io_uring path cost is zero, the machine runs at
// 1 GHz, and a wake-up (including a new worker's first run) takes L = 1000 ns, so the times below
// follow from L and the service times alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::DiskFile;
using uringsim::test::SeenCqe;
using uringsim::test::Span;
using uringsim::test::UringWorld;

namespace {
constexpr sim::TimeNs kL = 1000;   // wake-up latency
constexpr sim::TimeNs kS = 10000;  // disk service time
constexpr std::uint32_t kBytes = 4096;

sim::PrimitiveCosts latency_only() {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = kL;
  return pc;
}

const Span* span_of(const DiskFile& f, std::uint64_t user_data) {
  for (const Span& s : f.spans())
    if (s.user_data == user_data) return &s;
  return nullptr;
}
}  // namespace

TEST_CASE("uring: a non-pollable request that gets EAGAIN inline is punted to the bound io-wq account") {
  UringWorld w(3, latency_only(), test::test_kernel(), test::zero_uring_costs());
  DiskFile disk(11, kS);
  std::vector<SeenCqe> seen;
  w.spawn_app([&] {
    std::vector<Request*> sqes{&w.request(Op::Read, disk, 1, kBytes, false)};
    w.ctx.enter(sqes, 1);
    w.reap(seen);
  });
  w.engine.run_until_ns(1e6);

  const auto& s = w.ctx.stats();
  CHECK(disk.nonblock_attempts() == 1);  // the inline attempt; the worker issues it blocking
  CHECK(s.punt_non_pollable == 1);
  CHECK(s.punted == 1);
  CHECK(s.poll_armed == 0);
  CHECK(s.inline_completed == 0);
  CHECK(s.iowq_completed == 1);
  CHECK(s.worker_blocked == 1);
  const IoWqAcct& bound = w.wq.acct(0);
  CHECK(bound.created == 1);  // created by the enqueue: nobody was running
  CHECK(bound.nr_workers == 1);
  CHECK(bound.create_requests == 0);
  CHECK(w.wq.acct(1).created == 0);

  REQUIRE(disk.spans().size() == 1);
  const Span& sp = disk.spans()[0];
  CHECK(sp.thread == "iou-wrk-0");
  CHECK(sp.start == Approx(kL));  // the new worker's first run
  CHECK(sp.end == Approx(kL + kS));
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].user_data == 1);
  CHECK(seen[0].result == static_cast<int>(kBytes));
  CHECK(seen[0].t == Approx(kL + kS + kL));  // the CQE post wakes the waiting application
}

TEST_CASE("uring: a worker blocking with work queued asks the owner for a new worker through task_work") {
  KernelConfig k = test::test_kernel();
  k.max_bound = 4;
  UringWorld w(4, latency_only(), k, test::zero_uring_costs());
  DiskFile disk(11, kS);
  std::vector<SeenCqe> seen;
  w.spawn_app([&] {
    // Not IOSQE_ASYNC: the second enqueue finds the first worker counted as running and does not
    // create another one itself.
    std::vector<Request*> sqes{&w.request(Op::Read, disk, 1, kBytes, false),
                               &w.request(Op::Read, disk, 2, kBytes, false)};
    w.ctx.enter(sqes, 2);
    w.reap(seen);
  });
  struct Probe {
    int workers;
    std::uint64_t created, create_requests, tw_run;
    bool tw_pending;
  };
  Probe after_submit{}, after_block{}, after_tw{};
  auto probe = [&](Probe& p) {
    const IoWqAcct& a = w.wq.acct(0);
    p = {a.nr_workers, a.created, a.create_requests, w.task.items_run(), w.task.pending()};
  };
  // Worker 0 starts at L = 1000 and blocks at once; the owner wakes for the task_work at 2L.
  w.engine.at_ns(500, [&] { probe(after_submit); });
  w.engine.at_ns(1500, [&] { probe(after_block); });
  w.engine.at_ns(2500, [&] { probe(after_tw); });
  w.engine.run_until_ns(1e6);

  CHECK(after_submit.workers == 1);
  CHECK(after_submit.create_requests == 0);
  // Worker 0 blocked with request 2 queued: a creation request waits in the owner's task_work.
  CHECK(after_block.workers == 1);
  CHECK(after_block.created == 1);
  CHECK(after_block.create_requests == 1);
  CHECK(after_block.tw_pending);
  // The owner ran it (create_worker_cb) and created worker 1.
  CHECK(after_tw.workers == 2);
  CHECK(after_tw.created == 2);
  CHECK(after_tw.tw_run == 1);
  CHECK_FALSE(after_tw.tw_pending);

  const Span* a = span_of(disk, 1);
  const Span* b = span_of(disk, 2);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->thread == "iou-wrk-0");
  CHECK(b->thread == "iou-wrk-1");
  CHECK(a->start == Approx(kL));
  // Block at L, owner woken at 2L, the new worker's first run at 3L.
  CHECK(b->start == Approx(3 * kL));
  CHECK(b->start < a->end);  // the second runs while the first is still blocked
  CHECK(a->end == Approx(kL + kS));
  CHECK(b->end == Approx(3 * kL + kS));
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].user_data == 1);
  CHECK(seen[1].user_data == 2);
  CHECK(seen[1].t == Approx(4 * kL + kS));  // woken by the second CQE
  CHECK(w.wq.acct(0).create_requests == 1);
  CHECK(w.wq.workers_peak() == 2);
}

TEST_CASE("uring: max_bound caps the workers and the rest of the forced-async work waits and runs in waves") {
  KernelConfig k = test::test_kernel();
  k.max_bound = 2;
  UringWorld w(4, latency_only(), k, test::zero_uring_costs());
  DiskFile disk(11, kS);
  constexpr int kN = 6;
  std::vector<SeenCqe> seen;
  w.spawn_app([&] {
    std::vector<Request*> sqes;
    for (int i = 0; i < kN; ++i) sqes.push_back(&w.request(Op::Read, disk, i, kBytes, true));
    w.ctx.enter(sqes, kN);
    w.reap(seen);
  });
  struct Mid {
    std::size_t queued;
    int workers, running;
  } mid{};
  w.engine.at_ns(5000, [&] {
    const IoWqAcct& a = w.wq.acct(0);
    mid = {a.list.size(), a.nr_workers, a.nr_running};
  });
  w.engine.run_until_ns(1e6);

  const IoWqAcct& a = w.wq.acct(0);
  CHECK(a.created == 2);
  CHECK(a.workers_peak == 2);
  CHECK(w.wq.workers_peak() == 2);
  CHECK(disk.max_concurrent() == 2);
  // All six were queued before either new worker first ran (at L).
  CHECK(a.list_peak == 6);
  // In the first wave: two in service, four waiting, both workers blocked in the disk.
  CHECK(mid.queued == 4);
  CHECK(mid.workers == 2);
  CHECK(mid.running == 0);
  CHECK(a.create_requests >= 1);  // asked for, refused by the cap

  // Three waves of two, in submission order: request i runs in wave i / 2.
  REQUIRE(disk.spans().size() == kN);
  for (int i = 0; i < kN; ++i) {
    const Span* s = span_of(disk, i);
    REQUIRE(s);
    INFO("request " << i);
    CHECK(s->start == Approx(kL + (i / 2) * kS));
    CHECK(s->end == Approx(kL + (i / 2 + 1) * kS));
  }
  REQUIRE(seen.size() == kN);
  CHECK(seen.back().t == Approx(kL + 3 * kS + kL));
  CHECK(a.nr_running == 0);
  CHECK(w.wq.free_workers() == 2);
}

TEST_CASE("uring: idle workers exit after the idle timeout but the last of the account stays") {
  KernelConfig k = test::test_kernel();
  k.max_bound = 3;
  k.worker_idle_timeout_ns = 1e6;
  UringWorld w(5, latency_only(), k, test::zero_uring_costs());
  DiskFile disk(11, kS);
  std::vector<SeenCqe> seen;
  w.spawn_app([&] {
    std::vector<Request*> sqes;
    for (int i = 0; i < 3; ++i) sqes.push_back(&w.request(Op::Read, disk, i, kBytes, true));
    w.ctx.enter(sqes, 3);
    w.reap(seen);
  });
  struct Probe {
    int workers, running;
    std::uint64_t exited;
    std::size_t free;
  };
  Probe before{}, after{};
  auto probe = [&](Probe& p) {
    const IoWqAcct& a = w.wq.acct(0);
    p = {a.nr_workers, a.nr_running, a.exited, w.wq.free_workers()};
  };
  // The work ends at L + S = 11000 and the workers go idle; their timeout ends at 1,011,000 and
  // they run again at 1,012,000. The survivor then sleeps until 2,012,000.
  w.engine.at_ns(1.005e6, [&] { probe(before); });
  w.engine.at_ns(1.5e6, [&] { probe(after); });
  w.engine.run_until_ns(9.5e6);  // several more timeouts of the last worker

  REQUIRE(seen.size() == 3);
  CHECK(w.wq.acct(0).created == 3);
  CHECK(before.workers == 3);
  CHECK(before.exited == 0);
  CHECK(before.free == 3);
  CHECK(after.workers == 1);
  CHECK(after.exited == 2);
  CHECK(after.free == 1);
  CHECK(after.running == 0);
  CHECK(w.wq.acct(0).nr_workers == 1);
  CHECK(w.wq.acct(0).exited == 2);
  CHECK(w.wq.workers_alive() == 1);
}

TEST_CASE("uring: hashed writes to one inode run serially while writes to another inode run alongside") {
  KernelConfig k = test::test_kernel();
  k.max_bound = 4;
  UringWorld w(6, latency_only(), k, test::zero_uring_costs());
  DiskFile fa(7, kS), fb(9, kS);
  std::vector<SeenCqe> seen;
  w.spawn_app([&] {
    // Interleaved: the enqueue keeps each inode's chain contiguous (A1 A2 A3 B1 B2).
    std::vector<Request*> sqes{
        &w.request(Op::Write, fa, 1, kBytes, true), &w.request(Op::Write, fb, 11, kBytes, true),
        &w.request(Op::Write, fa, 2, kBytes, true), &w.request(Op::Write, fb, 12, kBytes, true),
        &w.request(Op::Write, fa, 3, kBytes, true)};
    w.ctx.enter(sqes, 0);
    // A4 arrives while A's chain runs: a free worker finds the bucket busy (the account
    // stalls) and A4 runs only once the chain is done.
    sim::current().sleep_ns(6000);
    std::vector<Request*> more{&w.request(Op::Write, fa, 4, kBytes, true)};
    w.ctx.enter(more, 6);
    w.reap(seen);
  });
  w.engine.run_until_ns(1e6);

  CHECK(w.wq.acct(0).created == 4);  // IOSQE_ASYNC creates up to the cap...
  CHECK(fa.max_concurrent() == 1);   // ...but one inode's writes never overlap
  CHECK(fb.max_concurrent() == 1);
  REQUIRE(fa.spans().size() == 4);
  REQUIRE(fb.spans().size() == 2);
  // A1..A3 are one chain on one worker, back to back from L; A4 follows when the bucket frees.
  for (int i = 0; i < 4; ++i) {
    const Span& s = fa.spans()[static_cast<std::size_t>(i)];
    INFO("A" << i + 1);
    CHECK(s.user_data == static_cast<std::uint64_t>(i + 1));
    CHECK(s.start == Approx(kL + i * kS));
    CHECK(s.end == Approx(kL + (i + 1) * kS));
  }
  for (int i = 0; i < 3; ++i) CHECK(fa.spans()[static_cast<std::size_t>(i)].thread == fa.spans()[0].thread);
  for (std::size_t i = 0; i < fa.spans().size(); ++i)
    for (std::size_t j = i + 1; j < fa.spans().size(); ++j)
      CHECK_FALSE(test::overlap(fa.spans()[i], fa.spans()[j]));
  CHECK_FALSE(test::overlap(fb.spans()[0], fb.spans()[1]));
  // The other inode's chain runs at the same time, on another worker.
  CHECK(fb.spans()[0].start == Approx(kL));
  CHECK(fb.spans()[1].end == Approx(kL + 2 * kS));
  CHECK(test::overlap(fa.spans()[0], fb.spans()[0]));
  CHECK(fb.spans()[0].thread != fa.spans()[0].thread);
  REQUIRE(seen.size() == 6);
  CHECK(seen.back().t == Approx(kL + 4 * kS + kL));
}

TEST_CASE(
    "uring: work queued while a worker is going idle is taken by that worker without a creation request") {
  // Split locks (5.18+): the worker checks its queue under acct->lock, then files itself as free
  // under wqe->lock. Each spinlock section takes 1000 ns (the uncontended cost is paid inside
  // it), so an enqueue can land between the two.
  sim::PrimitiveCosts pc = latency_only();
  pc.spin_lock_fast_cycles = 1000;
  KernelConfig k = test::test_kernel();
  k.era = "5.18";
  k.iowq_lock = IoWqLock::Split;
  UringWorld w(4, pc, k, test::zero_uring_costs());
  DiskFile disk(11, kS);
  std::vector<SeenCqe> seen;
  w.spawn_app([&] {
    std::vector<Request*> sqes{&w.request(Op::Read, disk, 1, kBytes, false)};
    w.ctx.enter(sqes, 0);
    // The enqueue's sections (acct, wqe), create_worker's and create_io_worker's (wqe): worker 0
    // is spawned at 4000 and first runs at 5000. It takes request 1 (acct 5000-6000, busy under
    // wqe 6000-7000), blocks (hook 7000-8000) until 18000, posts (completion_lock 18000-19000),
    // re-checks in handle_work (19000-20000) and worker_main (20000-21000), and files itself
    // free (wqe 21000-22000). Request 2 is queued at 21500, after its last check.
    sim::current().sleep_ns(21500 - sim::now_ns());
    std::vector<Request*> more{&w.request(Op::Read, disk, 2, kBytes, false)};
    w.ctx.enter(more, 2);
    w.reap(seen);
  });
  w.engine.run_until_ns(1e6);

  const Span* a = span_of(disk, 1);
  const Span* b = span_of(disk, 2);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->start == Approx(7000));
  CHECK(a->end == Approx(18000));
  // The kernel's worker would not sleep on work queued after its check (the enqueue's wake-up, or
  // a task still running, makes schedule() return without the sleep hook): it looks again and
  // takes request 2 itself, with no creation request and no second worker. It waits for the
  // enqueue's acct->lock section (until 22500), then its own busy section under wqe->lock: 23500.
  CHECK(b->thread == "iou-wrk-0");
  CHECK(b->start == Approx(23500));
  CHECK(w.wq.acct(0).create_requests == 0);
  CHECK(w.wq.acct(0).created == 1);
  CHECK(seen.size() == 2);
}

namespace {
// Acquisitions of each io-wq lock by call site, in a run of one punted disk read (the enqueue
// creates a worker, which takes the read, blocks in the disk, posts and goes idle), with the kernel
// a scenario of this era and kernel.iowq.lock resolves to. Every io-wq lock made is listed.
using SiteCounts = std::map<std::string, std::map<std::string, std::uint64_t>>;
struct LockUse {
  SiteCounts sites;
  std::map<std::string, std::string> list_guard;  // work list -> its lock, from the topology
  int pools = 0;                                  // io-wq queues declared (one per io_wq)
};

LockUse io_wq_locks_of_one_punt(const std::string& era, const std::string& lock) {
  const auto s =
      config::load_scenario_text(R"({"name": "l", "workload": {"type": "nop"}, "kernel": {"era": ")" + era +
                                     R"(", "iowq": {"lock": ")" + lock + R"("}}})",
                                 "test");
  UringWorld w(3, latency_only(), KernelConfig::from(s), test::zero_uring_costs());
  DiskFile disk(11, kS);
  std::vector<SeenCqe> seen;
  w.spawn_app([&] {
    std::vector<Request*> sqes{&w.request(Op::Read, disk, 1, kBytes, false)};
    w.ctx.enter(sqes, 1);
    w.reap(seen);
  });
  w.engine.run_until_ns(1e6);
  REQUIRE(seen.size() == 1);
  LockUse use;
  for (const sim::LockClass* l : w.engine.lock_classes()) {
    if (l->name() != "wqe->lock" && l->name().rfind("acct->", 0) != 0) continue;
    auto& sites = use.sites[l->name()];
    for (const auto& [site, st] : l->sites()) sites[sim::label_name(site)] = st.acquisitions;
  }
  for (const auto& e : w.engine.topology().edges)
    if (e.label == "protected by") use.list_guard[e.from] = e.to;
  for (const auto& n : w.engine.topology().nodes) use.pools += n.name == "io-wq";
  return use;
}

// 5.15-5.17: wqe->lock alone, at every site, the sleep hook included.
void check_global(LockUse u) {
  CHECK(u.sites.size() == 1);
  auto& wqe = u.sites["wqe->lock"];
  CHECK(wqe["io_wqe_enqueue"] == 1);         // insert and wake in one hold
  CHECK(wqe["io_wq_worker_sleeping"] == 2);  // blocked in the disk, then idle
  CHECK(wqe["io_wqe_dec_running"] == 0);
  CHECK(u.list_guard["io-wq bound work list"] == "wqe->lock");
  CHECK(u.list_guard["io-wq unbound work list"] == "wqe->lock");
}

// 5.18+: the work-list sites under acct->lock, the free list under wqe->lock, no wqe->lock in the
// sleep hook.
void check_split(LockUse u) {
  CHECK(u.sites.size() == 3);
  auto& bound = u.sites["acct->lock[bound]"];
  auto& wqe = u.sites["wqe->lock"];
  CHECK(bound["io_wqe_enqueue"] == 1);  // the insert...
  CHECK(wqe["io_wqe_enqueue"] == 1);    // ...then the wake, under the other lock
  CHECK(bound["io_wqe_dec_running"] == 2);
  CHECK(wqe["io_wq_worker_sleeping"] == 0);
  CHECK(wqe["io_wqe_dec_running"] == 0);
  CHECK(u.sites["acct->lock[unbound]"].empty());  // no unbound work
  CHECK(u.list_guard["io-wq bound work list"] == "acct->lock[bound]");
  CHECK(u.list_guard["io-wq unbound work list"] == "acct->lock[unbound]");
}

// 6.15+: no wqe->lock at all; the free list, counts and creation under the account's own
// acct->workers_lock, the work list under acct->lock, and the enqueue wakes under RCU (6.6).
void check_workers(LockUse u) {
  CHECK(u.sites.size() == 4);
  CHECK(u.sites.count("wqe->lock") == 0);
  auto& bound = u.sites["acct->lock[bound]"];
  auto& workers = u.sites["acct->workers_lock[bound]"];
  CHECK(bound["io_wqe_enqueue"] == 1);  // the insert; no lock for the wake-up
  CHECK(workers["io_wqe_enqueue"] == 0);
  CHECK(workers["io_wqe_create_worker"] == 1);  // nr_workers++ for the first worker
  CHECK(workers["create_io_worker"] == 1);      // onto the free list
  CHECK(workers["__io_worker_busy"] == 1);      // off the free list as it takes the read
  // Back on it when idle: in the pass after the read, whose schedule() does not sleep (the worker
  // is still TASK_RUNNING), and in the next, which sleeps.
  CHECK(workers["io_wqe_worker"] == 2);
  CHECK(bound["io_wqe_dec_running"] == 2);  // the sleep hook peeks under acct->lock
  CHECK(workers["io_wq_worker_sleeping"] == 0);
  CHECK(bound["__io_worker_busy"] == 0);  // worker-list changes never under the list lock
  CHECK(u.sites["acct->lock[unbound]"].empty());
  CHECK(u.sites["acct->workers_lock[unbound]"].empty());
  CHECK(u.list_guard["io-wq bound work list"] == "acct->lock[bound]");
  CHECK(u.list_guard["io-wq unbound work list"] == "acct->lock[unbound]");
}
}  // namespace

TEST_CASE(
    "uring: era 6.x with kernel.iowq.lock auto takes the per-account acct->workers_lock, no wq-wide lock") {
  check_workers(io_wq_locks_of_one_punt("6.x", "auto"));
}

TEST_CASE("uring: kernel.iowq.lock workers overrides era 5.16's global locking") {
  check_workers(io_wq_locks_of_one_punt("5.16", "workers"));
}

TEST_CASE("uring: kernel.iowq.lock split on era 6.x wakes a free worker without wqe->lock (6.6)") {
  const LockUse u = io_wq_locks_of_one_punt("6.x", "split");
  auto sites = u.sites;
  CHECK(sites.size() == 3);
  CHECK(sites["acct->lock[bound]"]["io_wqe_enqueue"] == 1);
  CHECK(sites["wqe->lock"]["io_wqe_enqueue"] == 0);  // 5.18 takes it here (check_split)
  CHECK(sites["wqe->lock"]["__io_worker_busy"] == 1);
}

TEST_CASE("uring: era 5.16 with kernel.iowq.lock auto takes the global wqe->lock") {
  check_global(io_wq_locks_of_one_punt("5.16", "auto"));
}

TEST_CASE("uring: era 5.18 with kernel.iowq.lock auto takes the split acct->lock and wqe->lock") {
  check_split(io_wq_locks_of_one_punt("5.18", "auto"));
}

TEST_CASE("uring: kernel.iowq.lock split overrides era 5.16's global locking") {
  check_split(io_wq_locks_of_one_punt("5.16", "split"));
}

TEST_CASE("uring: kernel.iowq.lock global overrides era 6.x's workers locking") {
  check_global(io_wq_locks_of_one_punt("6.x", "global"));
}

TEST_CASE("uring: a pre-6.4 era has one io-wq per task on the one-node machine: 6.4's layout") {
  // Before 6.4 io_wq had one io_wqe per NUMA node and a task queued to its own node's; the model's
  // machine is one node, so each era has one pool, with both accounts' lists (6.4: "One wqe per
  // wq", no change on one node, as mmtests saw).
  const LockUse u = io_wq_locks_of_one_punt("5.18", "auto");
  CHECK(u.list_guard.size() == 2);  // the bound and unbound lists, of that pool
  CHECK(u.pools == 1);
}
