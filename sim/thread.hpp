#pragma once
// A simulated kernel or user thread, run as a SimGrid actor. Accounted threads of the machine are
// scheduled (sim/cpu_sched.hpp): one at a time per CPU, on a CPU the scheduler chooses unless
// pinned; their CPU work runs only while they are the CPU's current thread.
//
// CPU work is *charged* lazily: charge() only accumulates cycles per symbol, and the accumulated
// work is executed as one activity at the thread's next interaction with the rest of the system
// (lock, unlock, wake, park, sleep, reading the clock). Nothing observable happens in between, so
// the timing is the same as executing every piece at once, with far fewer simulation events. An
// uncontended lock or unlock that no other thread can reach first is not such an interaction: it
// happens at the thread's local date without executing the work (sim/horizon.hpp).
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sim/cpu_sched.hpp"
#include "sim/label.hpp"
#include "sim/types.hpp"

namespace uringsim::sim {

class Engine;
class Lock;
class WaitQueue;

struct ThreadOptions {
  double weight = 1.0;  // CPU share when threads share a CPU (CFS weight / 1024; nice -15 = 29154/1024)
  bool daemon = false;  // daemons do not keep the simulation alive (timers, samplers)
  // false for simulator helpers and remote peers: they model no CPU of the machine, and CPU work
  // charged to them is dropped (takes no time, is not counted).
  bool accounted = true;
  // false: the scheduler may run it on any CPU (placement at wake-up, idle pull); the spawn CPU is
  // only where it starts.
  bool pinned = true;
  // A thread of the scenario that comes into being at this date (spawned before the run): it
  // starts then, as if it had been running, without a wake-up.
  TimeNs start_ns = 0;
  // An interrupt handler (hardirq) on this CPU rather than a thread: it runs at once, whatever
  // the CPU runs, and the time it takes is stolen from the CPU's current thread.
  bool interrupt = false;
  // A kernel thread (io-wq worker, SQPOLL, kworker): always in kernel mode, so under a
  // non-preemptive model only its cond_resched() and sleeps are preemption points.
  bool kernel = false;
};

class Thread {
 public:
  enum class State { Running, Parked, Sleeping, Spinning, Done };

  const std::string& name() const { return name_; }
  const std::string& comm() const { return comm_; }  // thread class, as `perf` shows the command
  int cpu() const { return cpu_; }                   // where it runs now (or last ran)
  int id() const { return id_; }
  double weight() const { return opts_.weight; }
  State state() const { return state_; }
  bool accounted() const { return opts_.accounted; }
  bool pinned() const { return opts_.pinned; }

  // --- only from this thread ---
  void charge(Cycles c, Label symbol);  // CPU work, executed lazily (see above)
  void flush();                         // execute pending work now
  // Before touching state that other threads read or write without a lock that could make this
  // one wait (a lockless list's head, a free lock): be at the local date, at once when nobody can
  // act first (may_run_ahead), else by executing the pending work.
  void reach_shared();
  void compute(Cycles c, Label symbol) {
    charge(c, symbol);
    flush();
  }
  // Blocking calls take the code path they are called from, for the checks (sleeping holding a
  // spinlock is a violation); without one the last symbol charged names the path.
  void sleep_ns(TimeNs ns, Label path = kNoLabel);  // off CPU for ns, after the pending work
  // When this thread's pending work will be done if it is not preempted meanwhile. For timestamps
  // nothing waits on; it executes nothing.
  TimeNs local_now_ns() const;
  void park(Label path = kNoLabel);  // block until unpark(); returns at once if a permit is pending
  bool park_for_ns(TimeNs ns, Label path = kNoLabel);  // false on timeout
  // schedule() called while still TASK_RUNNING (a loop that set no sleeping state, as io-wq's
  // worker after handled work): the CPU picks again. A thread due there runs first and this one
  // waits runnable (an involuntary switch); else it goes on, having paid the pick.
  void schedule_running(Label path = kNoLabel);
  // Busy-wait (a polling loop whose passes find nothing) until unpark() or for at most ns (infinity:
  // no timeout). The thread keeps its CPU busy meanwhile, accounted to `symbol`. False on timeout.
  bool spin_for_ns(TimeNs ns, Label symbol);
  // Wait for a lock hand-off (grant()). Wake-ups (unpark) that arrive meanwhile do not end this
  // wait; they leave a permit for the next park, as a wake-up of a running task does. With `spin`
  // the thread burns its CPU while waiting, accounted to `symbol`. Returns the cycles spun.
  Cycles await_grant(bool spin, Label symbol);
  // A spinning await_grant whose pending work, not executed yet, is the start of the wait: for a
  // waiter that queued at its local date (Lock::lock, when may_wait_ahead allows it).
  Cycles await_grant_ahead(Label symbol);

