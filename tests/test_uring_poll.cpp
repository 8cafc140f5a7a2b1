// io_uring component tests, pollable files: the inline issue → async poll → wake → task_work →
// re-issue path, and what an io-wq worker does with a forced-async recv on an empty socket in the
// blocking (5.15) and hybrid (5.16+) modes. Times are hand-derived from the costs each test sets;
// the machine runs at 1 GHz, so cycles and ns are the same numbers.
#include <catch2/catch.hpp>

#include <vector>

#include "models/net/socket.hpp"
#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::cycles_of;
using uringsim::test::SeenCqe;
using uringsim::test::UringWorld;

namespace {
// One IOSQE_ASYNC recv (user_data 3) on an empty socket whose 64 bytes arrive at 10 us, on 3 CPUs
// with 1 us wake-ups and tcp_recv 200: io-wq as it stands at 5 us, the CQEs, and the counters.
struct ForcedAsyncRecv {
  struct {
    int workers, running;
    std::size_t free;
    std::uint64_t blocked, poll_armed;
  } mid{};
  std::vector<SeenCqe> seen;
  UringStats stats;
  int unbound_created = 0, bound_created = 0, create_requests = 0;
  std::uint64_t tw_items = 0;
};
ForcedAsyncRecv run_forced_async_recv(const KernelConfig& k, UringCosts uc) {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1000;
  SocketCosts sc{};
  sc.tcp_recv = 200;
  UringWorld w(3, pc, k, uc);
  Socket sock(0, sc, [](int, std::uint32_t) {});
  ForcedAsyncRecv out;
  w.spawn_app([&] {
    std::vector<Request*> sqes{&w.request(Op::Recv, sock, 3, 100, true)};
    w.ctx.enter(sqes, 1);
    w.reap(out.seen);
  });
  w.spawn_peer("peer", [&] {
    sim::current().sleep_ns(10000);
    sock.deliver(64);
  });
  w.engine.at_ns(5000, [&] {
    const auto& u = w.wq.acct(1);
    out.mid = {u.nr_workers, u.nr_running, w.wq.free_workers(), w.ctx.stats().worker_blocked,
               w.ctx.stats().poll_armed};
  });
  w.engine.run_until_ns(1e6);
  out.stats = w.ctx.stats();
  out.unbound_created = w.wq.acct(1).created;
  out.bound_created = w.wq.acct(0).created;
  out.create_requests = w.wq.acct(1).create_requests;
  out.tw_items = w.task.items_run();
  return out;
}
}  // namespace

TEST_CASE(
    "uring: recv on an empty socket arms poll and a delivery wakes the owner and task_work re-issues it") {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1000;
  UringCosts uc = test::zero_uring_costs();
  uc.poll_wake = 100;  // paid by the sender, in whose context the wake callback runs
  uc.tw_run = 50;
  SocketCosts sc{};
  sc.tcp_recv = 200;
  UringWorld w(3, pc, test::test_kernel(), uc);
  Socket sock(0, sc, [](int, std::uint32_t) {});

  std::vector<SeenCqe> seen;
  w.spawn_app([&] {
    std::vector<Request*> sqes{&w.request(Op::Recv, sock, 7, 100, false)};
    w.ctx.enter(sqes, 1);
    w.reap(seen);
  });
  sim::Thread& peer = w.spawn_peer("peer", [&] {
    sim::current().sleep_ns(5000);
    sock.deliver(64);
  });
  struct Before {
    std::uint64_t poll_armed, punted, cqes;
    int workers;
    bool tw_pending;
  } before{};
  w.engine.at_ns(2500, [&] {
    const auto& s = w.ctx.stats();
    before = {s.poll_armed, s.punted, s.cqes_posted, w.wq.workers_alive(), w.task.pending()};
  });
  w.engine.run_until_ns(1e6);

  // Before the data: the request waits on the socket, nothing went to io-wq.
  CHECK(before.poll_armed == 1);
  CHECK(before.punted == 0);
  CHECK(before.cqes == 0);
  CHECK(before.workers == 0);
  CHECK_FALSE(before.tw_pending);

  REQUIRE(seen.size() == 1);
  CHECK(seen[0].user_data == 7);
  CHECK(seen[0].result == 64);  // all that arrived, less than the 100 asked for
  // Delivery at 5000 + poll_wake 100 (the waker flushes its work before the wake is seen)
  // + wake-up latency 1000 + tw_run 50 + tcp_recv 200 in the owner's re-issue = 6350.
  CHECK(seen[0].t == Approx(6350.0));

  const auto& s = w.ctx.stats();
  CHECK(s.poll_armed == 1);
  CHECK(s.poll_woken == 1);
  CHECK(s.inline_completed == 1);  // the task_work re-issue, not the first attempt
  CHECK(s.punted == 0);
  CHECK(s.iowq_completed == 0);
  CHECK(w.wq.workers_alive() == 0);
  CHECK(w.task.items_run() == 1);
  CHECK(sock.readable_bytes() == 0);
  CHECK(cycles_of(peer, "io_async_wake") == Approx(100.0));
}

