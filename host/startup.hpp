#pragma once
// How a host run's threads start together and report failure: each sets itself up (sockets,
// ring, pinning), reports ready or its exception, and waits for the coordinator's go, which
// fixes t0, the zero of every timestamp of the run. A failure at any time stops the whole run.
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "host/guard.hpp"

namespace uringsim::host {

class Startup {
 public:
  using Clock = RunGuard::Clock;
  Startup(int threads, RunGuard& guard) : expected_(threads), guard_(guard) {}

  // Runner side.
  void ready();
  // false: the run was called off before it began (stop, another thread's failure).
  bool wait_go();
  Clock::time_point t0() const { return t0_; }  // valid after wait_go() returned true

  // Coordinator side. wait_all_ready: false on a failure or a stop.
  bool wait_all_ready();
  void go(Clock::time_point t0);
  void call_off();  // wakes threads waiting for go; they return false

  // A thread's body: an exception is kept (the first one) and stops the run.
  std::thread spawn(std::function<void()> body);
  // The first failure of a runner thread, or null.
  std::exception_ptr error() const;

 private:
  int expected_, ready_ = 0;
  bool go_ = false, off_ = false;
  Clock::time_point t0_{};
  std::exception_ptr error_;
  RunGuard& guard_;
  mutable std::mutex m_;
  std::condition_variable cv_;
};

}  // namespace uringsim::host
