#pragma once
// io-wq: the worker pool of one task: a bound and an unbound account, one free list. There is no
// per-node structure: before 6.4 the kernel had one io_wqe per NUMA node, and a task used its own
// node's; the model's machine is one node, where that layout is this one (6.4's "One wqe per wq").
// The free list is shared and a lookup skips the other account's workers, as before 6.15; the skip
// costs nothing here, so 6.15's per-account lists change nothing but their lock. Which lock guards
// what is the lock design's (IoWqLocking, from kernel.iowq.lock): every section here takes the
// list lock or the workers lock of its account.
//
// Enqueue wakes a sleeping free worker of the account, or creates one in the caller's context when
// the work is CONCURRENT (IOSQE_ASYNC) or no worker of the account is running — up to max_workers.
// A worker that blocks inside work decrements nr_running (the scheduler hook); if that leaves
// nobody running while work is queued, a creation request goes to the owning task as task_work.
// Worker creation can be made to fail (kernel.iowq.create_errors): a fatal error that leaves the
// account with no worker cancels the work that needed one (-ECANCELED); -EAGAIN is retried.
// Idle workers exit after the idle timeout, except the last of an account. Hashed work (buffered
// writes to one file) runs serially per hash bucket.
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/cpu_placer.hpp"
#include "models/io/file.hpp"
#include "models/uring/iowq_locking.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/request.hpp"
#include "sim/engine.hpp"
#include "sim/lock.hpp"

namespace uringsim::models {

class Task;
class IoWq;

struct IoWqAcct {
  int index = 0;  // 0 = bound, 1 = unbound
  int max_workers = 0;
  int nr_workers = 0;
  int nr_running = 0;
  bool stalled = false;  // IO_ACCT_STALLED_BIT: every queued item waits for a busy hash bucket
  std::deque<Request*> list;
  // statistics
  int workers_peak = 0;
  int blocked_in_work = 0;  // workers sleeping inside a work item (e.g. a blocking recv)
  std::uint64_t created = 0, exited = 0, create_requests = 0;
  // Injected creation failures, the -EAGAIN ones retried, queued work cancelled for want of a worker.
  std::uint64_t create_failed = 0, create_retries = 0, cancelled = 0;
  std::size_t list_peak = 0;
  bool run_queue() const { return !list.empty() && !stalled; }  // io_acct_run_queue
};

class IoWqWorker final : public BlockHooks {
 public:
  IoWqWorker(IoWq& wq, IoWqAcct& acct, int id) : wq_(wq), acct_(acct), id_(id) {}
  void before_block() override;  // io_wq_worker_sleeping
  void after_block() override;   // io_wq_worker_running
  int id() const { return id_; }

 private:
  friend class IoWq;
  IoWq& wq_;
  IoWqAcct& acct_;
  int id_;
  sim::Thread* thread_ = nullptr;
  bool running_ = true;          // IO_WORKER_F_RUNNING: counted in nr_running
  bool free_ = false;            // IO_WORKER_F_FREE: on the free list
  bool asleep_ = false;          // sleeping idle (wake_up_process would succeed)
  bool create_pending_ = false;  // create_state: one creation request in flight
  Request* current_ = nullptr;   // the work item being run (its latency breakdown sees blocking)
};

class IoWq {
 public:
  IoWq(sim::Engine& engine, const KernelConfig& k, const UringCosts& costs, Task& owner, CpuPlacer& placer);
  ~IoWq();

  void enqueue(Request& req);  // io_wqe_enqueue, in the caller's context

  const IoWqAcct& acct(int i) const { return acct_[i]; }
  int workers_alive() const { return acct_[0].nr_workers + acct_[1].nr_workers; }
  int workers_peak() const { return workers_peak_; }
  nlohmann::json to_json() const;  // the "iowq" section of results.json
  std::size_t free_workers() const { return free_list_.size(); }

 private:
  friend class IoWqWorker;
  void worker_main(IoWqWorker& w);
  void handle_work(IoWqWorker& w);  // entered with the list lock held, returns with no lock held
  Request* get_next_work(IoWqAcct& acct, std::vector<Request*>& chain);
  // What a walk of the free list found: nobody, a sleeping worker it woke, or an awake one.
  enum class Found { None, Woken, Awake };
  Found activate_free_worker(IoWqAcct& acct);     // under the workers lock
  bool activate_free_worker_rcu(IoWqAcct& acct);  // with no lock held (6.6)
  bool create_worker(IoWqAcct& acct);             // io_wqe_create_worker: false if creation failed
  bool create_io_worker(IoWqAcct& acct);          // false if create_io_thread failed fatally (rolled back)
  void create_worker_cont(IoWqAcct& acct);        // the retry of a creation that failed with -EAGAIN
  void start_worker(IoWqAcct& acct);              // create_io_thread succeeded
  // create_io_thread with the scripted errors: true if the worker started or a retry was queued
  // (-EAGAIN), false on a fatal error, which the caller rolls back.
  bool try_create_thread(IoWqAcct& acct);
  std::optional<CreateError> next_create_error();
  // io_acct_cancel_pending_work: take one queued item (`match`, or any if null) back and fail it.
  // Entered with the workers lock held. A shared lock is dropped if an item was found; otherwise
  // the list lock is taken inside it and the workers lock stays as the caller left it.
  bool cancel_one(IoWqAcct& acct, Request* match);
  void worker_sleeping(IoWqWorker& w);
  void worker_running(IoWqWorker& w);
  void queue_worker_create(IoWqWorker& w, IoWqAcct& acct);
  void hash_done(IoWqAcct& acct, std::uint32_t hash);
  sim::SpinLock& list_lock(const IoWqAcct& a) { return locks_->list_lock(a.index); }
  sim::SpinLock& workers_lock(const IoWqAcct& a) { return locks_->workers_lock(a.index); }
  // From a section under the list lock on to one under the workers lock: drop the one, take the
  // other, unless one lock is both. Returns the wait for the workers lock.
  sim::TimeNs list_to_workers(IoWqAcct& a, sim::Label site);
  void touch(const sim::Lock& l, double lines, sim::Label symbol);  // shared data lines of a section

  sim::Engine& engine_;
  KernelConfig k_;
  const UringCosts& c_;
  Task& owner_;
  CpuPlacer& placer_;
  std::unique_ptr<IoWqLocking> locks_;
  std::array<IoWqAcct, 2> acct_;
  std::deque<IoWqWorker*> free_list_;  // hlist: new free workers go to the head
  std::vector<std::unique_ptr<IoWqWorker>> workers_;
  std::uint64_t hash_map_ = 0;  // busy hash buckets (64)
  int workers_peak_ = 0;
  std::size_t create_attempts_ = 0;  // against k_.iowq_create_errors
};

}  // namespace uringsim::models
