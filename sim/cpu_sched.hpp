#pragma once
// The CPU scheduler: which thread runs on each CPU, one at a time, as Linux's fair class decides
// (kernel/sched/fair.c). Per-CPU run queues; a policy (CFS before 6.6, EEVDF from 6.6) orders them,
// decides wake-up and tick preemption, and places woken threads; unpinned threads are placed on
// idle CPUs when they wake (select_task_rq_fair), pulled by CPUs that go idle (newidle balance)
// unless cache-hot, and moved by an idle CPU that a busy CPU's tick kicks. Waking an idle CPU
// costs the wake-up latency, plus the idle-exit latency when it had halted. See
// docs/models/scheduler.md.
//
// This is decision logic only: it runs in the context of whichever simulated thread acts, at that
// thread's current date, and tells threads to run through Thread::dispatch().
#include <memory>
#include <string>
#include <vector>

#include "sim/label.hpp"
#include "sim/types.hpp"

namespace uringsim::sim {

class Thread;

// Per-thread state the scheduler keeps (struct sched_entity, reduced).
struct SchedEntity {
  double weight = 1024;   // load weight (nice 0 = 1024)
  double vruntime = 0;    // virtual runtime, ns scaled by 1024 / weight
  double deadline = 0;    // EEVDF virtual deadline
  double vlag = 0;        // EEVDF lag saved at dequeue, restored at the next enqueue
  TimeNs exec_start = 0;  // when it last started running, by its run queue's clock
  // set_next_entity after a schedule() that skipped its clock update: exec_start is that stale
  // clock, not the switch's date (-1: none pending).
  TimeNs exec_start_from = -1;
  TimeNs slice_exec = 0;  // runtime since it was last picked (CFS tick preemption)
  bool protect = false;   // EEVDF RUN_TO_PARITY: picked, deadline not yet renewed
  bool on_cpu = false;    // the CPU's current thread (running or being switched in)
  bool queued = false;    // waiting in a run queue
  bool delayed = false;   // EEVDF DELAY_DEQUEUE: asleep, but kept in its queue until its lag is paid
  bool pinned = true;
  int last_cpu = -1;
  // p->recent_used_cpu: the previous CPU at the last wake-up that found neither its target nor its
  // previous CPU idle (select_idle_sibling); the CPU it started on before any.
  int recent_used_cpu = -1;
  // record_wakee: how often this thread, waking an unpinned one, woke another than the last
  // (halved at most once a second), for wake_wide.
  unsigned wakee_flips = 0;
  const Thread* last_wakee = nullptr;
  TimeNs wakee_flip_decay_ts = 0;
  // schedstat's run_delay: time spent runnable but not running (from the wake-up or preemption
  // that queued it to its switch-in, idle exit included), as /proc/PID/task/TID/schedstat counts it
  TimeNs runnable_since = -1;
  TimeNs run_delay_ns = 0;
  // sum_exec_runtime as the kernel accounts it (/proc, top), in the measurement window: charged
  // from acct_start, the rq clock when it was picked or last updated. It can differ from the time
  // the thread ran: see CpuScheduler::schedule_clock.
  TimeNs acct_start = 0;
  TimeNs acct_window_ns = 0;
  // PELT's load_avg, reduced: a geometric average of the time it was runnable (running or
  // waiting), at the date of its last update; its load is weight times it. `runnable` is its state
  // since then.
  double runnable_avg = 0;
  TimeNs runnable_at = 0;
  bool runnable = false;
};

// Ordering of one CPU's run queue: the fair class's algorithm of an era.
class FairPolicy {
 public:
  struct Rq;  // one CPU's queue, as the policy sees it
  virtual ~FairPolicy() = default;
  virtual const char* name() const = 0;
  // The running thread ran `delta` ns more.
  virtual void update_curr(Rq& rq, Thread& curr, TimeNs delta) = 0;
  // `t` joins the queue after a wake-up (initial: a new thread).
  virtual void place(Rq& rq, Thread& t, bool initial) = 0;
  // `t` leaves the queue to sleep (or to migrate).
  virtual void dequeue(Rq& rq, Thread& t) = 0;
  // `t` goes to sleep: true if it stays in the queue as delayed (DELAY_DEQUEUE) rather than leaving.
  virtual bool delay_dequeue(Rq&, Thread&) { return false; }
  // A delayed `t` leaves for good (picked, or its CPU goes idle): DELAY_ZERO, no positive lag kept.
  virtual void finish_delayed(Rq&, Thread&) {}
  // A delayed `t` is woken where it is (requeue_delayed_entity).
  virtual void requeue_delayed(Rq&, Thread&) {}
  // Who runs next among the queued threads and `curr` (nullptr if curr is not runnable).
  virtual Thread* pick(Rq& rq, Thread* curr) = 0;
  virtual void set_next(Rq& rq, Thread& t) = 0;  // t was picked
  virtual bool wakeup_preempt(Rq& rq, Thread& curr, Thread& wakee) = 0;
  virtual bool tick_preempt(Rq& rq, Thread& curr) = 0;  // at a tick, with others queued
};

struct FairPolicy::Rq {
  std::vector<Thread*> queued;   // runnable, not running, in arrival order
  std::vector<Thread*> delayed;  // asleep but still counted (EEVDF DELAY_DEQUEUE)
  Thread* curr = nullptr;        // running (or being switched in)
  double min_vruntime = 0;       // CFS
  double avg_vruntime = 0;       // EEVDF: last computed V (used when the queue is empty)
  TimeNs clock = 0;              // rq->clock_task at its last update (update_rq_clock)
  bool clock_skip = false;       // RQCF_REQ_SKIP: the next schedule() keeps the clock as it is
  bool clock_skipped = false;    // the schedule() under way skipped it: its next starts from `clock`
};

// How a wake-up's preemption reaches the CPU it lands on: at once (from that CPU, by its timer,
// from outside the machine), or by a reschedule IPI from another CPU that lands `delay` later and
// whose handler runs before the switch.
struct Resched {
  bool ipi = false;
  TimeNs delay = 0;
};

class CpuScheduler {
 public:
  // ghz: the CPUs' clock, for the time a reschedule IPI's handler takes (ipi_receive_cycles).
  CpuScheduler(int cpus, const SchedSpec& spec, const PrimitiveCosts& costs, double ghz);
  ~CpuScheduler();

