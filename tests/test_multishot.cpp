// Multishot receive with a provided buffer ring (docs/models/multishot.md): one recv request that
// posts a CQE per arrival without completing, its poll armed once; the end of the buffer ring and
// of CQ room; and the echo server built on it. Times are hand-derived from the costs each test
// sets; the machine runs at 1 GHz, so cycles and ns are the same numbers.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <vector>

#include "cli_helpers.hpp"
#include "models/net/socket.hpp"
#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::UringWorld;

namespace {
// A CQE as the application read it: flags and all, and what was in flight after it.
struct Seen {
  std::uint64_t user_data;
  int result;
  unsigned flags;
  sim::TimeNs t;
  std::uint64_t in_flight;
};

bool more(const Seen& c) {
  return (c.flags & kCqeFMore) != 0;
}
int bid(const Seen& c) {
  return (c.flags & kCqeFBuffer) ? static_cast<int>(c.flags >> kCqeBufferShift) : -1;
}

KernelConfig kernel_6x() {
  KernelConfig k = test::test_kernel();
  const KernelConfig e = KernelConfig::for_era("6.x");
  k.era = e.era;
  k.forced_reissue_iowq = e.forced_reissue_iowq;
  k.tw_on_enter = e.tw_on_enter;
  return k;
}

// The application's side of one multishot recv (user_data 7, 64-byte buffers) on `sock` into a
// ring of `entries` buffers, all given at the start: it waits for CQEs until it has `want`, then
// stops. A CQE with F_MORE leaves the request in flight; the final one is released.
void run_app(UringWorld& w, Socket& sock, int entries, std::size_t want, std::vector<Seen>& seen,
             sim::TimeNs reap_after_ns = 0) {
  w.spawn_app([&w, &sock, entries, want, &seen, reap_after_ns] {
    BufRing& ring = w.ctx.register_buf_ring(entries);
    for (int b = 0; b < entries; ++b) ring.give_back(static_cast<std::uint16_t>(b));
    Request& r = w.request(Op::Recv, sock, 7, 64, false);
    r.multishot = true;
    r.buf_ring = &ring;
    std::vector<Request*> sqes{&r};
    w.ctx.enter(sqes, 0);
    if (reap_after_ns > 0) sim::current().sleep_ns(reap_after_ns);  // not reaping meanwhile
    while (seen.size() < want) {
      w.ctx.enter(sqes, 1);
      Cqe cqe;
      while (w.ctx.pop_cqe(cqe)) {
        if (!(cqe.flags & kCqeFMore)) w.ctx.release(*cqe.req);
        seen.push_back({cqe.user_data, cqe.result, cqe.flags, sim::now_ns(), w.ctx.in_flight()});
      }
    }
  });
}

// A peer that sends one 64-byte message at each of `at` (ns).
void run_peer(UringWorld& w, Socket& sock, std::vector<sim::TimeNs> at) {
  w.spawn_peer("peer", [&sock, at] {
    for (const sim::TimeNs t : at) {
      sim::current().sleep_ns(t - sim::now_ns());
      sock.deliver(64);
    }
  });
}
}  // namespace

TEST_CASE(
    "multishot: one CQE per arrival, each with F_MORE and its own buffer, the request stays in flight") {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1000;
  UringCosts uc = test::zero_uring_costs();
  uc.poll_wake = 100;
  uc.tw_run = 50;
  uc.buf_ring_select = 10;
  SocketCosts sc{};
  sc.tcp_recv = 200;
  UringWorld w(3, pc, kernel_6x(), uc);
  Socket sock(0, sc, [](int, std::uint32_t) {});
  std::vector<Seen> seen;
  run_app(w, sock, 4, 3, seen);
  run_peer(w, sock, {5000, 15000, 25000});
  w.engine.run_until_ns(1e6);

  REQUIRE(seen.size() == 3);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    INFO("CQE " << i);
    CHECK(seen[i].user_data == 7);
    CHECK(seen[i].result == 64);
    CHECK(more(seen[i]));
    CHECK(bid(seen[i]) == static_cast<int>(i));  // the ring's buffers in the order given
    CHECK((seen[i].flags & kCqeFSockNonempty) == 0);
    CHECK(seen[i].in_flight == 1);
    // Arrival + poll_wake 100 (the waker's) + wake-up 1000 + tw_run 50 + buffer select 10 +
    // tcp_recv 200: no submission, no poll arm per message.
    CHECK(seen[i].t == Approx(5000.0 + 10000.0 * static_cast<double>(i) + 1360.0));
  }
  const auto& s = w.ctx.stats();
  CHECK(s.sqes_submitted == 1);
  CHECK(s.cqes_posted == 0);  // CQEs with F_MORE are not completions
  CHECK(s.multishot_cqes == 3);
  CHECK(s.poll_armed == 1);  // armed once, at the first issue, and never again
  CHECK(s.poll_woken == 3);
  CHECK(s.buf_ring_empty == 0);
  CHECK(w.task.items_run() == 3);
  CHECK(w.engine.checks().total() == 0);
}

