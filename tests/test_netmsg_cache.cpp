// A send's or recv's async header (6.10+, models/uring/netmsg_cache.hpp): taken from the ring's
// netmsg cache at prep, or kmalloc'd when it is empty; an issue under uring_lock puts it back, up
// to the cache's 128; one in io-wq cannot, and the header is kfree'd with the request, in the
// submitter's task_work. The machine runs at 1 GHz (cycles = ns); every io_uring cost is zero but
// the header's two.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "models/net/socket.hpp"
#include "models/uring/netmsg_cache.hpp"
#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::cycles_of;
using uringsim::test::SeenCqe;
using uringsim::test::UringWorld;

namespace {
constexpr double kAlloc = 100, kFree = 40;

KernelConfig kernel(const char* era) {
  KernelConfig k = KernelConfig::for_era(era);
  k.max_bound = 2;
  k.max_unbound = 2;
  k.sq_entries = 256;
  k.cq_entries = 512;
  return k;
}

UringCosts header_costs() {
  UringCosts uc = test::zero_uring_costs();
  uc.net_msg_alloc = kAlloc;
  uc.net_msg_free = kFree;
  return uc;
}

struct Paid {
  double app_alloc = 0, app_free = 0, workers = 0;
  std::size_t cqes = 0;
};

// `n` sends of 8 bytes on one socket, one at a time (each waited for), IOSQE_ASYNC or not; at the
// end the application runs its pending task_work (the last request's free).
Paid sends_one_at_a_time(const char* era, int n, bool force_async) {
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1000;
  UringWorld w(3, pc, kernel(era), header_costs());
  const SocketCosts sc{};  // the socket keeps a reference to its costs
  Socket sock(0, sc, [](int, std::uint32_t) {});
  std::vector<SeenCqe> seen;
  sim::Thread& app = w.spawn_app([&] {
    for (int i = 0; i < n; ++i) {
      std::vector<Request*> sqes{&w.request(Op::Send, sock, i, 8, force_async)};
      w.ctx.enter(sqes, 1);
      w.reap(seen);
    }
    sim::current().sleep_ns(100e3);
    w.task.run();
  });
  w.engine.run_until_ns(10e6);
  Paid p;
  p.app_alloc = cycles_of(app, "__kmalloc_noprof");
  p.app_free = cycles_of(app, "kfree");
  for (const auto& t : w.engine.threads())
    if (t.get() != &app) p.workers += cycles_of(*t, "__kmalloc_noprof") + cycles_of(*t, "kfree");
  p.cqes = seen.size();
  return p;
}
}  // namespace

TEST_CASE(
    "netmsg cache: each IOSQE_ASYNC send allocates its header, and the submitter frees it after io-wq") {
  const Paid p = sends_one_at_a_time("6.x", 8, true);
  CHECK(p.cqes == 8);
  CHECK(p.app_alloc == Approx(8 * kAlloc));  // io-wq never gives a header back: every prep misses
  CHECK(p.app_free == Approx(8 * kFree));    // freed with the request, in the submitter's task_work
  CHECK(p.workers == 0);
}

TEST_CASE("netmsg cache: inline sends reuse one header, allocated by the first and never freed") {
  const Paid p = sends_one_at_a_time("6.x", 8, false);
  CHECK(p.cqes == 8);
  CHECK(p.app_alloc == Approx(kAlloc));
  CHECK(p.app_free == 0);
}

TEST_CASE("netmsg cache: before 6.10 a plain send has no async header") {
  const Paid p = sends_one_at_a_time("5.16", 8, true);
  CHECK(p.cqes == 8);
  CHECK(p.app_alloc == 0);
  CHECK(p.app_free == 0);
}

TEST_CASE("netmsg cache: the cache holds 128 headers, and an issue that finds it full frees its own") {
  // 130 recvs on empty sockets arm poll and keep their headers (130 allocations); data for all of
  // them comes at 50 us, task_work re-issues each inline and gives its header back: 128 fit, 2 are
  // freed. Then 130 inline sends: each takes a cached header and gives it back before the next
  // one's prep, so none allocates.
  constexpr int kConns = 130;
  static_assert(kConns > NetMsgCache::kMax);
  sim::PrimitiveCosts pc;
  pc.wakeup_latency_ns = 1000;
  UringWorld w(3, pc, kernel("6.x"), header_costs());
  const SocketCosts sc{};  // the sockets keep a reference to their costs
  std::vector<std::unique_ptr<Socket>> socks;
  for (int c = 0; c < kConns; ++c)
    socks.push_back(std::make_unique<Socket>(c, sc, [](int, std::uint32_t) {}));
  std::vector<SeenCqe> seen;
  double alloc_after_recvs = 0, free_after_recvs = 0;
  sim::Thread& app = w.spawn_app([&] {
    std::vector<Request*> sqes;
    for (int c = 0; c < kConns; ++c) sqes.push_back(&w.request(Op::Recv, *socks[c], c, 8, false));
    w.ctx.enter(sqes, kConns);
    w.reap(seen);
    alloc_after_recvs = cycles_of(sim::current(), "__kmalloc_noprof");
    free_after_recvs = cycles_of(sim::current(), "kfree");
    sqes.clear();
    for (int c = 0; c < kConns; ++c) sqes.push_back(&w.request(Op::Send, *socks[c], 1000 + c, 8, false));
    w.ctx.enter(sqes, kConns);
    w.reap(seen);
  });
  w.spawn_peer("peer", [&] {
    sim::current().sleep_ns(50e3);
    for (auto& s : socks) s->deliver(8);
  });
  w.engine.run_until_ns(10e6);
  CHECK(seen.size() == 2 * kConns);
  CHECK(alloc_after_recvs == Approx(kConns * kAlloc));
  CHECK(free_after_recvs == Approx((kConns - NetMsgCache::kMax) * kFree));
  CHECK(cycles_of(app, "__kmalloc_noprof") == Approx(kConns * kAlloc));
  CHECK(cycles_of(app, "kfree") == Approx((kConns - NetMsgCache::kMax) * kFree));
}
