#include "host/startup.hpp"

namespace uringsim::host {

void Startup::ready() {
  {
    std::lock_guard lk(m_);
    ++ready_;
  }
  cv_.notify_all();
}

bool Startup::wait_go() {
  std::unique_lock lk(m_);
  cv_.wait(lk, [this] { return go_ || off_; });
  return go_ && !off_;
}

bool Startup::wait_all_ready() {
  std::unique_lock lk(m_);
  // The guard's stop (a signal) cannot notify the condition variable, so look at it every 20 ms.
  while (ready_ < expected_ && !error_ && !guard_.stop_requested())
    cv_.wait_for(lk, std::chrono::milliseconds(20));
  return ready_ >= expected_ && !error_ && !guard_.stop_requested();
}

void Startup::go(Clock::time_point t0) {
  {
    std::lock_guard lk(m_);
    t0_ = t0;
    go_ = true;
  }
  cv_.notify_all();
}

void Startup::call_off() {
  {
    std::lock_guard lk(m_);
    off_ = true;
  }
  cv_.notify_all();
}

std::thread Startup::spawn(std::function<void()> body) {
  SignalsBlocked blocked;  // SIGINT/SIGTERM go to the coordinator
  return std::thread([this, body = std::move(body)] {
    try {
      body();
    } catch (...) {
      {
        std::lock_guard lk(m_);
        if (!error_) error_ = std::current_exception();
      }
      cv_.notify_all();
      guard_.request_stop();
    }
  });
}

std::exception_ptr Startup::error() const {
  std::lock_guard lk(m_);
  return error_;
}

}  // namespace uringsim::host