TEST_CASE("multishot: with 2 buffers never given back, the third arrival ends it with -ENOBUFS") {
  UringWorld w(3, sim::PrimitiveCosts{}, kernel_6x(), test::zero_uring_costs());
  SocketCosts sc{};
  Socket sock(0, sc, [](int, std::uint32_t) {});
  std::vector<Seen> seen;
  run_app(w, sock, 2, 3, seen);
  run_peer(w, sock, {5000, 15000, 25000, 35000});
  w.engine.run_until_ns(1e6);

  REQUIRE(seen.size() == 3);
  CHECK(more(seen[0]));
  CHECK(bid(seen[0]) == 0);
  CHECK(more(seen[1]));
  CHECK(bid(seen[1]) == 1);
  // The last CQE: no F_MORE (the request completed), no buffer, -ENOBUFS.
  CHECK(seen[2].result == kENoBufs);
  CHECK(seen[2].flags == 0);
  CHECK(seen[2].in_flight == 0);
  const auto& s = w.ctx.stats();
  CHECK(s.cqes_posted == 1);
  CHECK(s.multishot_cqes == 2);
  CHECK(s.buf_ring_empty == 1);
  // The third message stays queued in the socket, and so does the fourth: the ended recv's poll
  // left the socket's wait queue, so the fourth arrival woke nothing.
  CHECK(sock.readable_bytes() == 128);
  CHECK(s.poll_woken == 3);
  CHECK(w.engine.checks().total() == 0);
}

TEST_CASE("multishot: two arrivals before its task_work runs: one task_work item receives both") {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1000;  // the second message comes while the woken application is not yet running
  UringWorld w(3, pc, kernel_6x(), test::zero_uring_costs());
  SocketCosts sc{};
  Socket sock(0, sc, [](int, std::uint32_t) {});
  std::vector<Seen> seen;
  run_app(w, sock, 4, 2, seen);
  run_peer(w, sock, {5000, 5000});
  w.engine.run_until_ns(1e6);

  REQUIRE(seen.size() == 2);
  // The first receive takes one buffer's worth (64 of 128 bytes) and sees the rest still queued:
  // it receives again at once, in the same task_work.
  CHECK(seen[0].flags & kCqeFSockNonempty);
  CHECK(bid(seen[0]) == 0);
  CHECK((seen[1].flags & kCqeFSockNonempty) == 0);
  CHECK(bid(seen[1]) == 1);
  CHECK(more(seen[0]));
  CHECK(more(seen[1]));
  CHECK(w.ctx.stats().poll_woken == 2);
  CHECK(w.task.items_run() == 1);  // the second wake-up found the poll owned and queued nothing
  CHECK(sock.readable_bytes() == 0);
}

TEST_CASE("multishot: a full CQ ends it, the data goes in the final CQE, on the overflow list, in order") {
  KernelConfig k = kernel_6x();
  k.cq_entries = 2;
  UringWorld w(3, sim::PrimitiveCosts{}, k, test::zero_uring_costs());
  SocketCosts sc{};
  Socket sock(0, sc, [](int, std::uint32_t) {});
  std::vector<Seen> seen;
  // The application does not reap until all three messages are there.
  run_app(w, sock, 4, 3, seen, 50000);
  run_peer(w, sock, {5000, 15000, 25000});
  w.engine.run_until_ns(1e6);

  REQUIRE(seen.size() == 3);
  CHECK(bid(seen[0]) == 0);
  CHECK(bid(seen[1]) == 1);
  CHECK(bid(seen[2]) == 2);
  CHECK(more(seen[0]));
  CHECK(more(seen[1]));
  // No room for a third CQE with F_MORE: the recv ended, its final CQE carries the third message.
  CHECK_FALSE(more(seen[2]));
  CHECK(seen[2].result == 64);
  const auto& s = w.ctx.stats();
  CHECK(s.multishot_cqes == 2);
  CHECK(s.cq_overflowed == 1);
  CHECK(s.cqes_posted == 1);
  CHECK(w.ctx.in_flight() == 0);
  CHECK(w.engine.checks().total() == 0);
}

