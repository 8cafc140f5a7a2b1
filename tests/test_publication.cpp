// Shared state is published at the writer's local date (docs/architecture.md, "Lookahead and shared
// state"): a loopback send makes its data readable when the sender's work for it ends, not at the
// sender's clock, whatever the lookahead does. The socket lock of a local peer
// (docs/models/sockets.md). And the task_work list each era has: a lock up to 5.18, an llist
// (one atomic per add and per run) in 6.x. The machine runs at 1 GHz (1 cycle = 1 ns) with every
// cost 0 but the work charged.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

#include "cli_helpers.hpp"
#include "models/io/request.hpp"
#include "models/net/socket.hpp"
#include "sim/engine.hpp"
#include "sim/lock.hpp"
#include "sim/thread.hpp"

using namespace uringsim;

namespace {

struct Seen {
  std::uint64_t at_500 = 99, at_1500 = 99;
};

// The sender, from 1 ns, does 1000 ns of work (its send) and delivers 12 bytes; the reader looks
// at the socket at 500 ns, inside that work, and at 1500 ns, after it.
Seen simulate(bool lookahead) {
  sim::MachineSpec m;
  m.cores = 2;
  m.ghz = 1.0;
  sim::Engine e(m, sim::PrimitiveCosts{});
  e.set_lookahead(lookahead);
  const models::SocketCosts costs{};
  models::Socket sock(0, costs, [](int, std::uint32_t) {});
  Seen s;
  e.spawn("sender", "client", 0, [&] {
    sim::Thread& self = sim::current();
    self.sleep_ns(1);
    self.charge(1000, sim::intern("tcp_sendmsg"));
    sock.deliver(12, self.cpu());
  });
  e.spawn("reader", "server", 1, [&] {
    sim::Thread& self = sim::current();
    self.sleep_ns(500);
    s.at_500 = sock.readable_bytes();
    self.sleep_ns(1000);
    s.at_1500 = sock.readable_bytes();
  });
  e.run_until_ns(1e6);
  return s;
}

// One simulation per process: `simulate` runs in a child, which sends its outcome back.
template <class T, class F>
T in_child(F simulate) {
  int fd[2];
  if (pipe(fd) != 0) throw std::runtime_error("pipe");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    const T s = simulate();
    _exit(write(fd[1], &s, sizeof s) == static_cast<ssize_t>(sizeof s) ? 0 : 1);
  }
  close(fd[1]);
  T s;
  const ssize_t n = read(fd[0], &s, sizeof s);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(n == static_cast<ssize_t>(sizeof s));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return s;
}

Seen run(bool lookahead) {
  return in_child<Seen>([&] { return simulate(lookahead); });
}

// An armed poll whose wake callback costs 1000 cycles (the sender's task_work add and IPI).
struct SlowWake final : models::IoRequest {
  bool hipri() const override { return false; }
  void poll_wake() override { sim::current().charge(1000, sim::intern("kick")); }
  void async_done() override {}
};
struct Recv final : models::IoRequest {
  bool hipri() const override { return false; }
  void poll_wake() override {}
  void async_done() override {}
};

struct Locked {
  sim::TimeNs got_data = -1;  // when the reader's recv returned with the data
  std::uint64_t contended = 99;
  sim::TimeNs waited = -1;
};

// The sender, from 1 ns, does 100 ns of work and delivers 12 bytes to a socket with a poll armed
// (a 1000 ns wake-up). The reader tries a recv at 500 ns, inside the sender's wake-up. With a
// local peer (`local`) the sender holds the socket lock from 101 to 1101.
Locked simulate_lock(bool local, bool lookahead) {
  sim::MachineSpec m;
  m.cores = 2;
  m.ghz = 1.0;
  sim::Engine e(m, sim::PrimitiveCosts{});
  e.set_lookahead(lookahead);
  sim::LockClass cls("slock-AF_INET", sim::LockKind::Spin);
  const models::SocketCosts costs{};
  models::Socket sock(
      0, costs, [](int, std::uint32_t) {}, nullptr, local ? &cls : nullptr);
  SlowWake poll;
  poll.op = models::Op::Recv;
  Recv recv;
  recv.op = models::Op::Recv;
  recv.bytes = 12;
  sock.add_poll(poll);
  Locked o;
  e.spawn("sender", "client", 0, [&] {
    sim::Thread& self = sim::current();
    self.sleep_ns(1);
    self.charge(100, sim::intern("tcp_sendmsg"));
    sock.deliver(12, self.cpu());
  });
  e.spawn("reader", "server", 1, [&] {
    sim::current().sleep_ns(500);
    if (sock.try_issue(recv)) o.got_data = sim::now_ns();
  });
  e.run_until_ns(1e6);
  const auto t = cls.window_total();
  o.contended = t.contended;
  o.waited = t.wait_ns_total;
  return o;
}

}  // namespace