  // Kernel mode (a system call of a user thread; kernel threads are always in it). Under
  // PreemptModel None/Voluntary a preemption asked meanwhile waits for exit_kernel(),
  // cond_resched() or a sleep. See sim::Syscall for the scoped form.
  void enter_kernel() { ++kernel_depth_; }
  void exit_kernel();    // back to user space: a preemption point
  void cond_resched();   // an explicit preemption point of kernel code (no-op when preemption is full)
  void might_resched();  // might_sleep(): a preemption point under PreemptModel::Voluntary
  // need_resched() in kernel code: a preemption waits for this thread's next preemption point.
  bool resched_deferred() const;
  // need_resched() tested by kernel code before a cond_resched() it prepares for (dropping a lock
  // first): whether a preemption is due at this thread's local date, brought up to it first. False
  // under PreemptModel::Full, where a preemption never waits.
  bool need_resched();

  // --- from any thread ---
  void unpark(Wake how = Wake::Normal);  // wake a parked thread, or leave a permit
  // Wake-up that takes effect at `t_ns` (>= now): the woken thread resumes no earlier. Lets a
  // running waker wake others without first simulating its own pending work; that work then runs
  // without preemption (see promise_until).
  void unpark_at(TimeNs t_ns, Wake how = Wake::Normal);
  TimeNs wake_not_before_ns() const { return wake_not_before_ns_; }
  void grant();  // hand a lock to this thread (ends await_grant)

  // --- scheduler ---
  bool scheduled() const { return scheduled_; }  // an accounted thread of the machine
  SchedEntity& sched() { return se_; }
  const SchedEntity& sched() const { return se_; }
  // This thread's pending work up to `t_ns` is promised to others (a wake that takes effect
  // then): it runs without being preempted.
  void promise_until(TimeNs t_ns) {
    if (t_ns > no_preempt_until_) no_preempt_until_ = t_ns;
  }

  // CPU accounting: cycles by symbol, whole run and since the window start.
  const std::vector<Cycles>& cycles_by_symbol() const { return cycles_; }
  std::vector<Cycles> window_cycles_by_symbol() const;
  Cycles window_cycles() const;
  void mark_window_start() {
    base_ = cycles_;
    count_base_ = counts_;
    run_delay_base_ = se_.run_delay_ns;
  }
  // Time runnable but waiting for its CPU since the window start (schedstat's run_delay).
  TimeNs window_run_delay_ns() const { return se_.run_delay_ns - run_delay_base_; }
  // Occurrences by symbol (IPIs sent, task_work runs, context switches): for results that count
  // events per request rather than cycles. Whole run, and since the window start.
  void count(Label symbol);
  std::vector<std::uint64_t> window_counts_by_symbol() const;
  // The label a wake-up by this thread is counted under on its wakee (sim::woke_by), made once.
  Label woke_by_label(bool on_my_cpu) const;
  // The label a preemption for this thread is counted under on the one switched out
  // (sim::preempted_by), made once.
  Label preempted_by_label() const;

  // --- checks (sim/checks.hpp) ---
  struct HeldLock {
    const Lock* lock;
    Label site;  // where it was taken
  };
  const std::vector<HeldLock>& held_locks() const { return held_; }  // outermost first
  bool holds(const Lock& l) const;
  int spinlocks_held() const { return spin_held_; }
  // The request this thread works on (0: none); violations name it. See sim::RequestScope.
  std::uint64_t request() const { return request_; }
  void set_request(std::uint64_t id) { request_ = id; }
  Label last_symbol() const { return last_symbol_; }  // the code path last charged
  const Lock* waiting_lock() const { return waiting_lock_; }
  const WaitQueue* waiting_queue() const { return waiting_queue_; }