TEST_CASE(
    "multishot: with IOSQE_ASYNC an io-wq worker only arms the poll, even with the data already there") {
  UringWorld w(3, sim::PrimitiveCosts{}, kernel_6x(), test::zero_uring_costs());
  SocketCosts sc{};
  Socket sock(0, sc, [](int, std::uint32_t) {});
  sock.deliver(64);  // before the recv is submitted
  std::vector<Seen> seen;
  w.spawn_app([&] {
    BufRing& ring = w.ctx.register_buf_ring(4);
    for (std::uint16_t b = 0; b < 4; ++b) ring.give_back(b);
    Request& r = w.request(Op::Recv, sock, 7, 64, true);
    r.multishot = true;
    r.buf_ring = &ring;
    std::vector<Request*> sqes{&r};
    w.ctx.enter(sqes, 0);
    while (seen.size() < 2) {
      w.ctx.enter(sqes, 1);
      Cqe cqe;
      while (w.ctx.pop_cqe(cqe)) seen.push_back({cqe.user_data, cqe.result, cqe.flags, sim::now_ns(), 0});
    }
  });
  run_peer(w, sock, {50000});
  w.engine.run_until_ns(1e6);

  REQUIRE(seen.size() == 2);
  CHECK(more(seen[0]));
  CHECK(more(seen[1]));
  CHECK(bid(seen[0]) == 0);
  CHECK(bid(seen[1]) == 1);
  const auto& s = w.ctx.stats();
  CHECK(s.punted == 1);
  // Armed although readable: the queued data is received by the poll's task_work, in the owner.
  CHECK(s.poll_armed == 1);
  CHECK(s.poll_ready_at_arm == 1);
  CHECK(s.iowq_completed == 0);  // the worker never receives
  CHECK(s.multishot_cqes == 2);
  CHECK(s.cqes_posted == 0);
  CHECK(w.engine.checks().total() == 0);
}

namespace {
const std::string kDesign = testing::source_path("scenarios/designs/echo-multishot.json");

nlohmann::json run_design(const std::string& name, const std::string& args) {
  return testing::run_results(name, kDesign + " --set warmup_ms=5 --set duration_ms=20 " + args);
}
}  // namespace

TEST_CASE(
    "multishot echo: one SQE per round trip instead of two, every request accounted for, deterministic") {
  const auto dir = testing::fresh_dir("multishot-echo-rerun");
  const std::string args =
      "run " + kDesign + " --variant multishot --set warmup_ms=5 --set duration_ms=20 --quiet";
  const auto a = testing::run_cli(args + " --out " + (dir / "a").string());
  const auto b = testing::run_cli(args + " --out " + (dir / "b").string());
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  const std::string bytes = testing::slurp(dir / "a" / "results.json");
  CHECK(bytes == testing::slurp(dir / "b" / "results.json"));
  const auto ms = nlohmann::json::parse(bytes);
  const auto single = run_design("multishot-echo-single", "--variant single");

  const auto& u = ms["uring"];
  const long conns = ms["echo"]["connections"].get<long>();
  const long round_trips = ms["requests"]["completed"].get<long>();
  REQUIRE(round_trips > 1000);
  // Every SQE is a connection's first recv, a re-arm or a send, one send per data CQE.
  CHECK(ms["echo"]["multishot_rearms"] == 0);
  // A data CQE the server has not reaped yet has no send yet: at most one per connection, whose
  // client waits for its echo.
  const long unanswered = conns + u["multishot_cqes"].get<long>() - u["sqes_submitted"].get<long>();
  CHECK(unanswered >= 0);
  CHECK(unanswered <= conns);
  CHECK(u["sqes_submitted"].get<long>() < round_trips + 2 * conns);
  CHECK(u["poll_armed"].get<long>() == conns);
  CHECK(u["sqes_submitted"].get<long>() == u["cqes_posted"].get<long>() + u["in_flight_at_end"].get<long>());
  // Single-shot: a recv and a send per round trip.
  CHECK(single["uring"]["sqes_submitted"].get<long>() >
        2 * single["requests"]["completed"].get<long>() - 2 * conns);
  CHECK_FALSE(single["uring"].contains("multishot_cqes"));
  CHECK_FALSE(single["echo"].contains("recv_mode"));
}

TEST_CASE("multishot echo: a 2-buffer ring runs dry, ends recvs with -ENOBUFS and re-arms them") {
  const auto r = run_design("multishot-echo-2bufs", "--variant multishot --set workload.buf_ring_entries=2");
  const auto& e = r["echo"];
  const long enobufs = e["multishot_enobufs"].get<long>();
  CHECK(enobufs > 100);
  // Every ended recv is re-armed, once a buffer is free: some may still wait at the end.
  CHECK(e["multishot_rearms"].get<long>() >= enobufs - e["connections"].get<long>());
  CHECK(e["failed_ops"] == 0);  // -ENOBUFS is not a failure
  // Each -ENOBUFS is a selection that found the ring empty (a last one may not be reaped yet).
  const long empty = r["uring"]["buf_ring_empty"].get<long>();
  CHECK(empty >= enobufs);
  CHECK(empty <= enobufs + e["connections"].get<long>());
  const auto& u = r["uring"];
  CHECK(u["sqes_submitted"].get<long>() == u["cqes_posted"].get<long>() + u["in_flight_at_end"].get<long>());
  CHECK(r["requests"]["completed"].get<long>() > 1000);
}