  const SchedSpec& spec() const { return spec_; }
  const char* policy_name() const;
  TimeNs tick_ns() const { return tick_ns_; }
  TimeNs next_tick_ns(TimeNs now) const;  // the first tick strictly after `now`
  TimeNs base_slice_ns() const { return slice_ns_; }

  // A new thread wants its first CPU (wake_up_new_task). at_setup: it exists when the scenario
  // starts (spawned before the run), so it starts without a wake-up.
  void start(Thread& t, TimeNs now, bool at_setup);
  // The running thread `t` goes to sleep (or exits: it leaves its queue for good): its CPU runs the
  // next thread or goes idle.
  void block(Thread& t, TimeNs now, bool exits = false);
  // `t` became runnable: woken by `waker` (a thread of the machine, else null) running on waker_cpu
  // (-1: from outside the machine), or by its own timer (by_timer: the timer fires on its CPU, so
  // no wake-up IPI).
  void wake(Thread& t, Thread* waker, int waker_cpu, TimeNs now, bool by_timer = false,
            Wake how = Wake::Normal);
  // The running thread `t` is preempted: back into its queue; the CPU picks again.
  bool yield(Thread& t, TimeNs now);  // true: another thread runs now, `t` waits runnable
  // A tick while `t` runs: true if it should be preempted now.
  bool tick(Thread& t, TimeNs now);
  // `t` starts running after its dispatch (and its switch-in delay).
  void started_running(Thread& t, TimeNs now);
  // An interrupt handler runs `ns` on `cpu` from `now`: its current thread's work ends that much
  // later; a busy wait (spin) does not run meanwhile. Either way that time is the handler's CPU
  // time, not the thread's (as with IRQ_TIME_ACCOUNTING).
  void steal(int cpu, TimeNs now, TimeNs ns);
  // An interrupt taken on behalf of the CPU's current thread (the IPI that kicks it): as steal(),
  // but the time is that thread's CPU time, accounted to `symbol`.
  void interrupt_current(int cpu, TimeNs now, TimeNs ns, Cycles cycles, Label symbol);
  // The reschedule IPI sent to `cpu` is pending until `until` (its handler has run): another one
  // sent meanwhile merges into it (one vector, one bit in the local APIC's IRR).
  void ipi_pending(int cpu, TimeNs until);
  // A reschedule IPI lands on `cpu` at `at`: its handler (ipi_receive_cycles) runs on the current
  // thread's time, and the IPI is pending until it is done. Returns the handler's duration.
  TimeNs land_reschedule_ipi(int cpu, TimeNs at);
  bool ipi_pending_at(int cpu, TimeNs now) const {
    return now < ipi_pending_until_[static_cast<std::size_t>(cpu)];
  }
  bool has_queued(int cpu) const { return !rqs_[static_cast<std::size_t>(cpu)].queued.empty(); }
  // Anything a pick on `cpu` could choose or drop besides its current thread: queued or delayed.
  bool has_others(int cpu) const {
    const auto& q = rqs_[static_cast<std::size_t>(cpu)];
    return !q.queued.empty() || !q.delayed.empty();
  }
  bool idle(int cpu) const;
  // Where a wake-up by `waker` would put `t` now (select_task_rq_fair), for the waker's cost.
  int wake_target(const Thread& t, const Thread& waker, Wake how, TimeNs now) const;
  // Whether waking `t` onto another CPU now sends that CPU an IPI (ttwu_queue_wakelist,
  // resched_curr): yes if it is idle, or busy and `t` would preempt its current thread; a busy
  // CPU that keeps its thread needs none.
  bool wake_needs_ipi(Thread& t, int cpu, TimeNs now);

