#pragma once
// Locks with FIFO hand-off (the shape of a queued spinlock / MCS lock) and per-call-site
// statistics in the spirit of /proc/lock_stat. SpinLock waiters burn their CPU; Mutex waiters sleep.
#include <deque>
#include <map>
#include <string>

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

class Lock {
 public:
  enum class Kind { Spin, Mutex };
  Lock(std::string name, Kind kind);
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

  const std::string& name() const { return name_; }
  Kind kind() const { return kind_; }
  bool held() const { return owner_ != nullptr; }
  const Thread* owner() const { return owner_; }
  Label owner_site() const { return owner_site_; }  // where the owner took it
  std::size_t waiters() const { return queue_.size(); }
  // The current holder took the lock from a holder on another CPU: the lock's cache line, and the
  // lines of the data it protects, had to move. Models charge the data lines they touch.
  bool moved() const { return moved_; }
  // How long the current holder waited for it (0 if uncontended).
  TimeNs last_wait_ns() const { return last_wait_ns_; }

  // Statistics per acquiring call site: whole run, and since the window start.
  const std::map<Label, LockSiteStats>& sites() const { return sites_; }
  std::map<Label, LockSiteStats> window_sites() const;
  LockSiteStats window_total() const;
  void mark_window_start();

 protected:
  virtual void fast_path_cost(Thread& self, bool migrated) = 0;  // uncontended acquire + release
  // Block until owner_ == &self. `ahead`: self's pending work is not executed yet and runs as
  // the start of the wait (SpinLock only, Thread::may_wait_ahead).
  virtual void wait_for_handoff(Thread& self, bool ahead) = 0;
  virtual void hand_over(Thread& next) = 0;  // give the lock to `next` (already owner_)

 private:
  void acquired(Thread& self, Label site, TimeNs waited, bool contended, TimeNs at);
  void reach(Thread& self, bool free_ahead);
  bool closes_wait_cycle(const Thread& self) const;
  LockSiteStats& site_stats(Label site);

  std::string name_;
  Kind kind_;
  Thread* owner_ = nullptr;
  Label owner_site_ = 0;
  int last_cpu_ = -1;  // CPU of the previous holder: where the lock's cache line is
  bool moved_ = false;
  TimeNs last_wait_ns_ = 0;
  TimeNs acquired_at_ = 0;
  std::deque<Thread*> queue_;
  int order_id_ = -1;  // node of the lock-order graph
  int recursion_ = 0;  // recursive acquisitions let through after a violation
  std::map<Label, LockSiteStats> sites_, base_;
  // Hot-path shortcuts into sites_ (map nodes never move): the last sites that took the lock, and
  // the current holder's entry, so an acquisition and its release need no tree search.
  static constexpr int kSiteCache = 4;
  Label cached_site_[kSiteCache] = {kNoLabel, kNoLabel, kNoLabel, kNoLabel};
  LockSiteStats* cached_stats_[kSiteCache] = {};
  int cache_next_ = 0;
  LockSiteStats* owner_stats_ = nullptr;
};

// Queued spinlock: waiters spin (CPU accounted to native_queued_spin_lock_slowpath), the lock is
// handed to the first waiter, which pays a cache-line transfer.
class SpinLock final : public Lock {
 public:
  explicit SpinLock(std::string name) : Lock(std::move(name), Kind::Spin) {}

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

 protected:
  void fast_path_cost(Thread& self, bool migrated) override;
  void wait_for_handoff(Thread& self, bool ahead) override;
  void hand_over(Thread& next) override;
};

}  // namespace uringsim::sim
