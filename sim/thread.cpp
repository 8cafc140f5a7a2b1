#include "sim/thread.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "sim/checks.hpp"
#include "sim/engine.hpp"
#include "sim/lock.hpp"
#include "sim/sg_impl.hpp"

namespace uringsim::sim {

Thread* g_running = nullptr;

namespace {
constexpr TimeNs kTinyNs = 1e-6;  // less than this of CPU work left is float rounding
}  // namespace

Thread::Thread(Engine& e, int id, std::string name, std::string comm, int cpu, ThreadOptions opts)
    : engine_(e),
      id_(id),
      name_(std::move(name)),
      comm_(std::move(comm)),
      cpu_(cpu),
      opts_(opts),
      impl_(std::make_unique<Impl>()) {
  scheduled_ = opts.accounted && !opts.interrupt && cpu < e.machine().cores;
  se_.weight = opts.weight * 1024;
  se_.pinned = opts.pinned;
  kernel_depth_ = opts.kernel ? 1 : 0;
}

Thread::~Thread() = default;

void Thread::account(Cycles c, Label symbol) {
  if (symbol >= cycles_.size()) cycles_.resize(symbol + 1, 0.0);
  cycles_[symbol] += c;
}

void Thread::charge(Cycles c, Label symbol) {
  last_symbol_ = symbol;
  if (c <= 0) return;
  // Unaccounted threads (timers, samplers, remote peers) model no CPU of the machine: their work
  // takes no simulated time and is not counted.
  if (!opts_.accounted) return;
  pending_ += c;
  account(c, symbol);
  if (engine_.trace()) {
    if (!pending_parts_.empty() && pending_parts_.back().first == symbol)
      pending_parts_.back().second += c;
    else
      pending_parts_.emplace_back(symbol, c);
  }
}

// `fraction` of the pending work, just run over [t0, t1], as one slice per code path in
// proportion to its cycles; the rest stays for the next stretch (after a preemption).
void Thread::trace_compute(TimeNs t0, TimeNs t1, double fraction) {
  TraceSink* tr = engine_.trace();
  if (!tr || pending_parts_.empty()) return;
  const bool shown = tr->in_window(t0, t1);
  double total = 0;
  for (const auto& [sym, c] : pending_parts_) total += c * fraction;
  TimeNs t = t0;
  for (auto& [sym, c] : pending_parts_) {
    const double part = c * fraction;
    const TimeNs d = total > 0 ? (t1 - t0) * part / total : 0;
    if (shown && d > 0) tr->slice(id_, label_name(sym), "cpu", t, t + d);
    t += d;
    c -= part;
  }
  if (fraction >= 1.0) pending_parts_.clear();
}

void Thread::trace_wait(const char* what, TimeNs t0) {
  TraceSink* tr = engine_.trace();
  if (!tr) return;
  const TimeNs t1 = engine_.clock_ns();
  if (t1 > t0 && tr->in_window(t0, t1)) tr->slice(id_, what, "sched", t0, t1);
}

// Every SimGrid call lets other actors run; before each, this thread's horizon says the earliest
// date it returns at (sim/horizon.hpp). After it, the date must not have been passed.
void Thread::horizon_until(TimeNs t) {
  engine_.horizons().set(id_, t);
}

void Thread::check_horizon() const {
  // Others ran ahead up to this date: resuming earlier would break causality.
  if (engine_.clock_ns() < engine_.horizons().get(id_) - 1e-3)
    throw std::logic_error(name_ + ": resumed at " + std::to_string(engine_.clock_ns()) +
                           " ns, before its lookahead horizon " +
                           std::to_string(engine_.horizons().get(id_)));
}

void Thread::sg_sleep_ns(TimeNs ns) {
  horizon_until(engine_.clock_ns() + ns);
  simgrid::s4u::this_actor::sleep_for(ns * 1e-9);
  check_horizon();
}

void Thread::sg_acquire(bool token) {
  horizon_until(token ? engine_.clock_ns() : Horizons::kNever);
  impl_->sem->acquire();
  check_horizon();
}

bool Thread::sg_acquire_timeout(TimeNs ns) {
  horizon_until(engine_.clock_ns() + ns);
  const bool timed_out = impl_->sem->acquire_timeout(ns * 1e-9);
  check_horizon();
  return timed_out;
}

void Thread::sg_release() {
  const TimeNs now = engine_.clock_ns();
  engine_.horizons().set(id_, now);  // it may resume at once
  if (g_running) g_running->horizon_until(now);
  impl_->sem->release();
}

SyncCause Thread::run_ahead_verdict() const {
  if (!engine_.lookahead()) return SyncCause::Always;
  // It would be preempted before its pending work ends: where preemption is enabled again (a
  // spinlock's release), or at once. Not in kernel mode without full preemption: only preemption
  // points (which execute the work first) act on it there.
  const TimeNs t = local_now_ns();
  if ((need_resched_ || t >= resched_at_) &&
      (kernel_depth_ == 0 || engine_.scheduler().spec().preempt == PreemptModel::Full))
    return SyncCause::Resched;
  // A tick inside the pending work may preempt it if others wait for this CPU: the work must run
  // first. With nobody queued (and nobody able to queue before `t`), ticks change nothing.
  if (scheduled_ && engine_.scheduler().has_queued(cpu_) &&
      t >= engine_.scheduler().next_tick_ns(last_tick_ns_) - 1e-6)
    return SyncCause::Tick;
  return t <= engine_.lookahead_ns(id_) ? SyncCause::None : SyncCause::OtherThreadFirst;
}

void Thread::note_sync_cause(SyncCause why) {
  sync_cause_ = why;
  sync_first_ = -1;
  if (why != SyncCause::OtherThreadFirst) return;
  // Bounded by the run's end rather than by a thread: nothing to attribute.
  const int first = engine_.horizons().argmin_excluding(id_);
  if (first >= 0 && engine_.horizons().get(first) <= engine_.lookahead_ns(id_))
    sync_first_ = first;
  else
    sync_cause_ = SyncCause::Always;
}

bool Thread::may_wait_ahead() const {
  // Others may act before the arrival. The queue orders waiters by arrival; a release before it
  // (Lock::unlock) or a preemption asked before it (leave_lock_queue_ahead) sends the thread
  // back, and an interrupt delays it (CpuScheduler::steal). Left out: a tick inside the work
  // (a busy wait does not look at ticks, the work would have), a preemption already due,
  // machines with interrupt handlers (their time is stolen, not spun).
  if (!scheduled_ || opts_.interrupt || engine_.has_interrupts() || pending_ <= 0 || !engine_.lookahead())
    return false;
  const TimeNs t = local_now_ns();
  const bool may_preempt =
      spin_held_ == 0 && (kernel_depth_ == 0 || engine_.scheduler().spec().preempt == PreemptModel::Full);
  if (may_preempt && (need_resched_ || t >= resched_at_)) return false;
  return t < engine_.scheduler().next_tick_ns(last_tick_ns_) - 1e-6;
}

void Thread::reach_shared() {
  const SyncCause why = run_ahead_verdict();
  if (why == SyncCause::None) {
    engine_.step(*this, local_now_ns());
    return;
  }
  note_sync_cause(why);
  flush();
}

void Thread::flush() {
  engine_.step(*this, local_now_ns());
  const SyncCause cause = std::exchange(sync_cause_, SyncCause::Always);
  const int first = std::exchange(sync_first_, -1);
  if (pending_ <= 0) return;
  engine_.count_sync(cause, first);
  RunningGuard guard;
  const double amount = pending_;
  pending_ = 0;
  engine_.count_event(Engine::EventKind::Compute);
  if (scheduled_) {
    run_ns(engine_.cycles_to_ns(amount));
    return;
  }
  // An interrupt handler, or an accounted thread outside the machine's CPUs.
  const TimeNs t0 = engine_.clock_ns();
  if (opts_.interrupt && cpu_ < engine_.machine().cores)
    engine_.scheduler().steal(cpu_, t0, engine_.cycles_to_ns(amount));
  sg_sleep_ns(engine_.cycles_to_ns(amount));
  trace_compute(t0, engine_.clock_ns());
}

bool Thread::preemptible_at_point() const {
  // Holding a spinlock, or queued for one, disables preemption; promised work runs as computed.
  return spin_held_ == 0 && !waiting_lock_ && no_preempt_until_ <= engine_.clock_ns();
}

bool Thread::preemptible() const {
  if (!preemptible_at_point()) return false;
  return kernel_depth_ == 0 || engine_.scheduler().spec().preempt == PreemptModel::Full;
}

// A preemption asked while this thread ran in kernel mode takes effect here. Nothing to do when
// none is pending and no other thread can ask for it before this thread's local date.
void Thread::preemption_point() {
  if (sync_resched() && preemptible_at_point()) yield_cpu();
}

// Whether a preemption is due at the local date: known without an event when no other thread
// could have asked for one before it (the lookahead); else the pending work runs first.
bool Thread::sync_resched() {
  if (!scheduled_) return false;
  if (!need_resched_ && local_now_ns() < resched_at_) {
    const SyncCause why = run_ahead_verdict();
    if (why == SyncCause::None) return false;
    note_sync_cause(why);
  } else {
    note_sync_cause(SyncCause::Resched);
  }
  flush();  // still in kernel mode: runs to its end, noting any preemption asked meanwhile
  fold_resched(engine_.clock_ns());
  return need_resched_;
}

bool Thread::need_resched() {
  if (engine_.scheduler().spec().preempt == PreemptModel::Full) return false;
  return sync_resched();
}

void Thread::exit_kernel() {
  if (kernel_depth_ <= 0) throw std::logic_error(name_ + ": exit_kernel outside kernel mode");
  if (kernel_depth_ == 1 && engine_.scheduler().spec().preempt != PreemptModel::Full) preemption_point();
  --kernel_depth_;
}

bool Thread::resched_deferred() const {
  return need_resched_ && engine_.scheduler().spec().preempt != PreemptModel::Full;
}

void Thread::might_resched() {
  if (spin_held_ == 0 && engine_.scheduler().spec().preempt == PreemptModel::Voluntary) preemption_point();
}

void Thread::cond_resched() {
  if (engine_.scheduler().spec().preempt == PreemptModel::Full) return;  // compiled to nothing
  preemption_point();
}

// The work is a delay while this thread is its CPU's current thread. It is cut at tick
// boundaries, where the scheduler may preempt it (slice used up); a wake-up preemption asked
// meanwhile takes effect at the next cut or when the work ends.
void Thread::run_ns(TimeNs ns) {
  CpuScheduler& sch = engine_.scheduler();
  for (;;) {
    while (ns > 0) {
      const TimeNs now = engine_.clock_ns();
      const bool promised = no_preempt_until_ > now;
      // A tick passed while it ran: the scheduler may preempt it (its slice used up).
      if (!promised && now >= sch.next_tick_ns(last_tick_ns_) - 1e-6) {
        last_tick_ns_ = now;
        if (sch.tick(*this, now)) need_resched_ = true;
      }
      fold_resched(now);
      if (need_resched_ && preemptible()) {
        yield_cpu();
        ns += engine_.cycles_to_ns(pending_);  // the switch back in
        pending_ = 0;
        continue;
      }
      TimeNs chunk = promised ? ns : std::min(ns, sch.next_tick_ns(now) - now);
      if (!promised && preemptible() && resched_at_ > now) chunk = std::min(chunk, resched_at_ - now);
      if (promised) {
        sg_sleep_ns(chunk);
      } else {  // a wake-up preemption (request_resched) cuts it short
        impl_->waiting = Impl::Wait::Work;
        impl_->released = false;
        const bool timed_out = sg_acquire_timeout(chunk);
        if (timed_out && impl_->released) sg_acquire(true);  // asked at the chunk's very end
        impl_->waiting = Impl::Wait::None;
        if (!timed_out) chunk = std::min(chunk, engine_.clock_ns() - now);
      }
      if (engine_.trace()) trace_compute(now, engine_.clock_ns(), chunk >= ns ? 1.0 : chunk / ns);
      ns -= chunk;
      if (ns < kTinyNs) ns = 0;  // rounding: the work is done
      // Interrupts ran meanwhile: the rest of the work starts later (and so do any that arrive while
      // it waits).
      for (const TimeNs t1 = engine_.clock_ns(); stolen_ns_ > 0;) {
        const TimeNs s = std::exchange(stolen_ns_, 0);
        sg_sleep_ns(s);
        if (stolen_ns_ <= 0) trace_wait("interrupted", t1);
      }
    }
    fold_resched(engine_.clock_ns());
    if (!(need_resched_ && preemptible())) return;
    yield_cpu();  // preempted at the end of the work; the switch back in is work too
    ns = engine_.cycles_to_ns(pending_);
    pending_ = 0;
  }
}

bool Thread::yield_cpu() {
  if (spin_held_ > 0 || waiting_lock_)
    throw std::logic_error(name_ + ": preempted while holding or waiting for a spinlock (" +
                           (waiting_lock_ ? waiting_lock_->name() : held_.back().lock->name()) + ")");
  clear_resched();
  RunningGuard guard;
  const bool switched = engine_.scheduler().yield(*this, engine_.clock_ns());
  if (!se_.on_cpu) wait_dispatch();
  return switched;
}

void Thread::schedule_running(Label path) {
  check_may_sleep(path, "calls schedule()");
  if (!scheduled_) return;
  const Cycles pick = engine_.costs().schedule_noswitch_cycles;
  // Alone on its CPU, nobody able to join it before its local date, no preemption asked (the
  // real pick would clear it): the pick finds it again.
  if (!resched_pending() && !engine_.scheduler().has_others(cpu_) && run_ahead_verdict() == SyncCause::None) {
    charge(pick, sym::schedule());
    return;
  }
  flush();  // the pick sees its vruntime up to now
  fold_resched(engine_.clock_ns());
  if (!yield_cpu()) charge(pick, sym::schedule());
}

void Thread::wait_dispatch() {
  RunningGuard guard;
  const TimeNs t0 = engine_.clock_ns();
  while (!dispatched_) {
    impl_->waiting = Impl::Wait::Dispatch;
    impl_->released = false;
    sg_acquire(false);
    impl_->waiting = Impl::Wait::None;
  }
  dispatched_ = false;
  trace_wait("runnable", t0);
  if (dispatch_delay_ > 0) {  // the CPU wakes up for us (IPI, idle exit)
    engine_.count_event(Engine::EventKind::Sleep);
    const TimeNs t1 = engine_.clock_ns();
    sg_sleep_ns(dispatch_delay_);
    trace_wait("waking", t1);
  }
  engine_.scheduler().started_running(*this, engine_.clock_ns());
  last_tick_ns_ = engine_.clock_ns();
  if (dispatch_switched_) {
    charge(engine_.costs().context_switch_cycles, sym::schedule());
    count(sym::schedule());
  }
  if (dispatch_migrate_ > 0) charge(dispatch_migrate_, sym::migrate());
  if (dispatch_remote_wakee_ > 0) charge(dispatch_remote_wakee_, sym::remote_wakee());
}

void Thread::dispatch(TimeNs delay, bool switched, Cycles migrate_cycles, Cycles remote_wakee_cycles) {
  dispatched_ = true;
  dispatch_delay_ = delay;
  dispatch_switched_ = switched;
  dispatch_migrate_ = migrate_cycles;
  dispatch_remote_wakee_ = remote_wakee_cycles;
  if (impl_->waiting == Impl::Wait::Dispatch && !impl_->released) {
    RunningGuard guard;
    impl_->released = true;
    sg_release();
  }
}

bool Thread::cut_work() {
  if (impl_->waiting != Impl::Wait::Work || impl_->released || !preemptible()) return false;
  RunningGuard guard;
  impl_->released = true;
  sg_release();
  return true;
}

void Thread::request_resched_at(TimeNs at) {
  if (need_resched_) return;
  if (at <= engine_.clock_ns()) {
    request_resched();
    return;
  }
  resched_at_ = std::min(resched_at_, at);
  // cut: its work re-plans to stop where the IPI lands
  if (!cut_work() && !leave_lock_queue_ahead()) rq_changed();
}

void Thread::request_resched() {
  need_resched_ = true;
  if (!cut_work() && !leave_lock_queue_ahead()) rq_changed();  // cut: its work stops here, it yields
}

void Thread::rq_changed() {
  // A polling loop waits with a timeout only up to its next tick while threads are queued: make
  // it re-arm its wait with that limit.
  if (impl_->waiting == Impl::Wait::Park && state_ == State::Spinning && !impl_->released) {
    RunningGuard guard;
    impl_->released = true;
    sg_release();
  }
}

TimeNs Thread::local_now_ns() const {
  return engine_.clock_ns() + engine_.cycles_to_ns(pending_);
}

bool Thread::holds(const Lock& l) const {
  for (const HeldLock& h : held_)
    if (h.lock == &l) return true;
  return false;
}

void Thread::check_may_sleep(Label path, const char* what) {
  if (spin_held_ == 0) return;
  const HeldLock* spin = nullptr;
  for (const HeldLock& h : held_)
    if (h.lock->kind() == Lock::Kind::Spin) spin = &h;
  report_violation(violation::kSleepHoldingSpinlock, path == kNoLabel ? last_symbol_ : path, 0,
                   std::string(what) + " while holding spinlock " + spin->lock->name() + " taken at " +
                       label_name(spin->site));
}

void Thread::sleep_ns(TimeNs ns, Label path) {
  if (ns > 0) check_may_sleep(path, "sleeps");
  if (!scheduled_) {
    off_cpu_ns(ns);
    return;
  }
  flush();
  if (ns <= 0) return;
  engine_.count_event(Engine::EventKind::Sleep);
  RunningGuard guard;
  CpuScheduler& sch = engine_.scheduler();
  const TimeNs t0 = engine_.clock_ns();
  state_ = State::Sleeping;
  sch.block(*this, t0);
  sg_sleep_ns(ns);
  state_ = State::Running;
  trace_wait("sleep", t0);
  sch.wake(*this, nullptr, -1, engine_.clock_ns(), true);  // its timer expired
  wait_dispatch();
}

void Thread::off_cpu_ns(TimeNs ns) {
  flush();
  if (ns <= 0) return;
  engine_.count_event(Engine::EventKind::Sleep);
  RunningGuard guard;
  state_ = State::Sleeping;
  const TimeNs t0 = engine_.clock_ns();
  sg_sleep_ns(ns);
  state_ = State::Running;
  trace_wait("sleep", t0);
}

bool Thread::consume_permit_or_prepare(State waiting_state, bool timed) {
  flush();
  if (permit_) {  // a wake-up came first: take it instead of waiting
    permit_ = false;
    // schedule() still runs, finds the caller runnable and picks it again: no switch.
    if (scheduled_) charge(engine_.costs().schedule_noswitch_cycles, sym::schedule());
    return true;
  }
  engine_.count_event(timed ? Engine::EventKind::ParkTimeout : Engine::EventKind::Park);
  state_ = waiting_state;
  impl_->waiting = Impl::Wait::Park;
  impl_->released = false;
  impl_->unparked = false;
  return false;
}

bool Thread::wait_off_cpu(TimeNs timeout, const char* what) {
  RunningGuard guard;
  const TimeNs t0 = engine_.clock_ns();
  clear_resched();  // __schedule clears the flag (and an IPI landing later finds nothing)
  if (scheduled_) engine_.scheduler().block(*this, t0);
  bool timed_out = false;
  if (!std::isfinite(timeout)) {  // only another thread can end this wait
    if (impl_->released) {
      // Woken while it switched out (the scheduler's dispatch of the next thread let others run):
      // it never blocks, so it is not counted as blocked (nobody would undo it), and its horizon
      // is now, not its timeout.
      sg_acquire(true);
    } else {
      impl_->forever = true;
      engine_.thread_became_blocked(true);
      sg_acquire(false);
      impl_->forever = false;
    }
  } else if (impl_->released) {  // woken while it switched out, as above: no wait at all
    sg_acquire(true);
  } else {
    timed_out = sg_acquire_timeout(timeout);
    // A release at the very date of the timeout counts as a wake; consume its token.
    if (timed_out && impl_->released) sg_acquire(true);
  }
  const bool woken = !timed_out || impl_->released;
  impl_->waiting = Impl::Wait::None;
  state_ = State::Running;
  trace_wait(what, t0);
  if (scheduled_) {
    // A wake-up that takes effect later (unpark_at): still asleep until then.
    if (woken && wake_not_before_ns_ > engine_.clock_ns()) {
      const TimeNs t1 = engine_.clock_ns();
      sg_sleep_ns(wake_not_before_ns_ - t1);
      trace_wait(what, t1);
    }
    wake_not_before_ns_ = 0;
    engine_.scheduler().wake(*this, woken ? waker_ : nullptr, woken ? waker_cpu_ : -1, engine_.clock_ns(),
                             !woken, woken ? waker_how_ : Wake::Normal);
    wait_dispatch();
  }
  return woken;
}

void Thread::park(Label path) {
  check_may_sleep(path, "parks");
  if (consume_permit_or_prepare(State::Parked, false)) return;
  wait_off_cpu(std::numeric_limits<double>::infinity(), "sleeping");
}

bool Thread::park_for_ns(TimeNs ns, Label path) {
  check_may_sleep(path, "parks");
  if (consume_permit_or_prepare(State::Parked, true)) return true;
  return wait_off_cpu(ns, "sleeping");
}

bool Thread::spin_for_ns(TimeNs ns, Label symbol) {
  if (consume_permit_or_prepare(State::Spinning, true)) return true;
  RunningGuard guard;
  const TimeNs t_end = engine_.clock_ns() + ns;
  TimeNs t_trace = engine_.clock_ns();
  Cycles spun = 0;
  bool woken = false;
  for (;;) {
    const TimeNs now = engine_.clock_ns();
    // While others wait for this CPU, the loop stops at each tick for the scheduler to decide.
    TimeNs limit = t_end;
    bool at_tick = false;
    if (scheduled_ && engine_.scheduler().has_queued(cpu_)) {
      const TimeNs tick = engine_.scheduler().next_tick_ns(now);
      if (tick < limit) limit = tick, at_tick = true;
    }
    bool at_resched = false;  // a remote resched's IPI lands first
    if (resched_at_ < limit) limit = resched_at_, at_tick = false, at_resched = true;
    bool timed_out = false;
    if (std::isfinite(limit))
      timed_out = sg_acquire_timeout(std::max(0.0, limit - now));
    else
      sg_acquire(impl_->released);
    const TimeNs irq = end_busy_wait_interrupts();
    if (timed_out && impl_->released) sg_acquire(true), timed_out = false;
    spun += engine_.ns_to_cycles(engine_.clock_ns() - now - irq);
    if (impl_->unparked) {
      woken = true;
      break;
    }
    if (!timed_out) {
      impl_->released = false;  // the scheduler asked for a re-check: wait again
    } else if (at_tick) {
      if (engine_.scheduler().tick(*this, engine_.clock_ns())) need_resched_ = true;
    } else if (!at_resched) {
      break;  // the loop's own timeout (a landing IPI is folded below)
    }
    // Each pass of a polling loop is a preemption point (cond_resched, or a need_resched() check).
    fold_resched(engine_.clock_ns());
    if (need_resched_ && preemptible_at_point()) {
      impl_->waiting = Impl::Wait::None;
      state_ = State::Running;
      trace_wait(label_name(symbol).c_str(), t_trace);
      yield_cpu();
      if (permit_) {  // woken while it waited for the CPU
        permit_ = false;
        woken = true;
        t_trace = engine_.clock_ns();
        break;
      }
      if (engine_.clock_ns() >= t_end) {
        t_trace = engine_.clock_ns();
        break;
      }
      state_ = State::Spinning;
      impl_->waiting = Impl::Wait::Park;
      impl_->released = false;
      impl_->unparked = false;
      t_trace = engine_.clock_ns();
    }
  }
  impl_->waiting = Impl::Wait::None;
  state_ = State::Running;
  trace_wait(label_name(symbol).c_str(), t_trace);
  account(spun, symbol);
  return woken;
}

// A busy wait does not run while an interrupt handler runs on its CPU (CpuScheduler::steal): that
// time is the handler's. Ended meanwhile (woken from another CPU, its timeout), it resumes when
// the handler returns. The handler time that fell in the wait, to leave out of its cycles.
TimeNs Thread::end_busy_wait_interrupts() {
  while (irq_until_ns_ > engine_.clock_ns()) sg_sleep_ns(irq_until_ns_ - engine_.clock_ns());
  return std::exchange(busy_wait_irq_ns_, 0);
}

Cycles Thread::await_grant(bool spin, Label symbol) {
  flush();
  if (granted_) {
    granted_ = false;
    return 0;
  }
  engine_.count_event(Engine::EventKind::LockWait);
  state_ = spin ? State::Spinning : State::Parked;
  impl_->waiting = Impl::Wait::Grant;
  impl_->released = false;
  const TimeNs t0 = engine_.clock_ns();
  if (!spin) {  // a mutex waiter sleeps, and is woken by the hand-off like any wake-up
    wait_off_cpu(std::numeric_limits<double>::infinity(), "mutex wait (sleeping)");
    return 0;
  }
  return spin_for_grant(t0, symbol);
}

Cycles Thread::await_grant_ahead(Label symbol) {
  // The pending work ends at the arrival; from there the thread spins until the hand-off. Its
  // cycles were counted when charged: they leave the pending work, the wait covers their time.
  const TimeNs now = engine_.clock_ns();
  const TimeNs t_arrive = local_now_ns();
  engine_.step(*this, t_arrive);
  const Cycles work = std::exchange(pending_, 0);
  engine_.count_event(Engine::EventKind::LockWait);
  state_ = State::Spinning;
  impl_->waiting = Impl::Wait::Grant;
  impl_->released = false;
  const Cycles spun = spin_for_grant(t_arrive, symbol);
  if (lock_retry_) {  // sent back before its arrival: the rest of its work is pending again
    const TimeNs left = std::max(0.0, arrival_ns_ - engine_.clock_ns());  // later by any interrupt
    pending_ = std::min(work, engine_.ns_to_cycles(left));
    stolen_ns_ += std::max(0.0, left - engine_.cycles_to_ns(pending_));
    return 0;
  }
  trace_compute(now, t_arrive);
  return spun;
}

void Thread::retry_lock() {
  lock_retry_ = true;
  release_grant();
}

bool Thread::leave_lock_queue_ahead() {
  // Queued ahead of its arrival, its work up to the lock is what a preemption asked now would
  // cut (as cut_work would): it leaves the queue and goes back to that work.
  const TimeNs now = engine_.clock_ns();
  if (state_ != State::Spinning || !waiting_lock_ || arrival_ns_ <= now ||
      impl_->waiting != Impl::Wait::Grant || impl_->released)
    return false;
  if (spin_held_ > 0 || no_preempt_until_ > now ||
      (kernel_depth_ > 0 && engine_.scheduler().spec().preempt != PreemptModel::Full))
    return false;
  waiting_lock_->withdraw(*this);
  retry_lock();
  return true;
}

// A spinning waiter keeps its CPU (preemption is off) and burns it from t0 until the hand-off.
Cycles Thread::spin_for_grant(TimeNs t0, Label symbol) {
  RunningGuard guard;
  // An interrupt handler that waits for its own CPU's thread held interrupts off with it
  // (spin_lock_irqsave): it had not started, and the wait is no CPU time.
  const Thread* owner = waiting_lock_ ? waiting_lock_->owner() : nullptr;
  const bool deferred = opts_.interrupt && owner && owner->cpu() == cpu_ && owner->sched().on_cpu;
  sg_acquire(impl_->released);
  if (lock_retry_) {  // sent back before it arrived: no spin (await_grant_ahead)
    impl_->waiting = Impl::Wait::None;
    state_ = State::Running;
    return 0;
  }
  const TimeNs irq = end_busy_wait_interrupts();
  impl_->waiting = Impl::Wait::None;
  state_ = State::Running;
  if (arrival_ns_ > t0) t0 = arrival_ns_;  // queued ahead, an interrupt delayed its arrival
  trace_wait("native_queued_spin_lock_slowpath", t0);
  const TimeNs spun_ns = deferred ? 0 : engine_.clock_ns() - t0 - irq;
  // A handler spinning for another CPU's owner takes that time from its CPU's thread.
  if (opts_.interrupt && spun_ns > 0 && cpu_ < engine_.machine().cores)
    engine_.scheduler().steal(cpu_, t0, spun_ns);
  const Cycles spun = engine_.ns_to_cycles(spun_ns);
  account(spun, symbol);
  return spun;
}

namespace {
void flush_caller() {
  // The waker's own pending work happens before the wake becomes visible.
  if (g_running) g_running->flush();
}
int caller_cpu() {
  return g_running && g_running->scheduled() ? g_running->cpu() : -1;
}
Thread* caller_thread() {
  return g_running && g_running->scheduled() ? g_running : nullptr;
}
}  // namespace

void Thread::unpark(Wake how) {
  flush_caller();
  wake_not_before_ns_ = 0;
  waker_cpu_ = caller_cpu();
  waker_ = caller_thread();
  waker_how_ = how;
  release_park();
}

void Thread::unpark_at(TimeNs t_ns, Wake how) {
  wake_not_before_ns_ = t_ns;
  waker_cpu_ = caller_cpu();
  waker_ = caller_thread();
  waker_how_ = how;
  // A parked thread released early resumes now and sleeps on until t_ns (wait_off_cpu) before it
  // acts: its horizon stays at now until that sleep sets it (raising it to t_ns here was wrong
  // when the release met the end of a timed wait at the same date).
  release_park();
}

void Thread::release_park() {
  RunningGuard guard;  // releasing the semaphore lets other actors run
  if (impl_->waiting == Impl::Wait::Park) {
    impl_->unparked = true;
    if (!impl_->released) {
      impl_->released = true;
      if (impl_->forever) engine_.thread_became_active(true);
      sg_release();
    }
  } else {
    permit_ = true;
  }
}

void Thread::grant() {
  flush_caller();
  waker_cpu_ = caller_cpu();
  waker_ = caller_thread();
  waker_how_ = Wake::Normal;
  wake_not_before_ns_ = 0;
  if (!release_grant()) granted_ = true;
}

bool Thread::release_grant() {
  if (impl_->waiting != Impl::Wait::Grant) return false;
  if (impl_->released) return true;
  RunningGuard guard;  // releasing the semaphore lets other actors run
  impl_->released = true;
  if (impl_->forever) engine_.thread_became_active(true);
  sg_release();
  return true;
}

std::vector<Cycles> Thread::window_cycles_by_symbol() const {
  std::vector<Cycles> w = cycles_;
  for (std::size_t i = 0; i < base_.size() && i < w.size(); ++i) w[i] -= base_[i];
  return w;
}

void Thread::count(Label symbol) {
  if (counts_.size() <= symbol) counts_.resize(symbol + 1, 0);
  ++counts_[symbol];
}

Label Thread::woke_by_label(bool on_my_cpu) const {
  Label& l = woke_by_[on_my_cpu ? 1 : 0];
  if (l == kNoLabel) l = woke_by(comm_, on_my_cpu);
  return l;
}

Label Thread::preempted_by_label() const {
  if (preempted_by_ == kNoLabel) preempted_by_ = preempted_by(comm_);
  return preempted_by_;
}

std::vector<std::uint64_t> Thread::window_counts_by_symbol() const {
  std::vector<std::uint64_t> w = counts_;
  for (std::size_t i = 0; i < count_base_.size() && i < w.size(); ++i) w[i] -= count_base_[i];
  return w;
}

Cycles Thread::window_cycles() const {
  Cycles s = 0;
  for (Cycles c : window_cycles_by_symbol()) s += c;
  return s;
}

Syscall::Syscall() : t_(current()) {
  t_.enter_kernel();
}

Syscall::~Syscall() {
  // While an exception unwinds the thread (the run is ending), only the mode is restored.
  if (std::uncaught_exceptions() > 0) {
    --t_.kernel_depth_;
    return;
  }
  t_.exit_kernel();
}

Thread& current() {
  if (!g_running) throw std::logic_error("not inside a simulated thread");
  return *g_running;
}

Thread* current_if() {
  return g_running;
}

TimeNs now_ns() {
  current().flush();
  return Engine::get().clock_ns();
}

}  // namespace uringsim::sim