  // The measurement window, for the CPU time each thread is accounted in it (accounted_ns).
  void set_window(TimeNs start_ns, TimeNs end_ns);
  // `t`'s sum_exec_runtime in the window, as /proc/PID/task/TID/schedstat reads it at its end.
  TimeNs accounted_ns(const Thread& t) const;

  std::string dump() const;  // every CPU's current thread and queue, for debugging
  // Counters for run_info and tests.
  std::uint64_t context_switches() const { return switches_; }
  std::uint64_t migrations() const { return migrations_; }
  std::uint64_t preemptions() const { return preemptions_; }
  std::uint64_t idle_wakeups() const { return idle_wakeups_; }

 private:
  FairPolicy::Rq& rq(int cpu) { return rqs_[static_cast<std::size_t>(cpu)]; }
  void account_curr(FairPolicy::Rq& q, TimeNs now);
  void update_clock(FairPolicy::Rq& q, TimeNs now);
  void update_vruntime(FairPolicy::Rq& q, TimeNs now);
  void schedule_clock(FairPolicy::Rq& q, TimeNs now);
  void charge_accounted(Thread& t, TimeNs from, TimeNs to);
  // `affine`: the waker's CPU may be chosen (want_affine). `reached_recent`, if given, is set when
  // the choice got as far as recent_used_cpu (the wake-up then records the previous CPU there).
  int select_cpu(const Thread& t, const Thread* waker, int waker_cpu, bool affine, int busy, Wake how,
                 TimeNs now, bool* reached_recent = nullptr) const;
  bool affine_by_load(const Thread& t, const Thread* waker, int this_cpu, int prev, bool sync,
                      TimeNs now) const;
  static void record_wakee(Thread& waker, const Thread& t, TimeNs now);
  static void count_wakeup(Thread& t, const Thread* waker, int waker_cpu, int cpu, bool by_timer);
  bool wake_wide(unsigned waker_flips, const Thread& t) const;
  // woken_remotely: a thread on another CPU woke `t` (not a timer, a device or a balance's move).
  void enqueue(Thread& t, int cpu, bool initial, TimeNs now, bool ipi, bool at_setup = false,
               bool waker_just_left = false, Resched resched = {}, bool woken_remotely = false);
  void switch_next(int cpu, Thread* prev, TimeNs now);
  void dispatch(int cpu, Thread& next, Thread* prev, TimeNs now, Cycles migrate_cycles);
  bool movable(const Thread& t, TimeNs now) const;
  void migrated(Thread& t);
  Thread* pull_for(int cpu, TimeNs now);
  void idle_balance_kick(int busy_cpu, TimeNs now);
  Thread& detach(int cpu, std::vector<Thread*>::iterator it);
  Thread* pick_next(FairPolicy::Rq& q);  // pick_next_entity: delayed threads picked leave
  void drop_delayed(FairPolicy::Rq& q);  // the CPU goes idle: its delayed threads leave
  void leave_delayed(FairPolicy::Rq& q, Thread& t);
  void check_preempt(FairPolicy::Rq& q, Thread& t, TimeNs now, Resched resched);
  void requeue_delayed(Thread& t, TimeNs now, Resched resched);
  void requeue_then_update(FairPolicy::Rq& q, Thread& t, TimeNs now);  // requeue_delayed_entity's order
  Resched resched_of(int waker_cpu, int cpu, bool by_timer) const;
  bool packs_on_waker(const Thread& t, int waker_cpu, TimeNs now) const;
  void util_update(int cpu, TimeNs now);
  double util_at(int cpu, TimeNs now) const;  // its util_avg carried to now, nothing updated
  void periodic_balance(int cpu, TimeNs now, bool busy);
  // PELT load (cfs_rq->avg.load_avg): each CPU's is the sum of the loads of the threads attached
  // to it, runnable or not (a sleeping thread's decays there until it wakes on another CPU).
  double pelt_toward(double avg, double level, TimeNs dt) const;
  void load_decay(int cpu, TimeNs now);
  void thread_load_decay(SchedEntity& se, TimeNs now) const;
  void set_runnable(Thread& t, bool runnable, TimeNs now);
  void move_load(Thread& t, int to, TimeNs now);  // t's load leaves its CPU for `to`
  double cpu_load(int cpu, TimeNs now);
  double load_at(int cpu, TimeNs now) const;                        // cpu_load, nothing updated
  double runnable_avg_at(const SchedEntity& se, TimeNs now) const;  // likewise, a thread's
  void busy_balance(int cpu, TimeNs now);

