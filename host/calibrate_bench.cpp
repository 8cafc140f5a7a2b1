#include "host/calibrate_bench.hpp"

#include <arpa/inet.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "host/thread_setup.hpp"

namespace uringsim::host::calib {

void Bench::fail(const std::string& what) const {
  guard.throw_if_aborted();
  throw std::runtime_error("calibrate: " + what);
}

double now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

void allow_cpus(std::initializer_list<int> cpus) {
  if (const int rc = set_this_thread_cpus(cpus))
    throw std::runtime_error(fmt::format("calibrate: cannot {} a thread to CPU {}: {}",
                                         cpus.size() == 1 ? "pin" : "allow", fmt::join(cpus, " and "),
                                         std::strerror(rc)));
}

void pin_to_cpu(int cpu) {
  allow_cpus({cpu});
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

void run_pinned(const Bench& b, int cpu, const std::function<void()>& fn) {
  std::exception_ptr error;
  std::optional<Joined> t;
  {
    SignalsBlocked blocked;  // only while the thread starts: it inherits the mask, we do not keep it
    t.emplace([&] {
      try {
        pin_to_cpu(cpu);
        fn();
      } catch (...) {
        error = std::current_exception();
      }
    });
  }
  t->join();
  b.guard.throw_if_aborted();
  if (error) std::rethrow_exception(error);
}

void futex_wait(std::atomic<std::int32_t>& word, std::int32_t expected, double timeout_ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1e9);
  ts.tv_nsec = static_cast<long>(std::fmod(timeout_ns, 1e9));
  ::syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
}

int futex_wake(std::atomic<std::int32_t>& word, int n) {
  return static_cast<int>(::syscall(SYS_futex, reinterpret_cast<std::int32_t*>(&word), FUTEX_WAKE_PRIVATE, n,
                                    nullptr, nullptr, 0));
}

Ring::Ring(unsigned entries, unsigned flags) {
  if (const int rc = io_uring_queue_init(entries, &ring_, flags); rc < 0)
    throw std::system_error(-rc, std::generic_category(), "io_uring_queue_init");
}

Ring::~Ring() {
  io_uring_queue_exit(&ring_);
}

void reap_one(const Bench& b, io_uring* ring, int expected_res, const char* what) {
  io_uring_cqe* cqe = nullptr;
  if (io_uring_peek_cqe(ring, &cqe) != 0 || !cqe) b.fail(fmt::format("{}: no CQE after the wait", what));
  const int res = cqe->res;
  io_uring_cqe_seen(ring, cqe);
  if (res != expected_res) b.fail(fmt::format("{}: CQE result {}, expected {}", what, res, expected_res));
}

LoopbackPair::LoopbackPair() {
  auto fail = [this](const char* what) {
    const std::string msg = fmt::format("calibrate: loopback TCP: {}: {}", what, std::strerror(errno));
    if (client_ >= 0) ::close(client_);
    if (server_ >= 0) ::close(server_);
    throw std::runtime_error(msg);
  };
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) fail("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  const bool ok = ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::listen(listener, 1) == 0 &&
                  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
                  (client_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0 &&
                  ::connect(client_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  (server_ = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;
  const int saved = errno;
  ::close(listener);
  errno = saved;
  if (!ok) fail("connect on 127.0.0.1");
  const int one = 1;
  for (int fd : {client_, server_})
    if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fail("TCP_NODELAY");
}

LoopbackPair::~LoopbackPair() {
  ::close(client_);
  ::close(server_);
}

void LoopbackPair::recv_all(const Bench& b, int fd, char* buf, int n) {
  int got = 0;
  const bool ok = spin_until(
      b,
      [&] {
        const ssize_t r = ::recv(fd, buf + got, static_cast<std::size_t>(n - got), MSG_DONTWAIT);
        if (r > 0) got += static_cast<int>(r);
        return got == n || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || r == 0;
      },
      1e9);
  if (!ok || got != n) b.fail(fmt::format("loopback TCP: {} of {} bytes received", got, n));
}

}  // namespace uringsim::host::calib