  ~Thread();

 private:
  friend class Engine;
  friend class CpuScheduler;
  friend class Lock;
  friend class WaitQueue;
  friend void switch_in_after_sleep();
  friend class Syscall;
  void off_cpu_ns(TimeNs ns);  // sleep_ns without the check: the scheduling delay after a wake-up
  void check_may_sleep(Label path, const char* what);
  Thread(Engine& e, int id, std::string name, std::string comm, int cpu, ThreadOptions opts);
  void account(Cycles c, Label symbol);
  void release_park();
  // Off CPU until released (unpark or grant, per the wait prepared) or the timeout (infinity:
  // none), then back on a CPU; traced as `what`. True if released.
  bool wait_off_cpu(TimeNs timeout, const char* what);
  void run_ns(TimeNs ns);             // execute CPU work, yielding to the scheduler at ticks
  bool preemptible() const;           // now, in its current mode
  bool preemptible_at_point() const;  // at a preemption point (the model aside)
  void preemption_point();            // yield here if a preemption is pending
  bool sync_resched();                // is one pending at the local date (brought up to it first)
  bool yield_cpu();                   // preempted: let the CPU pick again (true: it switched)
  void wait_dispatch();               // runnable: wait to be the CPU's current thread
  // Called by the scheduler: become the CPU's current thread after `delay` (waking the CPU).
  void dispatch(TimeNs delay, bool switched, Cycles migrate_cycles, Cycles remote_wakee_cycles = 0);
  void request_resched();  // the scheduler wants this running thread preempted
  // As request_resched, asked from another CPU: on x86 the running thread sees it only once the
  // reschedule IPI has landed (scheduler_ipi folds TIF_NEED_RESCHED into preempt_count, which is
  // what cond_resched() and the return from an interrupt test), at `at`.
  void request_resched_at(TimeNs at);
  // A preemption is asked (TIF_NEED_RESCHED set), landed or not: another needs no IPI.
  bool resched_pending() const { return need_resched_ || resched_at_ != kNoResched; }
  void rq_changed();  // threads wait for this one's CPU: a spin re-checks at ticks
  void set_cpu(int cpu) { cpu_ = cpu; }
  // SimGrid calls, each with this thread's horizon set for the others' lookahead (sim/horizon.hpp).
  void horizon_until(TimeNs t);
  void check_horizon() const;
  void sg_sleep_ns(TimeNs ns);
  void sg_acquire(bool token);  // token: a release is known to be waiting (returns at once)
  bool sg_acquire_timeout(TimeNs ns);
  void sg_release();  // called on the waiting thread, by whoever releases it
  // Its pending work ends before any other thread could act, and runs unpreempted: an uncontended
  // lock may be taken or released at its local date without executing that work first.
  bool may_run_ahead() const { return run_ahead_verdict() == SyncCause::None; }
  SyncCause run_ahead_verdict() const;  // None, or why it may not
  // Before a flush: why the interaction could not happen at the local date; the flush counts it.
  void note_sync_cause(SyncCause why);
  // Queued for a held spinlock at its local date: it may run its pending work as the start of its
  // busy wait, in one SimGrid wait, rather than execute it first (see Lock::lock). Others may act
  // before the arrival: the lock orders waiters by their arrival dates, and a release or a
  // preemption before the arrival sends the waiter back (retry_lock).
  bool may_wait_ahead() const;
  // Queued ahead, the lock was released before it arrived: it leaves the wait with its pending
  // work back, to take the lock at its arrival (Lock::lock).
  void retry_lock();
  // A preemption asked while queued ahead of its arrival: out of the queue, back to its work.
  bool leave_lock_queue_ahead();
  // Ends a wait for a lock hand-off (once); false if it is not in one.
  bool release_grant();
  Cycles spin_for_grant(TimeNs t0, Label symbol);
  // After a busy wait: out until the handlers on its CPU return; the time they took in the wait.
  TimeNs end_busy_wait_interrupts();
  // Start a park-like wait: flush, then either consume a pending wake-up (true: no wait) or count
  // the (timed or not) wait and mark the thread waiting in `waiting_state`.
  bool consume_permit_or_prepare(State waiting_state, bool timed);

