#include "sim/lock.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "sim/checks.hpp"
#include "sim/engine.hpp"
#include "sim/sched.hpp"

namespace uringsim::sim {
namespace {
// lock_stat's minimum is the shortest non-zero time; 0 stands for "none yet".
void keep_min(TimeNs& min, TimeNs t) {
  if (t > 0 && (min == 0 || t < min)) min = t;
}
}  // namespace

void LockSiteStats::add(const LockSiteStats& o) {
  acquisitions += o.acquisitions;
  contended += o.contended;
  wait_ns_total += o.wait_ns_total;
  hold_ns_total += o.hold_ns_total;
  wait_ns_max = std::max(wait_ns_max, o.wait_ns_max);
  hold_ns_max = std::max(hold_ns_max, o.hold_ns_max);
  keep_min(wait_ns_min, o.wait_ns_min);
  keep_min(hold_ns_min, o.hold_ns_min);
  acq_bounces += o.acq_bounces;
  con_bounces += o.con_bounces;
  contending += o.contending;
}

LockClass::LockClass(std::string name, LockKind kind) : name_(std::move(name)), kind_(kind) {
  Engine::get().register_lock_class(this);
}

LockClass::~LockClass() {
  try {
    Engine::get().unregister_lock_class(this);
  } catch (const std::logic_error&) {
  }
}

Lock::Lock(std::string name, Kind kind)
    : own_class_(std::make_unique<LockClass>(std::move(name), kind)), cls_(own_class_.get()), kind_(kind) {
  order_id_ = Engine::get().checks().add_lock_name(cls_->name());
}

Lock::Lock(LockClass& cls) : cls_(&cls), kind_(cls.kind()) {
  order_id_ = Engine::get().checks().add_lock_name(cls_->name());
}

Lock::~Lock() = default;

LockSiteStats& LockClass::site_stats(Label site) {
  for (int i = 0; i < kSiteCache; ++i)
    if (cached_site_[i] == site) return *cached_stats_[i];
  LockSiteStats& s = sites_[site];
  cached_site_[cache_next_] = site;
  cached_stats_[cache_next_] = &s;
  cache_next_ = (cache_next_ + 1) % kSiteCache;
  return s;
}

void Lock::acquired(Thread& self, Label site, TimeNs waited, bool contended, TimeNs at) {
  owner_ = &self;
  owner_site_ = site;
  moved_ = last_cpu_ >= 0 && last_cpu_ != self.cpu();
  last_wait_ns_ = waited;
  last_cpu_ = self.cpu();
  acquired_at_ = at;
  self.held_.push_back({this, site});
  if (kind_ == Kind::Spin) ++self.spin_held_;
  LockSiteStats& s = cls_->site_stats(site);
  owner_stats_ = &s;
  ++s.acquisitions;
  if (moved_) ++s.acq_bounces;
  if (contended) {
    ++s.contended;
    if (moved_) ++s.con_bounces;
    s.wait_ns_total += waited;
    s.wait_ns_max = std::max(s.wait_ns_max, waited);
    keep_min(s.wait_ns_min, waited);
  }
}

// The caller's earlier work is done before its request reaches the lock: executed first, unless
// the lock is free and nobody else can act before the caller's local date, in which case it is
// taken then without executing that work yet (sim/horizon.hpp; the result is the same).
void Lock::reach(Thread& self, bool free_ahead) {
  if (free_ahead) {
    self.reach_shared();
  } else {
    self.note_sync_cause(SyncCause::LockBusy);
    self.flush();
  }
}

void Lock::lock(Label site) {
  Thread& self = current();
  if (kind_ == Kind::Mutex) self.might_resched();  // mutex_lock's might_sleep()
  Engine& e = Engine::get();
  for (;;) {
    // Held by another thread: a spinning waiter may queue now for its arrival date, its pending
    // work running inside its wait (may_wait_ahead). The queue is kept in arrival order, and a
    // release or a preemption before the arrival sends the waiter back here, its work pending.
    const bool wait_ahead = kind_ == Kind::Spin && owner_ && owner_ != &self && self.may_wait_ahead();
    if (!wait_ahead) reach(self, !owner_);
    if (owner_ == &self) {
      report_violation(violation::kRecursiveLock, site, 0,
                       "takes " + name() + " again; it already holds it (taken at " +
                           label_name(owner_site_) +
                           "): the kernel would hang here, the run goes on as if the lock were recursive");
      ++recursion_;
      return;
    }
    if (kind_ == Kind::Mutex && self.spin_held_ > 0)
      self.check_may_sleep(site, ("takes mutex " + name()).c_str());
    for (const Thread::HeldLock& h : self.held_)
      e.checks().order_edge(h.lock->order_id_, h.site, order_id_, site);
    if (!owner_) {
      acquired(self, site, 0, false, self.local_now_ns());
      fast_path_cost(self, moved_);
      return;
    }
    const TimeNs t0 = self.local_now_ns();  // the clock, unless waiting ahead
    LockSiteStats* holder_site = owner_stats_;
    ++holder_site->contending;  // the holder's site makes this thread wait
    self.waiting_lock_ = this;
    self.waiting_site_ = site;
    // A wait that closes a cycle of lock waits can never end: stop the run here, with its cycle.
    if (closes_wait_cycle(self)) e.stop_on_deadlock();
    self.arrival_ns_ = t0;
    enqueue(self);
    wait_for_handoff(self, wait_ahead);
    self.waiting_lock_ = nullptr;
    self.waiting_site_ = kNoLabel;
    const TimeNs arrived = std::exchange(self.arrival_ns_, -1);  // later by any interrupt before it
    if (std::exchange(self.lock_retry_, false)) {  // released before it arrived: it did not wait
      --holder_site->contending;
      continue;
    }
    if (owner_ != &self) throw std::logic_error("lock " + name() + ": woken without hand-off");
    // hand_over() already made us the owner; record the acquisition at the hand-off date.
    owner_ = nullptr;
    acquired(self, site, e.clock_ns() - arrived, true, e.clock_ns());
    return;
  }
}

bool Lock::retrying(const Thread& t) {
  return t.lock_retry_;
}

void Lock::enqueue(Thread& t) {
  auto it = queue_.end();  // after every waiter arriving no later (ties keep their queueing order)
  while (it != queue_.begin() + static_cast<std::ptrdiff_t>(queue_head_) &&
         (*(it - 1))->arrival_ns_ > t.arrival_ns_)
    --it;
  queue_.insert(it, &t);
}

void Lock::withdraw(const Thread& t) {
  const auto it = std::find(queue_.begin() + static_cast<std::ptrdiff_t>(queue_head_), queue_.end(), &t);
  if (it != queue_.end()) queue_.erase(it);
}

void Lock::delay_arrival(Thread& t, TimeNs ns) {
  withdraw(t);
  t.arrival_ns_ += ns;
  enqueue(t);
}

bool Lock::closes_wait_cycle(const Thread& self) const {
  // Follow owner -> the lock it waits for -> its owner ...; a chain is at most one step per thread.
  const Thread* t = owner_;
  for (std::size_t steps = 0, n = Engine::get().threads().size(); t && steps <= n; ++steps) {
    if (t == &self) return true;
    if (!t->waiting_lock_) return false;
    t = t->waiting_lock_->owner_;
  }
  return false;
}

bool Lock::try_lock(Label site) {
  Thread& self = current();
  reach(self, !owner_);
  if (owner_) return false;
  acquired(self, site, 0, false, self.local_now_ns());
  fast_path_cost(self, moved_);
  return true;
}

void Lock::unlock(Label site) {
  Thread& self = current();
  // The critical section's work ends before the release; with nobody waiting, as for lock().
  reach(self, owner_ == &self && queue_empty() && recursion_ == 0);
  if (owner_ != &self) {
    report_violation(
        violation::kUnlockNotOwner, site == kNoLabel ? self.last_symbol_ : site, 0,
        "releases " + name() +
            (owner_ ? ", held by " + owner_->name() + " (taken at " + label_name(owner_site_) + ")"
                    : ", which nobody holds") +
            "; the release is ignored");
    return;
  }
  if (recursion_ > 0) {  // the inner release of a recursive acquisition (already reported)
    --recursion_;
    return;
  }
  for (auto it = self.held_.end(); it != self.held_.begin();) {
    if ((--it)->lock == this) {
      self.held_.erase(it);
      break;
    }
  }
  if (kind_ == Kind::Spin) --self.spin_held_;
  const TimeNs held = self.local_now_ns() - acquired_at_;
  LockSiteStats& s = *owner_stats_;  // sites_[owner_site_]
  s.hold_ns_total += held;
  s.hold_ns_max = std::max(s.hold_ns_max, held);
  keep_min(s.hold_ns_min, held);
  owner_ = nullptr;
  if (queue_empty()) return;
  if (queue_[queue_head_]->arrival_ns_ > Engine::get().clock_ns()) {
    // Queued ahead, and nobody has arrived yet: the lock is free, and each waiter goes back to
    // take it at its arrival, as if it had not queued (one arriving meanwhile may take it first).
    std::vector<Thread*> early(queue_.begin() + static_cast<std::ptrdiff_t>(queue_head_), queue_.end());
    queue_.clear();
    queue_head_ = 0;
    for (Thread* w : early) w->retry_lock();
    return;
  }
  Thread* next = queue_[queue_head_++];
  if (queue_empty()) {
    queue_.clear();
    queue_head_ = 0;
  }
  owner_ = next;  // direct FIFO hand-off: nobody can barge in
  hand_over(*next);
}

std::map<Label, LockSiteStats> LockClass::window_sites() const {
  std::map<Label, LockSiteStats> w = sites_;
  for (auto& [site, s] : w) {
    auto it = base_.find(site);
    if (it == base_.end()) continue;
    s.acquisitions -= it->second.acquisitions;
    s.contended -= it->second.contended;
    s.wait_ns_total -= it->second.wait_ns_total;
    s.hold_ns_total -= it->second.hold_ns_total;
    s.acq_bounces -= it->second.acq_bounces;
    s.con_bounces -= it->second.con_bounces;
    s.contending -= it->second.contending;
  }
  return w;
}

LockSiteStats LockClass::window_total() const {
  LockSiteStats t;
  for (const auto& [site, s] : window_sites()) t.add(s);
  return t;
}

void LockClass::mark_window_start() {
  base_ = sites_;
  // Extremes restart with the window.
  for (auto& [site, s] : sites_) s.wait_ns_max = s.hold_ns_max = s.wait_ns_min = s.hold_ns_min = 0;
}

// --- SpinLock ---
SpinLock::SpinLock(LockClass& cls) : Lock(cls) {
  if (cls.kind() != Kind::Spin)
    throw std::logic_error("spinlock of lock class " + cls.name() + ", a mutex class");
}

void SpinLock::fast_path_cost(Thread& self, bool migrated) {
  const auto& c = Engine::get().costs();
  self.charge(c.spin_lock_fast_cycles + (migrated ? c.spin_lock_migrate_cycles : 0), sym::spin_fast());
}

void SpinLock::wait_for_handoff(Thread& self, bool ahead) {
  if (ahead)
    self.await_grant_ahead(sym::spin_slowpath());
  else
    self.await_grant(true, sym::spin_slowpath());
  if (retrying(self)) return;  // not handed over: it goes back to take the lock
  // The lock's cache line moves from the previous owner's CPU to ours.
  self.charge(Engine::get().costs().spin_handoff_cycles, sym::spin_slowpath());
}

void SpinLock::hand_over(Thread& next) {
  next.grant();
}

// --- Mutex ---
Mutex::Mutex(LockClass& cls) : Lock(cls) {
  if (cls.kind() != Kind::Mutex)
    throw std::logic_error("mutex of lock class " + cls.name() + ", a spinlock class");
}

void Mutex::fast_path_cost(Thread& self, bool) {
  self.charge(Engine::get().costs().mutex_fast_cycles, sym::mutex_lock());
}

void Mutex::wait_for_handoff(Thread& self, bool) {
  self.await_grant(false, 0);
  switch_in_after_sleep();
}

void Mutex::hand_over(Thread& next) {
  const Cycles ipi_send = charge_wake(next);
  next.grant();
  if (ipi_send > 0) current().charge(ipi_send, sym::wake());
}

}  // namespace uringsim::sim
