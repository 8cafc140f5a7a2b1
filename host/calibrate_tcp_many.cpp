// Loopback send + recv rotated over n connections, one thread holding both ends: with n beyond
// what the CPU's cache holds, each call finds its connection's state evicted by the others'
// (models/net/conn_cache.hpp). Every call of a rotation has n - 1 other connections' calls
// between it and its connection's previous one.
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "host/calibrate_bench.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host::calib {
namespace {

constexpr int kRungs[] = {1, 64, 128, 256, 512, 1024};
constexpr int kPairsPerChunk = 1024;  // calls of one timed chunk, whatever n
constexpr int kChunks = 7;
constexpr int kMsg = 64;

// As many connections as the open-file limit allows (two files each, some to spare), raising the
// soft limit to the hard one if need be.
int connections_allowed(int want) {
  rlimit r{};
  ::getrlimit(RLIMIT_NOFILE, &r);
  const rlim_t need = 2 * static_cast<rlim_t>(want) + 64;
  if (r.rlim_cur < need && r.rlim_max > r.rlim_cur) {
    r.rlim_cur = std::min(need, r.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &r);
    ::getrlimit(RLIMIT_NOFILE, &r);
  }
  if (r.rlim_cur >= need) return want;
  return r.rlim_cur > 64 ? static_cast<int>((r.rlim_cur - 64) / 2) : 0;
}

// ns per send + recv over the first n connections: the median over kChunks chunks of the mean,
// after one untimed rotation that brings the rotation's steady state.
double pair_ns(const Bench& b, const std::vector<std::unique_ptr<LoopbackPair>>& conns, int n) {
  char buf[kMsg] = {};
  auto rotation = [&] {
    for (int i = 0; i < n; ++i)
      if (::send(conns[i]->client(), buf, kMsg, 0) != kMsg) b.fail("loopback TCP: send of 64 B failed");
    for (int i = 0; i < n; ++i) LoopbackPair::recv_all(b, conns[i]->server(), buf, kMsg);
  };
  rotation();
  const int rotations = std::max(1, kPairsPerChunk / n);
  std::vector<double> t;
  for (int c = 0; c < kChunks && !b.stopping(); ++c) {
    const double t0 = now_ns();
    for (int k = 0; k < rotations; ++k) rotation();
    t.push_back((now_ns() - t0) / (static_cast<double>(rotations) * n));
  }
  return t.empty() ? 0 : median(t);
}

}  // namespace

void measure_tcp_many(const Bench& b, Measurements& m) {
  const int want = kRungs[std::size(kRungs) - 1];
  const int allowed = connections_allowed(want);
  if (allowed < want)
    m.tcp_many_limited =
        fmt::format("RLIMIT_NOFILE allows {} connections, not {} (raise it: ulimit -n)", allowed, want);
  if (m.tcp_many_n.empty()) {
    for (int n : kRungs)
      if (n <= allowed) m.tcp_many_n.push_back(n);
    m.tcp_many_pair.resize(m.tcp_many_n.size());
  }
  if (m.tcp_many_n.size() < 2) return;
  run_pinned(b, b.cpu_a, [&] {
    std::vector<std::unique_ptr<LoopbackPair>> conns;
    for (int i = 0; i < m.tcp_many_n.back(); ++i) conns.push_back(std::make_unique<LoopbackPair>());
    const std::size_t rungs = m.tcp_many_n.size();
    for (int r = 0; r < b.rounds(10) && !b.stopping(); ++r)
      for (std::size_t k = 0; k < rungs; ++k) {  // a different rung first each round: drift spreads
        const std::size_t j = (k + static_cast<std::size_t>(r)) % rungs;
        m.tcp_many_pair[j].push_back(pair_ns(b, conns, m.tcp_many_n[j]));
      }
    std::string line = "  loopback TCP 64 B send + recv over n connections:";
    for (std::size_t k = 0; k < rungs; ++k)
      line += fmt::format(" n = {} {:.0f} ns{}", m.tcp_many_n[k], median(m.tcp_many_pair[k]),
                          k + 1 < rungs ? "," : "");
    b.say(line);
  });
}

}  // namespace uringsim::host::calib