  struct Impl;
  Engine& engine_;
  int id_;
  std::string name_, comm_;
  int cpu_;
  ThreadOptions opts_;
  State state_ = State::Running;
  Cycles pending_ = 0;
  SyncCause sync_cause_ = SyncCause::Always;  // of the next flush
  int sync_first_ = -1;                       // for OtherThreadFirst: the thread that could act first
  bool permit_ = false;
  bool granted_ = false;     // a grant() arrived before await_grant() started
  TimeNs arrival_ns_ = -1;   // queued for a lock: the date it arrives (or arrived) there
  bool lock_retry_ = false;  // queued ahead, released before it arrived (retry_lock)
  TimeNs wake_not_before_ns_ = 0;
  std::vector<std::pair<Label, Cycles>> pending_parts_;  // only while a trace is recorded
  void trace_compute(TimeNs t0, TimeNs t1, double fraction = 1.0);
  void trace_wait(const char* what, TimeNs t0);
  std::vector<Cycles> cycles_, base_;
  std::vector<std::uint64_t> counts_, count_base_;
  mutable Label woke_by_[2] = {kNoLabel, kNoLabel};  // woke_by_label's, on another CPU / on mine
  mutable Label preempted_by_ = kNoLabel;            // preempted_by_label's
  TimeNs run_delay_base_ = 0;
  std::vector<HeldLock> held_;
  int spin_held_ = 0;
  int kernel_depth_ = 0;
  std::uint64_t request_ = 0;
  Label last_symbol_ = kNoLabel;
  Lock* waiting_lock_ = nullptr;              // set while waiting for a lock hand-off
  Label waiting_site_ = kNoLabel;             // where it tries to take it
  const WaitQueue* waiting_queue_ = nullptr;  // set while sleeping on a wait queue
  std::unique_ptr<Impl> impl_;
  // scheduler state
  bool scheduled_ = false;
  SchedEntity se_;
  // A remote request_resched_at not yet seen (its IPI in flight): never, or when it lands.
  static constexpr TimeNs kNoResched = std::numeric_limits<TimeNs>::infinity();
  TimeNs resched_at_ = kNoResched;
  bool need_resched_ = false;
  // The remote request's IPI has landed by `now`: it is now need_resched_.
  void fold_resched(TimeNs now) {
    if (now >= resched_at_) need_resched_ = true, resched_at_ = kNoResched;
  }
  void clear_resched() { need_resched_ = false, resched_at_ = kNoResched; }
  // The resched IPI stops the work it is waiting out (run_ns re-plans from here); false when it
  // is not in such a wait or may not be preempted there.
  bool cut_work();
  bool dispatched_ = false;
  TimeNs dispatch_delay_ = 0;
  bool dispatch_switched_ = false;
  Cycles dispatch_migrate_ = 0;
  Cycles dispatch_remote_wakee_ = 0;
  TimeNs no_preempt_until_ = 0;
  int waker_cpu_ = -1;
  Thread* waker_ = nullptr;  // the machine's thread that woke it last, if any
  Wake waker_how_ = Wake::Normal;
  TimeNs stolen_ns_ = 0;         // interrupt handlers ran on our CPU meanwhile: our work ends that much later
  TimeNs busy_wait_irq_ns_ = 0;  // in a busy wait: the handlers that interrupted it took this long,
  TimeNs irq_until_ns_ = 0;      // and return then
  TimeNs last_tick_ns_ = 0;      // the last tick the scheduler looked at while it ran
};

// The thread running now (the caller). Throws std::logic_error outside a simulated thread.
Thread& current();
Thread* current_if();  // nullptr outside a simulated thread (set-up code before the run)

// A system call of the current thread: kernel mode for the scope's lifetime; leaving it is a
// preemption point (the return to user space).
class Syscall {
 public:
  Syscall();
  ~Syscall();
  Syscall(const Syscall&) = delete;
  Syscall& operator=(const Syscall&) = delete;

 private:
  Thread& t_;
};
// Current simulated time in ns, after executing the caller's pending work.
TimeNs now_ns();

}  // namespace uringsim::sim