  SchedSpec spec_;
  PrimitiveCosts costs_;
  TimeNs ipi_receive_ns_;  // a reschedule IPI's handler, on the CPU it lands on
  std::unique_ptr<FairPolicy> policy_;
  std::vector<FairPolicy::Rq> rqs_;
  std::vector<TimeNs> idle_since_;
  std::vector<TimeNs> ipi_pending_until_;
  TimeNs tick_ns_;
  TimeNs slice_ns_;  // base slice after the kernel's scaling by CPU count
  TimeNs window_start_ = 0, window_end_ = 0;
  std::uint64_t switches_ = 0, migrations_ = 0, preemptions_ = 0, idle_wakeups_ = 0;
  // sd->nr_balance_failed of the one domain: idle balances in a row that found only hot threads
  int balance_failed_ = 0;
  // Each CPU's util_avg (PELT), reduced to a geometric average of the time it had a thread on it,
  // at the date of its last update; with the date periodic balancing last ran there.
  struct Util {
    double avg = 0;
    TimeNs at = 0;
  };
  std::vector<Util> util_;
  struct Load {
    double avg = 0;              // sum over its threads of weight x runnable_avg
    double runnable_weight = 0;  // the weights of those runnable now
    TimeNs at = 0;
  };
  std::vector<Load> load_;
  std::vector<TimeNs> last_balance_;
  int nr_idle_scan_;  // sd_llc_shared->nr_idle_scan: how many CPUs a wake-up may scan for an idle one
};

// The weight of a nice value (kernel/sched/core.c sched_prio_to_weight), nice 0 = 1024.
double nice_to_weight(int nice);

}  // namespace uringsim::sim
