#include "sim/thread.hpp"

#include <simgrid/s4u.hpp>

#include <cmath>
#include <stdexcept>

#include "sim/checks.hpp"
#include "sim/engine.hpp"
#include "sim/lock.hpp"
#include "sim/sg_impl.hpp"

namespace uringsim::sim {

Thread* g_running = nullptr;

namespace {
// A spinning waiter runs an "endless" execution that is cancelled when the lock is handed over.
constexpr double kSpinForeverCycles = 1e15;
}  // namespace

Thread::Thread(Engine& e, int id, std::string name, std::string comm, int cpu, ThreadOptions opts)
    : engine_(e),
      id_(id),
      name_(std::move(name)),
      comm_(std::move(comm)),
      cpu_(cpu),
      opts_(opts),
      impl_(std::make_unique<Impl>()) {}

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

// The pending work just simulated over [t0, t1], as one slice per code path in proportion to
// its cycles (exact on a CPU of its own; a fair share of the interval when the CPU was shared).
void Thread::trace_compute(TimeNs t0, TimeNs t1) {
  TraceSink* tr = engine_.trace();
  if (!tr || pending_parts_.empty()) return;
  if (tr->in_window(t0, t1)) {
    double total = 0;
    for (const auto& [sym, c] : pending_parts_) total += c;
    TimeNs t = t0;
    for (const auto& [sym, c] : pending_parts_) {
      const TimeNs d = total > 0 ? (t1 - t0) * c / total : 0;
      tr->slice(id_, label_name(sym), "cpu", t, t + d);
      t += d;
    }
  }
  pending_parts_.clear();
}

void Thread::trace_wait(const char* what, TimeNs t0) {
  TraceSink* tr = engine_.trace();
  if (!tr) return;
  const TimeNs t1 = engine_.clock_ns();
  if (t1 > t0 && tr->in_window(t0, t1)) tr->slice(id_, what, "sched", t0, t1);
}

void Thread::flush() {
  engine_.step(*this);
  if (pending_ <= 0) return;
  RunningGuard guard;
  const double amount = pending_;
  pending_ = 0;
  const TimeNs t0 = engine_.clock_ns();
  engine_.count_event(Engine::EventKind::Compute);
  if (engine_.cpu_exclusive(cpu_))
    simgrid::s4u::this_actor::sleep_for(engine_.cycles_to_ns(amount) * 1e-9);  // alone on its CPU
  else if (opts_.weight == 1.0)
    simgrid::s4u::this_actor::execute(amount);
  else
    simgrid::s4u::this_actor::execute(amount, opts_.weight);
  trace_compute(t0, engine_.clock_ns());
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
  off_cpu_ns(ns);
}

void Thread::off_cpu_ns(TimeNs ns) {
  TimeNs work_ns = 0;
  if (pending_ > 0 && engine_.cpu_exclusive(cpu_)) {
    // Alone on its CPU the work is a delay too: one SimGrid sleep covers both.
    work_ns = engine_.cycles_to_ns(pending_);
    pending_ = 0;
  }
  flush();
  if (ns + work_ns <= 0) return;
  engine_.count_event(Engine::EventKind::Sleep);
  RunningGuard guard;
  state_ = State::Sleeping;
  const TimeNs t0 = engine_.clock_ns();
  simgrid::s4u::this_actor::sleep_for((ns + work_ns) * 1e-9);
  state_ = State::Running;
  if (engine_.trace()) {
    trace_compute(t0, t0 + work_ns);
    trace_wait("sleep", t0 + work_ns);
  }
}

bool Thread::consume_permit_or_prepare(State waiting_state, bool timed) {
  flush();
  if (permit_) {  // a wake-up came first: take it instead of waiting
    permit_ = false;
    return true;
  }
  engine_.count_event(timed ? Engine::EventKind::ParkTimeout : Engine::EventKind::Park);
  state_ = waiting_state;
  impl_->waiting = Impl::Wait::Park;
  impl_->released = false;
  return false;
}

void Thread::park(Label path) {
  check_may_sleep(path, "parks");
  if (consume_permit_or_prepare(State::Parked, false)) return;
  const TimeNs t0 = engine_.clock_ns();
  wait_released(true);
  trace_wait("sleeping", t0);
}

void Thread::wait_released(bool forever) {
  RunningGuard guard;
  if (forever) {  // no timeout and no spin: only another thread can end this wait
    impl_->forever = true;
    engine_.thread_became_blocked(true);
  }
  impl_->sem->acquire();
  impl_->forever = false;
  impl_->waiting = Impl::Wait::None;
  state_ = State::Running;
}

bool Thread::park_for_ns(TimeNs ns, Label path) {
  check_may_sleep(path, "parks");
  if (consume_permit_or_prepare(State::Parked, true)) return true;
  RunningGuard guard;
  const TimeNs t0 = engine_.clock_ns();
  const bool timed_out = impl_->sem->acquire_timeout(ns * 1e-9);
  trace_wait("sleeping", t0);
  // A release at the very date of the timeout counts as a wake; consume its token.
  if (timed_out && impl_->released) impl_->sem->acquire();
  impl_->waiting = Impl::Wait::None;
  state_ = State::Running;
  return !timed_out || impl_->released;
}

bool Thread::spin_for_ns(TimeNs ns, Label symbol) {
  if (consume_permit_or_prepare(State::Spinning, true)) return true;
  RunningGuard guard;
  spin_start();
  const TimeNs t0 = engine_.clock_ns();
  bool timed_out = false;
  if (std::isfinite(ns))
    timed_out = impl_->sem->acquire_timeout(ns * 1e-9);
  else
    impl_->sem->acquire();
  if (timed_out && impl_->released) impl_->sem->acquire();  // released at the timeout's date: a wake
  impl_->waiting = Impl::Wait::None;
  state_ = State::Running;
  if (engine_.trace()) trace_wait(label_name(symbol).c_str(), t0);
  account(spin_stop(), symbol);
  return !timed_out || impl_->released;
}

void Thread::spin_start() {
  // Alone on its CPU a spinner takes nothing from anyone, and its cycles are the wait's length;
  // on a shared CPU an endless execution takes the spinner's share until it is cancelled.
  impl_->spin_t0 = engine_.clock_ns();
  impl_->spin_exec = nullptr;
  if (engine_.cpu_exclusive(cpu_)) return;
  RunningGuard guard;
  impl_->spin_exec = simgrid::s4u::this_actor::exec_init(kSpinForeverCycles);
  if (opts_.weight != 1.0) impl_->spin_exec->set_priority(opts_.weight);
  impl_->spin_exec->start();
}

Cycles Thread::spin_stop() {
  if (!impl_->spin_exec) return engine_.ns_to_cycles(engine_.clock_ns() - impl_->spin_t0);
  RunningGuard guard;
  const Cycles spun = kSpinForeverCycles - impl_->spin_exec->get_remaining();
  impl_->spin_exec->cancel();
  impl_->spin_exec = nullptr;
  return spun;
}

Cycles Thread::await_grant(bool spin, Label symbol) {
  flush();
  if (granted_) {
    granted_ = false;
    return 0;
  }
  engine_.count_event(Engine::EventKind::LockWait);
  // The wait starts before the spin execution does: starting it yields to other actors, and a
  // hand-off arriving then must release the semaphore.
  state_ = spin ? State::Spinning : State::Parked;
  impl_->waiting = Impl::Wait::Grant;
  impl_->released = false;
  const TimeNs t0 = engine_.clock_ns();
  if (spin) spin_start();
  wait_released(!spin);
  trace_wait(spin ? "native_queued_spin_lock_slowpath" : "mutex wait (sleeping)", t0);
  if (!spin) return 0;
  const Cycles spun = spin_stop();
  account(spun, symbol);
  return spun;
}

namespace {
void flush_caller() {
  // The waker's own pending work happens before the wake becomes visible.
  if (g_running) g_running->flush();
}
}  // namespace

void Thread::unpark() {
  flush_caller();
  wake_not_before_ns_ = 0;
  release_park();
}

void Thread::unpark_at(TimeNs t_ns) {
  wake_not_before_ns_ = t_ns;
  release_park();
}

void Thread::release_park() {
  RunningGuard guard;  // releasing the semaphore lets other actors run
  if (impl_->waiting == Impl::Wait::Park) {
    if (!impl_->released) {
      impl_->released = true;
      if (impl_->forever) engine_.thread_became_active(true);
      impl_->sem->release();
    }
  } else {
    permit_ = true;
  }
}

void Thread::grant() {
  flush_caller();
  RunningGuard guard;  // releasing the semaphore lets other actors run
  if (impl_->waiting == Impl::Wait::Grant) {
    impl_->released = true;
    if (impl_->forever) engine_.thread_became_active(true);
    impl_->sem->release();
  } else {
    granted_ = true;
  }
}

std::vector<Cycles> Thread::window_cycles_by_symbol() const {
  std::vector<Cycles> w = cycles_;
  for (std::size_t i = 0; i < base_.size() && i < w.size(); ++i) w[i] -= base_[i];
  return w;
}

Cycles Thread::window_cycles() const {
  Cycles s = 0;
  for (Cycles c : window_cycles_by_symbol()) s += c;
  return s;
}

Thread& current() {
  if (!g_running) throw std::logic_error("not inside a simulated thread");
  return *g_running;
}

TimeNs now_ns() {
  current().flush();
  return Engine::get().clock_ns();
}

}  // namespace uringsim::sim
