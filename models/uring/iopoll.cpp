#include "models/uring/iopoll.hpp"

#include <algorithm>
#include <limits>

#include "models/uring/ring_internal.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
constexpr sim::TimeNs kForever = std::numeric_limits<double>::infinity();
using ring::rsyms;
}  // namespace

Iopoll::Iopoll(const UringCosts& costs, CqRing& cq, sim::Mutex& uring_lock, UringStats& stats)
    : c_(costs), cq_(cq), uring_lock_(uring_lock), stats_(stats) {}

bool Iopoll::any_done() const {
  return std::any_of(list_.begin(), list_.end(), [](const Request* r) { return r->iopoll_done; });
}

int Iopoll::reap() {
  auto& self = sim::current();
  self.charge(c_.iopoll_pass, rsyms().iopoll);
  ++stats_.iopoll_passes;
  int n = 0;
  for (auto it = list_.begin(); it != list_.end();) {
    Request& req = **it;
    if (!req.iopoll_done) {
      ++it;
      continue;
    }
    it = list_.erase(it);
    self.charge(c_.rw_complete, rsyms().complete);
    ++stats_.iopoll_reaped;
    ++n;
    cq_.complete_deferred(req);
  }
  cq_.flush_completions();
  return n;
}

void Iopoll::check(int min_complete) {
  auto& self = sim::current();
  for (;;) {
    // io_do_iopoll polls for the oldest request first: a hybrid poll may sleep for it (once).
    Request* head = list_.empty() ? nullptr : list_.front();
    if (head) wait_->before_poll(*head, stats_);
    uring_lock_.lock(rsyms().site_iopoll);
    const int n = reap();
    uring_lock_.unlock();
    if (head && n > 0) wait_->polled(*head);  // head stays valid until user space releases it
    if (static_cast<int>(cq_.ready()) >= min_complete || list_.empty()) return;
    // Nothing found: poll again; a pass can only find something once the drive has completed it.
    spinner_ = &self;
    if (!any_done()) self.spin_for_ns(kForever, rsyms().iopoll_spin);
    spinner_ = nullptr;
  }
}

void Iopoll::device_done() {
  if (!spinner_) return;
  sim::Thread* t = spinner_;
  spinner_ = nullptr;
  t->unpark();
}

}  // namespace uringsim::models
