// Loopback TCP send and recv, one thread holding both ends: on loopback the data is queued at the
// peer inside send() (the receive softirq runs in the sender's context), so recv() right after it
// finds the data and no wake-up is involved; those are measured in calibrate_wake.cpp.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <stdexcept>

#include <fmt/format.h>

#include "host/calibrate_bench.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host::calib {
namespace {

struct SendRecv {
  double send = 0, recv = 0;
};

// Medians over `reps` messages of `bytes`: send() alone, then recv() of all of it alone.
SendRecv send_recv_ns(const Bench& b, const LoopbackPair& p, int bytes, int reps) {
  std::vector<char> buf(static_cast<std::size_t>(bytes), 'x');
  std::vector<double> s, r;
  for (int i = 0; i < reps && !b.stopping(); ++i) {
    const double t0 = now_ns();
    const ssize_t n = ::send(p.client(), buf.data(), buf.size(), 0);
    const double t1 = now_ns();
    if (n != bytes) b.fail(fmt::format("loopback TCP: send of {} bytes returned {}", bytes, n));
    LoopbackPair::recv_all(b, p.server(), buf.data(), bytes);
    const double t2 = now_ns();
    s.push_back(t1 - t0 - b.clock_ns);
    r.push_back(t2 - t1 - b.clock_ns);
  }
  if (s.empty()) return {};
  return {median(s), median(r)};
}

// Round trips of a 12-byte message over one loopback connection, the receivers spinning on
// recv(MSG_DONTWAIT) so that nobody sleeps: both ends in this thread (same CPU), or the far end
// echoing from a thread on other_cpu. The difference is what moving the socket's and the
// buffers' cache lines between the CPUs costs, per message twice.
struct PingPong {
  double same = 0, cross = 0;
};
void recv_spin(int fd, char* buf, int n) {
  const double deadline = now_ns() + 1e9;  // the other end is gone: never spin forever
  for (int got = 0; got < n;) {
    if (now_ns() > deadline) throw std::runtime_error("loopback TCP: no data within a second");
    const ssize_t k = ::recv(fd, buf + got, static_cast<std::size_t>(n - got), MSG_DONTWAIT);
    if (k > 0)
      got += static_cast<int>(k);
    else if (k == 0 || (errno != EAGAIN && errno != EINTR))
      throw std::runtime_error("loopback TCP: recv failed");
  }
}
PingPong ping_pong_ns(const Bench& b, int other_cpu, int reps) {
  constexpr int kMsg = 12;
  LoopbackPair p;
  char buf[kMsg] = {};
  PingPong out;
  const double t0 = now_ns();
  for (int i = 0; i < reps; ++i) {
    if (::send(p.client(), buf, kMsg, 0) != kMsg) b.fail("loopback TCP: ping-pong send failed");
    recv_spin(p.server(), buf, kMsg);
    if (::send(p.server(), buf, kMsg, 0) != kMsg) b.fail("loopback TCP: ping-pong send failed");
    recv_spin(p.client(), buf, kMsg);
  }
  out.same = (now_ns() - t0) / reps;
  std::atomic<bool> failed{false};
  double t1 = 0;
  {
    Joined echo([&] {
      try {
        pin_to_cpu(other_cpu);
        char e[kMsg];
        for (int i = 0; i < reps; ++i) {
          recv_spin(p.server(), e, kMsg);
          if (::send(p.server(), e, kMsg, 0) != kMsg) throw std::runtime_error("send");
        }
      } catch (const std::exception&) {
        failed.store(true);
      }
    });
    t1 = now_ns();
    for (int i = 0; i < reps && !failed.load(); ++i) {
      if (::send(p.client(), buf, kMsg, 0) != kMsg) b.fail("loopback TCP: ping-pong send failed");
      recv_spin(p.client(), buf, kMsg);
    }
  }
  if (failed.load()) b.fail("loopback TCP: the echo thread on the other CPU failed");
  out.cross = (now_ns() - t1) / reps;
  return out;
}

}  // namespace

void measure_tcp(const Bench& b, Measurements& m) {
  run_pinned(b, b.cpu_a, [&] {
    LoopbackPair p;
    send_recv_ns(b, p, m.tcp_large, 100);  // warm up: socket buffers grown, caches
    char c = 0;
    for (int r = 0; r < b.rounds(60) && !b.stopping(); ++r) {
      const SendRecv small = send_recv_ns(b, p, m.tcp_small, 300);
      const SendRecv large = send_recv_ns(b, p, m.tcp_large, 300);
      m.send_small.push_back(small.send);
      m.recv_small.push_back(small.recv);
      m.send_large.push_back(large.send);
      m.recv_large.push_back(large.recv);
      bool eagain = true;
      m.recv_eagain.push_back(per_call_ns(20, 100, [&] {
        eagain = eagain && ::recv(p.server(), &c, 1, MSG_DONTWAIT) == -1 && errno == EAGAIN;
      }));
      if (!eagain) b.fail("loopback TCP: recv on an empty socket did not return EAGAIN");
    }
    // An epoll client's wait when one connection is readable (level-triggered, so it stays so):
    // the call, ep_poll's scan of the ready list and one event copied out.
    const int ep = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) b.fail("epoll_create1 failed");
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (::epoll_ctl(ep, EPOLL_CTL_ADD, p.server(), &ev) != 0) b.fail("epoll_ctl failed");
    if (::send(p.client(), "x", 1, 0) != 1) b.fail("loopback TCP: send of 1 byte failed");
    epoll_event out[64];
    bool one = true;
    for (int r = 0; r < b.rounds(60) && !b.stopping(); ++r)
      m.epoll_wait_one.push_back(
          per_call_ns(20, 100, [&] { one = one && ::epoll_wait(ep, out, 64, 0) == 1; }));
    ::close(ep);
    LoopbackPair::recv_all(b, p.server(), &c, 1);
    if (!one) b.fail("epoll_wait on one readable socket did not return one event");
    if (b.cpu_b >= 0) {
      for (int r = 0; r < b.rounds(20) && !b.stopping(); ++r) {
        const PingPong pp = ping_pong_ns(b, b.cpu_b, 2000);
        m.tcp_rtt_same.push_back(pp.same);
        m.tcp_rtt_cross.push_back(pp.cross);
      }
      b.say(
          fmt::format("  loopback TCP 12 B round trip, spinning receivers: both ends on CPU {} {:.0f} ns, "
                      "the far end on CPU {} {:.0f} ns",
                      b.cpu_a, median(m.tcp_rtt_same), b.cpu_b, median(m.tcp_rtt_cross)));
    }
    b.say(fmt::format(
        "  loopback TCP {} B: send {:.0f} ns, recv {:.0f} ns; {} B: send {:.0f} ns, recv {:.0f} ns; "
        "recv EAGAIN {:.0f} ns, epoll_wait with one ready {:.0f} ns",
        m.tcp_small, median(m.send_small), median(m.recv_small), m.tcp_large, median(m.send_large),
        median(m.recv_large), median(m.recv_eagain), median(m.epoll_wait_one)));
  });
}

}  // namespace uringsim::host::calib
