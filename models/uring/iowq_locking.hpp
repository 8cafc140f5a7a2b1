#pragma once
// io-wq's lock design as a strategy, picked once from kernel.iowq.lock (KernelConfig::iowq_lock),
// as SimGrid picks one network model class from its configuration. A design answers which lock
// guards what; IoWq takes those locks at the kernel's call sites. A section's shared lines
// (iowq_list_lines, iowq_free_list_lines, iowq_count_lines) are paid when the lock it took moved
// CPUs, so which lock pays for which lines follows from the design's answers too: in the global
// design one acquisition pays for the list and the free list together.
//
// A new design is one class (its own file) and one IoWqLock value in make_iowq_locking.
// Three designs: global (up to 5.17), split (5.18) and workers (6.15).
#include <memory>

#include "models/uring/kernel_config.hpp"
#include "sim/lock.hpp"

namespace uringsim::models {

class IoWqLocking {
 public:
  virtual ~IoWqLocking() = default;
  // `acct` is IoWqAcct::index: 0 bound, 1 unbound.
  // The account's work list, its stalled flag and the hashing state.
  virtual sim::SpinLock& list_lock(int acct) = 0;
  // The account's side of the worker lists: the free list, nr_workers, creation and exit.
  virtual sim::SpinLock& workers_lock(int acct) = 0;
  // The sleep hook (io_wq_worker_sleeping) holds the workers lock around io_wqe_dec_running, as
  // 5.15 does; otherwise io_wqe_dec_running only peeks at the work list under the list lock.
  virtual bool sleep_hook_holds_workers_lock() const = 0;
  // The enqueue (and a hash bucket's release) looks for a free worker to wake under the workers
  // lock; since 6.6 the free list is walked under RCU alone.
  virtual bool wake_under_workers_lock() const = 0;

  // One lock guards both: a section that goes on from the work list to the worker lists keeps it,
  // where two locks mean dropping one and taking the other.
  bool shared(int acct) { return &list_lock(acct) == &workers_lock(acct); }
};

// The design's locks register with the current engine when it is made. `rcu_wake`
// (KernelConfig::iowq_rcu_wake) is 6.6's free-worker lookup, for the split design of 6.6-6.14.
std::unique_ptr<IoWqLocking> make_iowq_locking(IoWqLock design, bool rcu_wake);

}  // namespace uringsim::models
