#include "sim/lock.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/engine.hpp"
#include "sim/sched.hpp"

namespace uringsim::sim {

void LockSiteStats::add(const LockSiteStats& o) {
  acquisitions += o.acquisitions;
  contended += o.contended;
  wait_ns_total += o.wait_ns_total;
  hold_ns_total += o.hold_ns_total;
  wait_ns_max = std::max(wait_ns_max, o.wait_ns_max);
  hold_ns_max = std::max(hold_ns_max, o.hold_ns_max);
}

Lock::Lock(std::string name, Kind kind) : name_(std::move(name)), kind_(kind) {
  Engine::get().register_lock(this);
}

Lock::~Lock() {
  try {
    Engine::get().unregister_lock(this);
  } catch (const std::logic_error&) {
  }
}

void Lock::acquired(Thread& self, Label site, TimeNs waited, bool contended) {
  owner_ = &self;
  owner_site_ = site;
  moved_ = last_cpu_ >= 0 && last_cpu_ != self.cpu();
  last_wait_ns_ = waited;
  last_cpu_ = self.cpu();
  acquired_at_ = Engine::get().clock_ns();
  LockSiteStats& s = sites_[site];
  ++s.acquisitions;
  if (contended) {
    ++s.contended;
    s.wait_ns_total += waited;
    s.wait_ns_max = std::max(s.wait_ns_max, waited);
  }
}

void Lock::lock(Label site) {
  Thread& self = current();
  self.flush();  // the request reaches the lock after the caller's earlier work
  if (owner_ == &self) throw std::logic_error("lock " + name_ + ": recursive acquisition by " + self.name());
  if (!owner_) {
    acquired(self, site, 0, false);
    fast_path_cost(self, moved_);
    return;
  }
  const TimeNs t0 = Engine::get().clock_ns();
  queue_.push_back(&self);
  wait_for_handoff(self);
  if (owner_ != &self) throw std::logic_error("lock " + name_ + ": woken without hand-off");
  // hand_over() already made us the owner; record the acquisition at the hand-off date.
  owner_ = nullptr;
  acquired(self, site, Engine::get().clock_ns() - t0, true);
}

bool Lock::try_lock(Label site) {
  Thread& self = current();
  self.flush();
  if (owner_) return false;
  acquired(self, site, 0, false);
  fast_path_cost(self, moved_);
  return true;
}

void Lock::unlock() {
  Thread& self = current();
  self.flush();  // the critical section's work ends before the release
  if (owner_ != &self)
    throw std::logic_error("lock " + name_ + ": released by " + self.name() + " which does not hold it");
  const TimeNs held = Engine::get().clock_ns() - acquired_at_;
  LockSiteStats& s = sites_[owner_site_];
  s.hold_ns_total += held;
  s.hold_ns_max = std::max(s.hold_ns_max, held);
  owner_ = nullptr;
  if (!queue_.empty()) {
    Thread* next = queue_.front();
    queue_.pop_front();
    owner_ = next;  // direct FIFO hand-off: nobody can barge in
    hand_over(*next);
  }
}

std::map<Label, LockSiteStats> Lock::window_sites() const {
  std::map<Label, LockSiteStats> w = sites_;
  for (auto& [site, s] : w) {
    auto it = base_.find(site);
    if (it == base_.end()) continue;
    s.acquisitions -= it->second.acquisitions;
    s.contended -= it->second.contended;
    s.wait_ns_total -= it->second.wait_ns_total;
    s.hold_ns_total -= it->second.hold_ns_total;
  }
  return w;
}

LockSiteStats Lock::window_total() const {
  LockSiteStats t;
  for (const auto& [site, s] : window_sites()) t.add(s);
  return t;
}

void Lock::mark_window_start() {
  base_ = sites_;
  for (auto& [site, s] : sites_) s.wait_ns_max = s.hold_ns_max = 0;  // maxima restart with the window
}

// --- SpinLock ---
void SpinLock::fast_path_cost(Thread& self, bool migrated) {
  const auto& c = Engine::get().costs();
  self.charge(c.spin_lock_fast_cycles + (migrated ? c.spin_lock_migrate_cycles : 0), sym::spin_fast());
}

void SpinLock::wait_for_handoff(Thread& self) {
  self.await_grant(true, sym::spin_slowpath());
  // The lock's cache line moves from the previous owner's CPU to ours.
  self.charge(Engine::get().costs().spin_handoff_cycles, sym::spin_slowpath());
}

void SpinLock::hand_over(Thread& next) {
  next.grant();
}

// --- Mutex ---
void Mutex::fast_path_cost(Thread& self, bool) {
  self.charge(Engine::get().costs().mutex_fast_cycles, sym::mutex_lock());
}

void Mutex::wait_for_handoff(Thread& self) {
  self.await_grant(false, 0);
  switch_in_after_sleep();
}

void Mutex::hand_over(Thread& next) {
  current().charge(Engine::get().costs().wake_cycles, sym::wake());
  next.grant();
}

}  // namespace uringsim::sim
