#pragma once
// Safety of a real-kernel run: a hard time limit and SIGINT/SIGTERM handling. While a RunGuard
// lives, SIGINT and SIGTERM only request a stop; every runner thread watches stop_fd() (an eventfd
// that becomes readable and stays so) or stop_requested(), finishes, closes its sockets and
// rings, and the run throws Interrupted so the command exits 128 + signal without writing
// anything. At the time limit the same stop is requested and the run fails (exit 1). If threads
// are still running a grace period after a stop, the watchdog ends the process (_exit) with that
// exit code rather than let it hang. Only this process's own threads are involved.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace uringsim::host {

// The run was stopped by SIGINT or SIGTERM; nothing may be written.
struct Interrupted : std::runtime_error {
  explicit Interrupted(int sig);
  int signal;
  int exit_code() const { return 128 + signal; }
};

class RunGuard {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr double kGraceS = 5;  // after a stop, threads have this long to finish

  // Installs the handlers (the previous ones come back in the destructor) and starts the
  // watchdog: limit_s from now, the run is stopped and counted as failed. One guard at a time.
  explicit RunGuard(double limit_s);
  ~RunGuard();
  RunGuard(const RunGuard&) = delete;
  RunGuard& operator=(const RunGuard&) = delete;

  int stop_fd() const { return fd_; }
  bool stop_requested() const { return stop_.load(std::memory_order_acquire); }
  // The normal end of a run (the window is over): everyone stops; not a failure.
  void request_stop();
  int signal() const;  // SIGINT or SIGTERM if one arrived, else 0
  bool timed_out() const { return timed_out_.load(); }
  double limit_s() const { return limit_s_; }
  pid_t watchdog_tid() const { return watchdog_tid_.load(); }

  // Sleeps until `deadline` or a stop request, whichever is first; false if stopped.
  bool sleep_until(Clock::time_point deadline) const;
  // Throws Interrupted after a signal, std::runtime_error after the time limit; else nothing.
  void throw_if_aborted() const;

 private:
  void watchdog_main();
  void raise_stop();

  double limit_s_;
  int fd_ = -1;
  std::atomic<bool> stop_{false}, timed_out_{false};
  std::atomic<pid_t> watchdog_tid_{0};
  Clock::time_point deadline_;
  std::mutex m_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  struct sigaction old_int_ {
  }, old_term_{};
  std::thread watchdog_;
};

// Blocks SIGINT and SIGTERM in the calling thread while it lives, so that threads started meanwhile
// inherit the mask and the signals go to the coordinating thread, whose waits they interrupt.
class SignalsBlocked {
 public:
  SignalsBlocked();
  ~SignalsBlocked();
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t old_;
};

}  // namespace uringsim::host
