#include "host/guard.hpp"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace uringsim::host {
namespace {

// The active guard, for the signal handler. Only lock-free atomics and write(2) are used there.
std::atomic<int> g_fd{-1};
std::atomic<int> g_signal{0};
std::atomic<std::atomic<bool>*> g_stop{nullptr};

void on_signal(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  if (auto* stop = g_stop.load()) stop->store(true, std::memory_order_release);
  const int fd = g_fd.load();
  if (fd >= 0) {
    const std::uint64_t one = 1;
    const int saved = errno;
    [[maybe_unused]] const ssize_t n = ::write(fd, &one, sizeof one);
    errno = saved;
  }
}

void poke(int fd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(fd, &one, sizeof one);
}

}  // namespace

Interrupted::Interrupted(int sig)
    : std::runtime_error(fmt::format("interrupted by {}", sig == SIGINT    ? "SIGINT"
                                                          : sig == SIGTERM ? "SIGTERM"
                                                                           : "a signal")),
      signal(sig) {}

RunGuard::RunGuard(double limit_s) : limit_s_(limit_s) {
  if (g_fd.load() >= 0) throw std::logic_error("only one RunGuard may be active");
  fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd_ < 0) throw std::runtime_error(fmt::format("eventfd: {}", std::strerror(errno)));
  deadline_ =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s));
  g_signal.store(0);
  g_stop.store(&stop_);
  g_fd.store(fd_);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked wait in the coordinator returns EINTR and sees the stop
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
  SignalsBlocked blocked;  // the watchdog never takes the signals
  watchdog_ = std::thread([this] { watchdog_main(); });
}

RunGuard::~RunGuard() {
  {
    std::lock_guard lk(m_);
    disarmed_ = true;
  }
  cv_.notify_all();
  poke(fd_);  // wakes the watchdog if it is still waiting for a stop
  watchdog_.join();
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  g_fd.store(-1);
  g_stop.store(nullptr);
  ::close(fd_);
}

void RunGuard::raise_stop() {
  stop_.store(true, std::memory_order_release);
  poke(fd_);
}

void RunGuard::request_stop() {
  raise_stop();
}

int RunGuard::signal() const {
  return g_signal.load();
}

bool RunGuard::sleep_until(Clock::time_point deadline) const {
  for (;;) {
    if (stop_requested()) return false;
    const auto now = Clock::now();
    if (now >= deadline) return true;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    pollfd p{fd_, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<long long>(ms, 1000)));  // EINTR: loop and look again
  }
}

void RunGuard::throw_if_aborted() const {
  if (const int sig = signal()) throw Interrupted(sig);
  if (timed_out())
    throw std::runtime_error(
        fmt::format("the run exceeded its hard time limit of {:.1f} s and was stopped", limit_s_));
}

void RunGuard::watchdog_main() {
  ::pthread_setname_np(::pthread_self(), "uringsim-guard");
  watchdog_tid_.store(::gettid());
  // Phase 1: wait for a stop (the eventfd) or the deadline.
  for (;;) {
    {
      std::lock_guard lk(m_);
      if (disarmed_) return;
    }
    if (stop_requested()) break;
    const auto now = Clock::now();
    if (now >= deadline_) {
      timed_out_.store(true);
      raise_stop();
      break;
    }
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - now).count();
    pollfd p{fd_, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<long long>(ms, 1000)));
  }
  // Phase 2: the run's threads have kGraceS to finish and the guard to be destroyed.
  std::unique_lock lk(m_);
  if (cv_.wait_for(lk, std::chrono::duration<double>(kGraceS), [this] { return disarmed_; })) return;
  const int sig = signal();
  const std::string msg = fmt::format(
      "error: the host run did not stop within {:.0f} s of {}; exiting without writing results\n", kGraceS,
      sig           ? "the signal"
      : timed_out() ? "its time limit"
                    : "its end");
  [[maybe_unused]] const ssize_t n = ::write(2, msg.data(), msg.size());
  ::_exit(sig ? 128 + sig : 1);
}

SignalsBlocked::SignalsBlocked() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &s, &old_);
}

SignalsBlocked::~SignalsBlocked() {
  ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

}  // namespace uringsim::host
