#pragma once
// Shared by the calibration micro-benchmarks (host/calibrate_*.cpp): the run's context (CPUs,
// repetitions, the stop of host::RunGuard), timing, pinning, futexes, bounded spin waits and a
// loopback TCP connection. Every wait here is bounded and gives up on a stop request.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <liburing.h>

#include "host/calibrate_measurements.hpp"
#include "host/guard.hpp"

namespace uringsim::host::calib {

struct Bench {
  const RunGuard& guard;
  bool quick = false;
  int cpu_a = 0, cpu_b = -1;  // the CPUs benchmarks pin to; cpu_b = -1 with a single CPU
  double clock_ns = 0;        // cost of one clock read, subtracted from individually timed calls
  std::function<void(const std::string&)> progress;

  // Rounds (samples) of a benchmark: `full` normally, ~10x fewer with --quick.
  int rounds(int full) const { return quick ? std::max(3, full / 10) : full; }
  bool stopping() const { return guard.stop_requested(); }
  // A benchmark that could not finish: the stop's own error if there was one, else `what`.
  [[noreturn]] void fail(const std::string& what) const;
  void say(const std::string& line) const {
    if (progress) progress(line);
  }
};

// CLOCK_MONOTONIC in ns: the same clock on every CPU, so threads can compare their readings.
double now_ns();
// The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID): what the scheduler charged it.
double thread_cpu_ns();
// Pins the calling thread; std::runtime_error if the CPU cannot be used.
void pin_to_cpu(int cpu);
// The same to a set of CPUs: the calling thread may run on any of them.
void allow_cpus(std::initializer_list<int> cpus);
// The CPUs this process may run on, in order.
std::vector<int> allowed_cpus();

// Private futex operations on a 32-bit atomic. wait: returns after a wake, a value change, a
// signal or timeout_ns.
void futex_wait(std::atomic<std::int32_t>& word, std::int32_t expected, double timeout_ns);
int futex_wake(std::atomic<std::int32_t>& word, int n);

// ns per call of op: the median over `chunks` chunks of `chunk` back-to-back calls of the mean per
// call. A chunk the scheduler cut into (another process, a preempted vCPU) is then an outlier
// instead of a share of a mean.
template <typename Op>
double per_call_ns(int chunks, int chunk, Op op);

// Spins (no pause: the time it notices a change is what is measured) until pred() holds; false
// after timeout_ns or a stop request.
template <typename Pred>
bool spin_until(const Bench& b, Pred pred, double timeout_ns = 2e9) {
  const double end = now_ns() + timeout_ns;
  for (std::uint32_t i = 1;; ++i) {
    if (pred()) return true;
    if ((i & 0x3ff) == 0 && (b.stopping() || now_ns() > end)) return false;
  }
}

// Runs fn on a new thread pinned to cpu, with SIGINT/SIGTERM blocked there (the coordinating thread
// takes them), and waits for it. Then throws the stop's error if there was a stop (what fn threw
// on the way out does not matter then), else rethrows what fn threw.
void run_pinned(const Bench& b, int cpu, const std::function<void()>& fn);

// A thread that is joined when this goes out of scope, so a benchmark that throws leaves none.
class Joined {
 public:
  template <typename F>
  explicit Joined(F&& f) : t_(std::forward<F>(f)) {}
  ~Joined() {
    if (t_.joinable()) t_.join();
  }
  Joined(const Joined&) = delete;
  Joined& operator=(const Joined&) = delete;
  void join() { t_.join(); }

 private:
  std::thread t_;
};

// An io_uring instance; std::system_error (the setup's errno) if the kernel refuses the setup.
class Ring {
 public:
  explicit Ring(unsigned entries, unsigned flags = 0);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  io_uring* get() { return &ring_; }
  int fd() const { return ring_.ring_fd; }

 private:
  io_uring ring_{};
};

// Reaps the one CQE that must be there (a request at depth 1 that the wait completed); checks its
// result.
void reap_one(const Bench& b, io_uring* ring, int expected_res, const char* what);

// A TCP connection over 127.0.0.1 with both ends in this process, TCP_NODELAY on both; closed on
// destruction. std::runtime_error if it cannot be set up.
class LoopbackPair {
 public:
  LoopbackPair();
  ~LoopbackPair();
  LoopbackPair(const LoopbackPair&) = delete;
  LoopbackPair& operator=(const LoopbackPair&) = delete;
  int client() const { return client_; }
  int server() const { return server_; }
  // Receives exactly n bytes on fd without blocking (the data is already queued on loopback);
  // std::runtime_error if it does not come within a second.
  static void recv_all(const Bench& b, int fd, char* buf, int n);

 private:
  int client_ = -1, server_ = -1;
};

template <typename Op>
double per_call_ns(int chunks, int chunk, Op op) {
  std::vector<double> t;
  for (int c = 0; c < chunks; ++c) {
    const double t0 = now_ns();
    for (int i = 0; i < chunk; ++i) op();
    t.push_back((now_ns() - t0) / chunk);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// One-way times (ns) of `iters` futex wake-ups, from the calling thread (pinned to b.cpu_a) to a
// thread asleep on b.cpu_b after b.cpu_b had nothing to do for idle_ns; host/wake_probe.hpp.
std::vector<double> idle_wake_one_way(const Bench& b, int iters, double idle_ns);

// One round of `iters` TWA_SIGNAL kicks (calibrate_kick.cpp): the calling thread (pinned to
// b.cpu_a) sends to a socket whose poll a ring's task armed and spins on in user space on b.cpu_b.
// Per kick: the send()'s time with the kick and without (ns), how long the task was away, and when
// that began from the start of the send(). Empty with `unavailable` set if the kernel refuses the
// ring; host/kick_probe.hpp.
struct KickRound {
  std::vector<double> send_kick, send_plain, away, onset;
};
KickRound kick_round(const Bench& b, int iters, std::string& unavailable);

// One benchmark per file; each appends its figures to m.
void measure_syscalls(const Bench& b, Measurements& m);
void measure_locks(const Bench& b, Measurements& m);
void measure_wakeups(const Bench& b, Measurements& m);
void measure_iowq(const Bench& b, Measurements& m);
void measure_tcp(const Bench& b, Measurements& m);
void measure_tcp_many(const Bench& b, Measurements& m);
void measure_poll(const Bench& b, Measurements& m);
void measure_kick(const Bench& b, Measurements& m);
void measure_wake_pack(const Bench& b, Measurements& m);

}  // namespace uringsim::host::calib
