#pragma once
// Locks with FIFO hand-off (the shape of a queued spinlock / MCS lock) and per-call-site
// statistics in the spirit of /proc/lock_stat. SpinLock waiters burn their CPU; Mutex waiters sleep.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/label.hpp"
#include "sim/thread.hpp"

namespace uringsim::sim {

struct LockSiteStats {
  std::uint64_t acquisitions = 0;
  std::uint64_t contended = 0;  // acquisitions that had to wait
  TimeNs wait_ns_total = 0, wait_ns_max = 0;
  TimeNs hold_ns_total = 0, hold_ns_max = 0;
  // As /proc/lock_stat: the shortest non-zero wait and hold (0 = none yet); acquisitions (and
  // contended ones) that took the lock from a holder on another CPU; and how often a holder that
  // took the lock at this site made another thread wait (lock_stat's "contending points").
  TimeNs wait_ns_min = 0, hold_ns_min = 0;
  std::uint64_t acq_bounces = 0, con_bounces = 0;
  std::uint64_t contending = 0;
  void add(const LockSiteStats& o);
};

enum class LockKind { Spin, Mutex };

// What /proc/lock_stat keeps for a lock class: statistics per acquiring call site. Every lock
// reports through one. Most locks are a class of their own; a model's many locks of one kind (a
// socket lock per connection) share one, as lockdep counts them, so that each instance costs
// only its owner and queue.
class LockClass {
 public:
  LockClass(std::string name, LockKind kind);  // registers with the engine, for results
  ~LockClass();
  LockClass(const LockClass&) = delete;
  LockClass& operator=(const LockClass&) = delete;

  const std::string& name() const { return name_; }
  LockKind kind() const { return kind_; }
  // Statistics per acquiring call site: whole run, and since the window start.
  const std::map<Label, LockSiteStats>& sites() const { return sites_; }
  std::map<Label, LockSiteStats> window_sites() const;
  LockSiteStats window_total() const;
  void mark_window_start();

 private:
  friend class Lock;
  LockSiteStats& site_stats(Label site);

  std::string name_;
  LockKind kind_;
  std::map<Label, LockSiteStats> sites_, base_;
  // Hot-path shortcut into sites_ (map nodes never move): the last sites that took the lock.
  static constexpr int kSiteCache = 4;
  Label cached_site_[kSiteCache] = {kNoLabel, kNoLabel, kNoLabel, kNoLabel};
  LockSiteStats* cached_stats_[kSiteCache] = {};
  int cache_next_ = 0;
};

class Lock {
 public:
  using Kind = LockKind;
  Lock(std::string name, Kind kind);  // a lock class of its own
  explicit Lock(LockClass& cls);      // one of a class's locks
  virtual ~Lock();
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

  // Checks (sim/checks.hpp): re-taking a lock one holds is a `recursive_lock` violation (the run
  // goes on as if the lock were recursive; the kernel would hang); taking a mutex while holding a
  // spinlock is `sleep_holding_spinlock`; releasing a lock one does not hold is `unlock_not_owner`
  // (the release is ignored). lock() records lock-order edges from every lock held; a wait that
  // closes a cycle of lock waits stops the run as a deadlock.
  void lock(Label site);
  // Never blocks, so records no edge to this lock (as lockdep); fails on a lock one holds.
  bool try_lock(Label site);
  void unlock(Label site = kNoLabel);  // `site`: the releasing path, named in violations

  const std::string& name() const { return cls_->name(); }
  Kind kind() const { return kind_; }
  bool held() const { return owner_ != nullptr; }
  const Thread* owner() const { return owner_; }
  Label owner_site() const { return owner_site_; }  // where the owner took it
  std::size_t waiters() const { return queue_.size() - queue_head_; }
  // An interrupt handler took `ns` of the CPU of `t`, a waiter queued ahead of its arrival (its
  // work before the lock still running): it arrives that much later.
  void delay_arrival(Thread& t, TimeNs ns);
  void withdraw(const Thread& t);  // `t` leaves the queue (Thread::leave_lock_queue_ahead)
  // The current holder took the lock from a holder on another CPU: the lock's cache line, and the
  // lines of the data it protects, had to move. Models charge the data lines they touch.
  bool moved() const { return moved_; }
  // How long the current holder waited for it (0 if uncontended).
  TimeNs last_wait_ns() const { return last_wait_ns_; }

  // Statistics of its class (its own, unless built on a shared one).
  const std::map<Label, LockSiteStats>& sites() const { return cls_->sites(); }
  std::map<Label, LockSiteStats> window_sites() const { return cls_->window_sites(); }
  LockSiteStats window_total() const { return cls_->window_total(); }

 protected:
  virtual void fast_path_cost(Thread& self, bool migrated) = 0;  // uncontended acquire + release
  // Block until owner_ == &self. `ahead`: self's pending work is not executed yet and runs as
  // the start of the wait (SpinLock only, Thread::may_wait_ahead).
  virtual void wait_for_handoff(Thread& self, bool ahead) = 0;
  virtual void hand_over(Thread& next) = 0;  // give the lock to `next` (already owner_)
  static bool retrying(const Thread& t);     // released before it arrived (Thread::retry_lock)

 private:
  void acquired(Thread& self, Label site, TimeNs waited, bool contended, TimeNs at);
  void reach(Thread& self, bool free_ahead);
  bool closes_wait_cycle(const Thread& self) const;
  bool queue_empty() const { return queue_head_ == queue_.size(); }
  void enqueue(Thread& t);  // at its arrival_ns_

  std::unique_ptr<LockClass> own_class_;  // set when the lock is a class of its own
  LockClass* cls_;
  Kind kind_;
  Thread* owner_ = nullptr;
  Label owner_site_ = 0;
  int last_cpu_ = -1;  // CPU of the previous holder: where the lock's cache line is
  bool moved_ = false;
  TimeNs last_wait_ns_ = 0;
  TimeNs acquired_at_ = 0;
  // Waiters from queue_head_ on, in the order of their arrival dates (Thread::arrival_ns_; FIFO:
  // a waiter queued ahead of its arrival is placed by its date); a vector, not a deque, which
  // allocates even when empty (a lock per connection adds up).
  std::vector<Thread*> queue_;
  std::size_t queue_head_ = 0;
  int order_id_ = -1;                     // node of the lock-order graph
  int recursion_ = 0;                     // recursive acquisitions let through after a violation
  LockSiteStats* owner_stats_ = nullptr;  // the current holder's site entry: its release needs no search
};

// Queued spinlock: waiters spin (CPU accounted to native_queued_spin_lock_slowpath), the lock is
// handed to the first waiter, which pays a cache-line transfer.
class SpinLock final : public Lock {
 public:
  explicit SpinLock(std::string name) : Lock(std::move(name), Kind::Spin) {}
  explicit SpinLock(LockClass& cls);  // its kind must be Spin

 protected:
  void fast_path_cost(Thread& self, bool migrated) override;
  void wait_for_handoff(Thread& self, bool ahead) override;
  void hand_over(Thread& next) override;
};

// Sleeping mutex (uring_lock, sqd->lock): waiters sleep; a hand-off wakes the next waiter, which
// pays the wake-up latency. Optimistic spinning of real mutexes is not modelled.
class Mutex final : public Lock {
 public:
  explicit Mutex(std::string name) : Lock(std::move(name), Kind::Mutex) {}
  explicit Mutex(LockClass& cls);  // its kind must be Mutex

 protected:
  void fast_path_cost(Thread& self, bool migrated) override;
  void wait_for_handoff(Thread& self, bool ahead) override;
  void hand_over(Thread& next) override;
};

}  // namespace uringsim::sim