TEST_CASE("publication: the socket lock: a recv during a local sender's wake-ups spins until it lets go") {
  for (const bool lookahead : {true, false}) {
    INFO("lookahead " << lookahead);
    const Locked local = in_child<Locked>([&] { return simulate_lock(true, lookahead); });
    CHECK(local.got_data == Approx(1101));
    CHECK(local.contended == 1);
    CHECK(local.waited == Approx(601));
    // Data from the network: no lock, the data is there from 101.
    const Locked remote = in_child<Locked>([&] { return simulate_lock(false, lookahead); });
    CHECK(remote.got_data == Approx(500));
    CHECK(remote.contended == 0);
  }
}

TEST_CASE("publication: a loopback message is readable from the end of the sender's send, not before") {
  for (const bool lookahead : {true, false}) {
    INFO("lookahead " << lookahead);
    const Seen s = run(lookahead);
    CHECK(s.at_500 == 0);
    CHECK(s.at_1500 == 12);
  }
}

TEST_CASE(
    "publication: era 6.x's task_work list is an llist, one atomic per add and per run, and 5.18 locks it") {
  const std::string base = testing::source_path("scenarios/designs/echo-task-work.json") +
                           " --variant signal --set warmup_ms=0 --set duration_ms=20";  // window = whole run
  const auto x6 = testing::run_results("publication-6x", base);
  CHECK_FALSE(x6["locks"].contains("tctx->task_lock"));
  const auto& line = x6["atomics"]["tctx->task_list"]["sites"];
  // Every poll wake-up queues one item with one llist_add; every tctx_task_work takes the list
  // with one llist_del_all.
  const double adds = line["io_req_task_work_add"]["updates"].get<double>();
  const double takes = line["tctx_task_work"]["updates"].get<double>();
  REQUIRE(adds > 100);
  CHECK(adds == Approx(x6["uring"]["poll_woken"].get<double>()).epsilon(0.02));
  CHECK(takes == Approx(x6["uring"]["task_work"]["runs"].get<double>()).epsilon(0.05));
  CHECK(x6["atomics"]["tctx->task_list"]["bounces"].get<double>() > 0);  // client CPU 1, server CPU 0

  const auto x5 = testing::run_results("publication-518", base + " --set kernel.era=5.18");
  CHECK(x5["atomics"].empty());
  CHECK(x5["locks"]["tctx->task_lock"]["sites"]["io_req_task_work_add"]["acquisitions"].get<double>() > 100);
}

TEST_CASE(
    "publication: with URINGSIM_LOOKAHEAD=off a local-client echo gives the same results, with more events") {
  // Pinned server and client, 10 connections: no two threads reach a lock at the same date, so the
  // lookahead changes only how many events simulate the run (floats aside).
  const auto dir = testing::fresh_dir("publication-lookahead-off");
  const std::string args = " run " + testing::source_path("scenarios/designs/echo-task-work.json") +
                           " --variant signal --set warmup_ms=5 --set duration_ms=20 --quiet --out ";
  nlohmann::json res[2], info[2];
  const char* modes[2] = {"on", "off"};
  for (int i = 0; i < 2; ++i) {
    const auto out = dir / modes[i];
    const auto r = testing::run_shell(std::string("URINGSIM_LOOKAHEAD=") + modes[i] + " " + URINGSIM_EXE +
                                      args + out.string());
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    res[i] = nlohmann::json::parse(testing::slurp(out / "results.json"));
    info[i] = nlohmann::json::parse(testing::slurp(out / "run_info.json"));
  }
  CHECK(res[0]["requests"] == res[1]["requests"]);
  CHECK(res[0]["uring"]["poll_woken"] == res[1]["uring"]["poll_woken"]);
  CHECK(res[0]["latency_us"]["p50"].get<double>() ==
        Approx(res[1]["latency_us"]["p50"].get<double>()).epsilon(1e-9));
  CHECK(info[0]["events"].get<double>() < info[1]["events"].get<double>());

  const auto bad = testing::run_shell(std::string("URINGSIM_LOOKAHEAD=maybe ") + URINGSIM_EXE + args +
                                      (dir / "bad").string());
  CHECK(bad.exit_code == 1);
  CHECK(bad.output.find("URINGSIM_LOOKAHEAD=maybe: expected on or off") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "bad" / "results.json"));
}
