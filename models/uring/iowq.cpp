#include "models/uring/iowq.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "models/uring/ctx.hpp"
#include "models/uring/task.hpp"
#include "sim/sched.hpp"

namespace uringsim::models {
namespace {
struct Syms {
  sim::Label enqueue = sim::intern("io_wqe_enqueue"), get_work = sim::intern("io_get_next_work"),
             busy = sim::intern("__io_worker_busy"), handle = sim::intern("io_worker_handle_work"),
             create = sim::intern("create_io_thread"), worker = sim::intern("io_wqe_worker"),
             dec_running = sim::intern("io_wqe_dec_running"),
             create_check = sim::intern("io_wqe_create_worker"), ttwu_running = sim::intern("try_to_wake_up");
  sim::Label site_enqueue = sim::intern("io_wqe_enqueue"), site_create = sim::intern("io_wqe_create_worker"),
             site_new = sim::intern("create_io_worker"), site_worker = sim::intern("io_wqe_worker"),
             site_handle = sim::intern("io_worker_handle_work"),
             site_sleeping = sim::intern("io_wq_worker_sleeping"), site_cb = sim::intern("create_worker_cb"),
             site_hash = sim::intern("io_wqe_hash_wake"), site_busy = sim::intern("__io_worker_busy"),
             site_dec_running = sim::intern("io_wqe_dec_running"),
             site_cancel = sim::intern("io_acct_cancel_pending_work"),
             site_cont = sim::intern("create_worker_cont");
};
const Syms& syms() {
  static const Syms s;
  return s;
}
}  // namespace

void IoWq::touch(const sim::Lock& l, double lines, sim::Label symbol) {
  // The section's shared data moves with the lock: if the lock came from another CPU, so must the
  // lines the section writes. This is what makes a contended section longer than its code.
  if (l.moved()) sim::current().charge(lines * c_.cacheline_transfer, symbol);
}

sim::TimeNs IoWq::list_to_workers(IoWqAcct& a, sim::Label site) {
  if (locks_->shared(a.index)) return 0;
  list_lock(a).unlock();
  workers_lock(a).lock(site);
  return workers_lock(a).last_wait_ns();
}

void IoWqWorker::before_block() {
  if (current_) LatencyBreakdown::move(*current_, Stage::NetOrDevice, sim::current().local_now_ns());
  ++acct_.blocked_in_work;
  wq_.worker_sleeping(*this);
}
void IoWqWorker::after_block() {
  --acct_.blocked_in_work;
  wq_.worker_running(*this);
  if (current_) LatencyBreakdown::move(*current_, Stage::WorkerRun, sim::current().local_now_ns());
}

IoWq::IoWq(sim::Engine& engine, const KernelConfig& k, const UringCosts& costs, Task& owner,
           CpuPlacer& placer)
    : engine_(engine),
      k_(k),
      c_(costs),
      owner_(owner),
      placer_(placer),
      locks_(make_iowq_locking(k.iowq_lock, k.iowq_rcu_wake)),
      create_attempts_(0) {
  acct_[0].index = 0;
  acct_[0].max_workers = k.max_bound;
  acct_[1].index = 1;
  acct_[1].max_workers = k.max_unbound;
  // Components (uringsim graph --kind topology): workers come and go during the run, so the pool
  // is one node.
  engine.declare("queue", "io-wq");
  engine.declare("thread", "iou-wrk workers");
  for (const IoWqAcct& a : acct_) {
    const std::string list = std::string("io-wq ") + (a.index ? "unbound" : "bound") + " work list";
    engine.declare("queue", list);
    engine.declare_edge("io-wq", list, "io_wqe_enqueue");
    engine.declare_edge(list, list_lock(a).name(), "protected by");
    engine.declare_edge("iou-wrk workers", list, "io_get_next_work");
  }
  for (const IoWqAcct& a : acct_)  // once per lock: the accounts may share it
    if (a.index == 0 || &workers_lock(a) != &workers_lock(acct_[0]))
      engine.declare_edge("iou-wrk workers", workers_lock(a).name(), "free list, counts, creation");
}

IoWq::~IoWq() = default;

void IoWq::enqueue(Request& req) {
  IoWqAcct& acct = acct_[req.wq_unbound ? 1 : 0];
  list_lock(acct).lock(syms().site_enqueue);
  LatencyBreakdown::lock_wait(req, list_lock(acct).last_wait_ns());
  sim::current().charge(c_.iowq_enqueue, syms().enqueue);
  touch(list_lock(acct), c_.iowq_list_lines, syms().enqueue);
  // Hashed work goes right after the last item of its bucket, so each chain stays contiguous.
  auto pos = acct.list.end();
  if (req.wq_hashed) {
    for (auto it = acct.list.begin(); it != acct.list.end(); ++it)
      if ((*it)->wq_hashed && (*it)->wq_hash == req.wq_hash) pos = std::next(it);
  }
  acct.list.insert(pos, &req);
  acct.list_peak = std::max(acct.list_peak, acct.list.size());
  acct.stalled = false;
  sim::SpinLock& workers = workers_lock(acct);
  bool do_create;
  if (locks_->wake_under_workers_lock()) {  // the free list is the workers lock's
    LatencyBreakdown::lock_wait(req, list_to_workers(acct, syms().site_enqueue));
    touch(workers, c_.iowq_free_list_lines, syms().enqueue);
    do_create = activate_free_worker(acct) == Found::None;
    workers.unlock();
  } else {  // 6.6: walked under RCU, after the list lock is dropped
    list_lock(acct).unlock();
    do_create = !activate_free_worker_rcu(acct);
  }
  if (do_create && (req.wq_concurrent || acct.nr_running == 0) && !create_worker(acct)) {
    // The creation failed. With no worker left in the account nobody would ever run this work:
    // take it back and fail it.
    workers.lock(syms().site_enqueue);
    if (acct.nr_workers == 0 && cancel_one(acct, &req) && locks_->shared(acct.index))
      workers.lock(syms().site_enqueue);
    workers.unlock();
  }
}

bool IoWq::cancel_one(IoWqAcct& acct, Request* match) {
  const bool nested = !locks_->shared(acct.index);  // else the caller holds it already
  sim::SpinLock& list = list_lock(acct);
  if (nested) list.lock(syms().site_cancel);
  const auto it = match ? std::find(acct.list.begin(), acct.list.end(), match) : acct.list.begin();
  if (it == acct.list.end()) {
    if (nested) list.unlock();
    return false;
  }
  Request& req = **it;
  acct.list.erase(it);
  ++acct.cancelled;
  list.unlock();
  req.ctx->io_wq_cancel(req);  // io_run_cancel
  return true;
}

IoWq::Found IoWq::activate_free_worker(IoWqAcct& acct) {
  auto& self = sim::current();
  // The worker's lines are where it last ran. Under the workers lock they came with the lock
  // (iowq_free_list_lines); the lockless walk fetches them itself.
  const bool lockless = !locks_->wake_under_workers_lock();
  for (IoWqWorker* w : free_list_) {
    if (&w->acct_ != &acct) continue;
    const double remote = w->thread_ && w->thread_->cpu() != self.cpu() ? c_.cacheline_transfer : 0;
    if (lockless) self.charge(c_.iowq_worker_lines * remote, syms().enqueue);
    if (w->asleep_) {  // TASK_INTERRUPTIBLE: wake_up_process() wakes it
      w->asleep_ = false;
      sim::wake_up_process(*w->thread_);
      return Found::Woken;
    }
    // Awake (just woken, or finishing work). 6.x counts it as found, since it will look at the
    // list again, and its wake_up_process() takes the worker's pi_lock and reads its state. Before,
    // only a worker the wake-up actually woke counted; the kernel's would also wake one still
    // TASK_INTERRUPTIBLE at the top of its loop and stop there, which this walk does not track,
    // so it passes over more awake workers than the kernel and is not charged for them.
    if (k_.iowq_wake_first_free) {
      self.charge(c_.pi_lock + c_.ttwu_running_lines * remote, syms().ttwu_running);
      return Found::Awake;
    }
  }
  return Found::None;
}

bool IoWq::activate_free_worker_rcu(IoWqAcct& acct) {
  // No lock orders this read of the workers' state against theirs: it happens at the
  // simulation's date, with the pending work run first and the work a wake-up promised run at once
  // after, as around a lock's sections. (Without the second flush the lookahead broke: a thread
  // resumed before its horizon, twin/echo-unpinned.json async-4.)
  // A walk that woke nobody leaves only its own CPU work, which needs no interaction of its own.
  sim::current().flush();
  const Found found = activate_free_worker(acct);
  if (found == Found::Woken) sim::current().flush();
  return found != Found::None;
}

bool IoWq::create_worker(IoWqAcct& acct) {
  sim::SpinLock& workers = workers_lock(acct);
  workers.lock(syms().site_create);
  touch(workers, c_.iowq_count_lines, syms().create_check);
  if (acct.nr_workers >= acct.max_workers) {  // nothing to create: not a failure
    workers.unlock();
    return true;
  }
  ++acct.nr_workers;
  workers.unlock();
  ++acct.nr_running;
  return create_io_worker(acct);
}

std::optional<CreateError> IoWq::next_create_error() {
  const auto& errors = k_.iowq_create_errors;
  if (create_attempts_ >= errors.size()) return std::nullopt;
  return errors[create_attempts_++];
}

bool IoWq::try_create_thread(IoWqAcct& acct) {
  sim::current().charge(c_.worker_create, syms().create);
  const auto err = next_create_error();
  if (!err) {
    start_worker(acct);
    return true;
  }
  ++acct.create_failed;
  if (*err == CreateError::Enomem) return false;
  // -EAGAIN, io_should_retry_thread: schedule_work(), whose io_workqueue_create queues
  // create_worker_cont as task_work on the owner (the kworker hop is not modelled). The worker
  // still counts.
  ++acct.create_retries;
  owner_.add(nullptr, [this, &acct] { create_worker_cont(acct); });
  return true;
}

bool IoWq::create_io_worker(IoWqAcct& acct) {
  if (try_create_thread(acct)) return true;
  --acct.nr_running;  // fatal: roll back
  workers_lock(acct).lock(syms().site_new);
  --acct.nr_workers;
  workers_lock(acct).unlock();
  return false;
}

void IoWq::create_worker_cont(IoWqAcct& acct) {
  if (try_create_thread(acct)) return;
  // Fatal: roll back; with no worker left nothing would run the account's queued work, so all of
  // it is cancelled. A shared lock is dropped around each cancel and taken again; otherwise the
  // workers lock is dropped first and each cancel takes the list lock.
  --acct.nr_running;
  sim::SpinLock& workers = workers_lock(acct);
  workers.lock(syms().site_cont);
  --acct.nr_workers;
  if (acct.nr_workers != 0) {
    workers.unlock();
    return;
  }
  const bool shared = locks_->shared(acct.index);
  if (!shared) workers.unlock();
  while (cancel_one(acct, nullptr))
    if (shared) workers.lock(syms().site_cont);
  if (shared) workers.unlock();
}

void IoWq::start_worker(IoWqAcct& acct) {
  const int id = static_cast<int>(workers_.size());
  workers_.push_back(std::make_unique<IoWqWorker>(*this, acct, id));
  IoWqWorker& w = *workers_.back();
  w.running_ = true;
  ++acct.created;
  acct.workers_peak = std::max(acct.workers_peak, acct.nr_workers);
  workers_peak_ = std::max(workers_peak_, workers_alive());
  workers_lock(acct).lock(syms().site_new);
  w.free_ = true;
  free_list_.push_front(&w);
  workers_lock(acct).unlock();
  // Today's workers inherit the owner's affinity: pinned where it is pinned. Otherwise (and
  // before 6.x) they may run on any CPU.
  const sim::Thread* owner = owner_.has_thread() ? &owner_.thread() : nullptr;
  const bool inherit = k_.workers_inherit_affinity && owner && owner->pinned();
  const int cpu = inherit ? placer_.pin(owner->cpu()) : placer_.pick();
  // Creating a thread from a running one may run the new thread before spawn() returns: it sets
  // its own handle first.
  sim::ThreadOptions o;
  o.pinned = inherit;
  o.kernel = true;  // never returns to user space
  w.thread_ = &engine_.spawn(
      fmt::format("iou-wrk-{}", id), "iou-wrk", cpu,
      [this, &w, cpu] {
        w.thread_ = &sim::current();
        sim::switch_in_after_sleep();  // wake_up_new_task: the new thread is scheduled like a wake-up
        worker_main(w);
        placer_.release(cpu);
      },
      o);
}

void IoWq::worker_main(IoWqWorker& w) {
  IoWqAcct& acct = w.acct_;
  sim::Thread& self = *w.thread_;
  bool last_timeout = false;
  bool ran = false;  // handled work since its last schedule(): still TASK_RUNNING
  for (;;) {
    list_lock(acct).lock(syms().site_worker);
    touch(list_lock(acct), c_.iowq_count_lines, syms().worker);
    if (acct.run_queue()) {
      handle_work(w);
      last_timeout = false;
      ran = true;
      continue;
    }
    list_to_workers(acct, syms().site_worker);  // idle bookkeeping: free list, counts
    sim::SpinLock& workers = workers_lock(acct);
    touch(workers, c_.iowq_free_list_lines, syms().worker);
    // Timed out idle: exit, unless this is the account's last worker.
    if (last_timeout && acct.nr_workers > 1) {
      --acct.nr_workers;
      ++acct.exited;
      if (w.free_) free_list_.erase(std::find(free_list_.begin(), free_list_.end(), &w));
      w.free_ = false;
      workers.unlock();
      if (w.running_) {
        w.running_ = false;
        --acct.nr_running;
      }
      return;
    }
    if (!w.free_) {
      w.free_ = true;
      free_list_.push_front(&w);
    }
    if (ran) {
      // The loop sets TASK_INTERRUPTIBLE only at its top and taking an item set TASK_RUNNING, so
      // this pass's schedule_timeout() does not sleep: the CPU picks again (the server its
      // completion woke may run first) while the worker stays free and awake, found by the next
      // enqueue without a wake-up. The next pass sleeps.
      workers.unlock();
      ran = false;
      self.schedule_running(syms().worker);
      continue;
    }
    // Idle from here: TASK_INTERRUPTIBLE, which the kernel sets before the queue check. Work
    // queued after that check must not wait for a new worker: either the enqueue woke us (it saw
    // us asleep), or it counted us as running and our schedule() would not sleep (a woken or
    // still-running task does not block, and skips the sleep hook); then we look again.
    w.asleep_ = true;
    workers.unlock();
    if (!w.asleep_ || acct.run_queue()) {
      if (!w.asleep_) self.park();  // take the wake-up's permit
      w.asleep_ = false;
      last_timeout = false;
      continue;
    }
    worker_sleeping(w);  // schedule() of an io worker runs the sleep hook
    const bool woken = self.park_for_ns(k_.worker_idle_timeout_ns);
    w.asleep_ = false;
    sim::switch_in_after_sleep();
    worker_running(w);
    last_timeout = !woken;
  }
}

void IoWq::handle_work(IoWqWorker& w) {
  IoWqAcct& acct = w.acct_;
  auto& self = sim::current();
  for (;;) {
    std::vector<Request*> chain;
    Request* req = get_next_work(acct, chain);
    // The worker waited for the list lock before it knew which item it would get: that wait
    // delayed the item it got.
    const sim::TimeNs list_wait = list_lock(acct).last_wait_ns();
    if (!req) {
      list_lock(acct).unlock();
      return;
    }
    const sim::TimeNs busy_wait = list_to_workers(acct, syms().site_busy);
    if (w.free_) {  // __io_worker_busy
      self.charge(c_.iowq_worker_busy, syms().busy);
      touch(workers_lock(acct), c_.iowq_free_list_lines, syms().busy);
      w.free_ = false;
      free_list_.erase(std::find(free_list_.begin(), free_list_.end(), &w));
    }
    workers_lock(acct).unlock();
    // The request may be completed, read and recycled by the application during the chain.
    const bool hashed = req->wq_hashed;
    const std::uint32_t hash = req->wq_hash;
    for (Request* r : chain) {
      self.cond_resched();  // io_assign_current_work: before each item, with no lock held
      if (r == req) LatencyBreakdown::lock_wait(*r, list_wait + busy_wait);  // inside its queue time
      LatencyBreakdown::move(*r, Stage::WorkerRun, self.local_now_ns());
      self.charge(c_.iowq_work_overhead, syms().handle);
      trace_step(*r, 't', "io-wq worker");
      w.current_ = r;
      r->ctx->io_wq_submit_work(*r, w);
      w.current_ = nullptr;
    }
    if (hashed) hash_done(acct, hash);
    list_lock(acct).lock(syms().site_handle);
  }
}

Request* IoWq::get_next_work(IoWqAcct& acct, std::vector<Request*>& chain) {
  sim::current().charge(c_.iowq_get_work, syms().get_work);
  touch(list_lock(acct), c_.iowq_list_lines, syms().get_work);
  bool stall = false;
  for (auto it = acct.list.begin(); it != acct.list.end(); ++it) {
    Request* r = *it;
    if (!r->wq_hashed) {
      chain.push_back(r);
      acct.list.erase(it);
      return r;
    }
    const std::uint64_t bit = std::uint64_t{1} << (r->wq_hash % 64);
    if (hash_map_ & bit) {
      stall = true;
      continue;
    }
    // Take the whole contiguous chain of this bucket; it runs serially on this worker.
    hash_map_ |= bit;
    auto end = it;
    while (end != acct.list.end() && (*end)->wq_hashed && (*end)->wq_hash == r->wq_hash)
      chain.push_back(*end++);
    acct.list.erase(it, end);
    return r;
  }
  if (stall) acct.stalled = true;  // io_wait_on_hash: woken when a bucket frees
  return nullptr;
}

void IoWq::hash_done(IoWqAcct& acct, std::uint32_t hash) {
  hash_map_ &= ~(std::uint64_t{1} << (hash % 64));
  list_lock(acct).lock(syms().site_hash);
  const bool was_stalled = acct.stalled;
  acct.stalled = false;
  if (!was_stalled) {
    list_lock(acct).unlock();
    return;
  }
  if (!locks_->wake_under_workers_lock()) {  // io_wq_hash_wake: under RCU (6.6)
    list_lock(acct).unlock();
    activate_free_worker_rcu(acct);
    return;
  }
  list_to_workers(acct, syms().site_hash);  // a free worker is the workers lock's
  activate_free_worker(acct);
  workers_lock(acct).unlock();
}

void IoWq::worker_sleeping(IoWqWorker& w) {
  if (!w.running_) return;
  w.running_ = false;
  IoWqAcct& acct = w.acct_;
  // io_wqe_dec_running, under the lock the design gives the sleep hook; the creation request is
  // queued after the lock is dropped.
  const bool whole = locks_->sleep_hook_holds_workers_lock();
  sim::SpinLock& l = whole ? workers_lock(acct) : list_lock(acct);
  l.lock(whole ? syms().site_sleeping : syms().site_dec_running);
  touch(l, c_.iowq_count_lines, syms().dec_running);
  --acct.nr_running;
  const bool create = acct.nr_running == 0 && acct.run_queue();
  if (create) ++acct.nr_running;
  l.unlock();
  if (create) queue_worker_create(w, acct);
}

void IoWq::worker_running(IoWqWorker& w) {
  if (w.running_) return;
  w.running_ = true;
  ++w.acct_.nr_running;
}

void IoWq::queue_worker_create(IoWqWorker& w, IoWqAcct& acct) {
  if (w.create_pending_) {  // one creation request per worker in flight
    --acct.nr_running;
    return;
  }
  w.create_pending_ = true;
  ++acct.create_requests;
  // create_worker_cb runs in the owning task, at its next task_work run.
  owner_.add(nullptr, [this, &w, &acct] {
    workers_lock(acct).lock(syms().site_cb);
    const bool do_create = acct.nr_workers < acct.max_workers;
    if (do_create) ++acct.nr_workers;
    workers_lock(acct).unlock();
    w.create_pending_ = false;
    if (do_create)
      create_io_worker(acct);
    else
      --acct.nr_running;
  });
}

nlohmann::json IoWq::to_json() const {
  auto acct_json = [](const IoWqAcct& a) {
    return nlohmann::json{{"max_workers", a.max_workers},
                          {"workers_at_end", a.nr_workers},
                          {"workers_peak", a.workers_peak},
                          {"created", a.created},
                          {"exited", a.exited},
                          {"create_requests", a.create_requests},
                          {"create_failed", a.create_failed},
                          {"create_retries", a.create_retries},
                          {"cancelled", a.cancelled},
                          {"running_at_end", a.nr_running},
                          {"queued_at_end", a.list.size()},
                          {"queue_peak", a.list_peak}};
  };
  return {{"workers_peak", workers_peak_},
          {"workers_created", acct_[0].created + acct_[1].created},
          {"bound", acct_json(acct_[0])},
          {"unbound", acct_json(acct_[1])}};
}

}  // namespace uringsim::models