TEST_CASE("uring: blocking async mode: a forced-async recv on an empty socket sleeps in the worker") {
  KernelConfig k = test::test_kernel();
  k.era = "5.15";
  k.poll_once = true;
  k.async_mode = AsyncMode::Blocking;
  k.apoll_ready = ApollReady::Inline;
  const auto r = run_forced_async_recv(k, test::zero_uring_costs());
  const auto& mid = r.mid;
  const auto& seen = r.seen;

  // While waiting for data the worker is asleep inside the recv: not running, not free.
  CHECK(mid.workers == 1);
  CHECK(mid.running == 0);
  CHECK(mid.free == 0);
  CHECK(mid.blocked == 1);
  CHECK(mid.poll_armed == 0);

  REQUIRE(seen.size() == 1);
  CHECK(seen[0].user_data == 3);
  CHECK(seen[0].result == 64);
  // Delivery at 10000 wakes the worker (latency 1000), which receives (200) and posts the CQE
  // at 11200; that wakes the application (latency 1000): 12200.
  CHECK(seen[0].t == Approx(12200.0));
  const auto& s = r.stats;
  CHECK(s.worker_blocked == 1);
  CHECK(s.poll_armed == 0);
  CHECK(s.iowq_completed == 1);
  CHECK(s.inline_completed == 0);
  CHECK(r.unbound_created == 1);  // sockets go to the unbound account
  CHECK(r.bound_created == 0);
  CHECK(r.create_requests == 0);  // nothing else was queued when it blocked
}

TEST_CASE("uring: hybrid async mode: a forced-async recv on an empty socket arms poll and frees the worker") {
  UringCosts uc = test::zero_uring_costs();
  uc.tw_run = 50;
  KernelConfig k = test::test_kernel();
  k.async_mode = AsyncMode::Hybrid;
  const auto r = run_forced_async_recv(k, uc);
  const auto& mid = r.mid;
  const auto& seen = r.seen;

  // While waiting for data the worker is idle on the free list: the socket holds the request.
  CHECK(mid.workers == 1);
  CHECK(mid.running == 0);
  CHECK(mid.free == 1);
  CHECK(mid.blocked == 0);
  CHECK(mid.poll_armed == 1);

  REQUIRE(seen.size() == 1);
  CHECK(seen[0].user_data == 3);
  CHECK(seen[0].result == 64);
  // Delivery at 10000 queues task_work and wakes the owner (latency 1000), which re-issues the
  // recv inline: tw_run 50 + tcp_recv 200 → 11250, one wake-up earlier than the blocking mode.
  CHECK(seen[0].t == Approx(11250.0));
  const auto& s = r.stats;
  CHECK(s.worker_blocked == 0);
  CHECK(s.poll_armed == 1);
  CHECK(s.poll_woken == 1);
  CHECK(s.iowq_completed == 0);    // the worker never completed it
  CHECK(s.inline_completed == 1);  // the owner's task_work did
  CHECK(r.tw_items == 1);
  CHECK(r.unbound_created == 1);
}

TEST_CASE("uring: since 6.3 a poll-woken forced-async recv goes back to io-wq (io_req_task_submit)") {
  UringCosts uc = test::zero_uring_costs();
  uc.tw_run = 50;
  KernelConfig k = test::test_kernel();
  k.async_mode = AsyncMode::Hybrid;
  k.forced_reissue_iowq = true;
  const auto r = run_forced_async_recv(k, uc);
  REQUIRE(r.seen.size() == 1);
  CHECK(r.seen[0].result == 64);
  // Delivery at 10000 queues task_work and wakes the owner (1000); its task_work (50) queues the
  // request to io-wq and wakes the idle worker (1000), which receives (200) and posts the CQE at
  // 12250; that wakes the owner again (1000): 13250, two wake-ups later than the inline re-issue.
  CHECK(r.seen[0].t == Approx(13250.0));
  const auto& s = r.stats;
  CHECK(s.poll_woken == 1);
  CHECK(s.reissued_to_iowq == 1);
  CHECK(s.punted == 2);            // the submission's and the re-issue's
  CHECK(s.iowq_completed == 1);    // the worker completed it the second time
  CHECK(s.inline_completed == 0);  // the task_work did not issue it
  CHECK(r.tw_items == 1);
  CHECK(r.unbound_created == 1);  // the same worker, idle again on the free list, took it
}
