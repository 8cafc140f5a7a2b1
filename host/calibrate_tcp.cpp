// Loopback TCP send and recv, one thread holding both ends: on loopback the data is queued at the
// peer inside send() (the receive softirq runs in the sender's context), so recv() right after it
// finds the data and no wake-up is involved; those are measured in calibrate_wake.cpp.
#include <sys/socket.h>

#include <cerrno>

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
    b.say(fmt::format(
        "  loopback TCP {} B: send {:.0f} ns, recv {:.0f} ns; {} B: send {:.0f} ns, recv {:.0f} ns; "
        "recv EAGAIN {:.0f} ns",
        m.tcp_small, median(m.send_small), median(m.recv_small), m.tcp_large, median(m.send_large),
        median(m.recv_large), median(m.recv_eagain)));
  });
}

}  // namespace uringsim::host::calib
