#pragma once
// Basic units of the simulated machine. Work is in CPU cycles; time is in nanoseconds.
#include <cstdint>
#include <utility>
#include <vector>

namespace uringsim::sim {

using Cycles = double;  // CPU work; 1 cycle = 1 SimGrid flop on a host running at machine.ghz
using TimeNs = double;  // simulated time in nanoseconds

// Costs of the kernel primitives (spinlock, mutex, wake-ups). Filled from the cost table by the
// scenario builder; see models/costs.json for what each means and where its default comes from.
struct PrimitiveCosts {
  Cycles spin_lock_fast_cycles = 0;
  Cycles spin_handoff_cycles = 0;
  Cycles spin_lock_migrate_cycles = 0;
  Cycles mutex_fast_cycles = 0;
  Cycles wake_cycles = 0;
  Cycles wake_local_cycles = 0;  // the same when the woken thread runs on the waker's CPU: no IPI
  // To another CPU's queue without an IPI: that CPU is busy and the woken thread does not preempt
  // it. wake_cycles is the wake with the IPI.
  Cycles wake_remote_cycles = 0;
  // To a busy CPU whose thread the woken one preempts: resched_curr's IPI interrupts a running CPU
  // (on a VM a running vCPU, which costs its sender more than waking a halted one). The wake is
  // visible after the wake_remote_cycles part; the IPI's send is the rest.
  Cycles wake_preempt_cycles = 0;
  TimeNs wakeup_latency_ns = 0;
  Cycles context_switch_cycles = 0;
  // A thread's first run after a wake from another CPU onto its idle one, beyond the switch: its
  // wait's return on a CPU that idled, the lines the waker wrote. Part of the wake's one-way time.
  Cycles remote_wakee_cycles = 0;
  Cycles migrate_cycles = 0;            // a thread's first run on another CPU: its cache state follows it
  Cycles schedule_noswitch_cycles = 0;  // a schedule() that picks the caller again (woken first)
  // What a reschedule IPI takes from the running thread of the CPU it lands on: the interrupt's
  // entry and exit, on a VM the exits; charged to that thread. Sent by a kick (kick_process) and
  // by a wake-up that preempts another CPU's thread (resched_curr).
  Cycles ipi_receive_cycles = 0;
  // When that interrupt lands, from the start of the sender's IPI send: within the send (on a VM
  // the two ends' exits overlap), never after its end.
  TimeNs ipi_delivery_ns = 0;
};

// How a wake-up is made. Sync (WF_SYNC): the waker says it will sleep soon, as a socket's
// sk_data_ready and epoll's ep_poll_callback do; placement may then put the wakee on the waker's
// CPU (wake_affine_idle).
enum class Wake { Normal, Sync };

// Why a thread executed its pending work (a compute event) rather than act at its local date, for
// run_info.json's compute_by_cause: the lock it reached was held or had waiters; another thread
// could act before that date; a tick with threads queued, or a preemption asked, fell inside the
// work; or the interaction always executes it (sleeps, parks, wake-ups, reads of the clock, the
// lookahead turned off). None: it may act at its local date (Thread::run_ahead_verdict).
enum class SyncCause { None, LockBusy, OtherThreadFirst, Tick, Resched, Always, Count };

// The CPU scheduler (sim/cpu_sched.hpp): the fair class of the era, the tick, idle CPUs.
enum class SchedPolicy { Cfs, Eevdf };
// The kernel's preemption model (CONFIG_PREEMPT_*, or preempt= with PREEMPT_DYNAMIC). Full: a
// thread is preempted wherever preemption is enabled. None: in kernel mode only where it calls
// schedule(), cond_resched() or returns to user space. Voluntary: also at might_sleep() points
// (a mutex acquisition).
enum class PreemptModel { None, Voluntary, Full };
struct SchedSpec {
  SchedPolicy policy = SchedPolicy::Eevdf;
  PreemptModel preempt = PreemptModel::Full;
  double hz = 250;               // CONFIG_HZ: ticks per second
  TimeNs base_slice_ns = 750e3;  // sysctl_sched_base_slice (EEVDF) / sched_min_granularity (CFS)
  TimeNs latency_ns = 6e6;       // CFS sysctl_sched_latency
  TimeNs wakeup_gran_ns = 1e6;   // CFS sysctl_sched_wakeup_granularity
  TimeNs idle_exit_ns = 0;       // waking a CPU that halted: leaving its idle state
  TimeNs halt_poll_ns = 0;       // an idle CPU polls this long before it halts
  // sysctl_sched_migration_cost (the kernel's default): a thread that ran less than this long ago
  // is cache-hot, and balancing leaves it where it waits (task_hot)
  TimeNs migration_cost_ns = 500e3;
  // sd->cache_nice_tries (1 below the NUMA levels), in balance attempts: after more failed idle
  // balances in a row than this, balancing moves a cache-hot thread too (can_migrate_task)
  int cache_nice_tries = 1;
  // SIS_UTIL (6.0): a wake-up scans the cache domain for an idle CPU only as far as the domain's
  // utilization allows, and not at all past 100 / imbalance_pct of it (85 %); the scan's length is
  // recomputed by periodic balancing (update_idle_cpu_scan, select_idle_cpu). Off: always scans.
  bool sis_util = false;
  double imbalance_pct = 117;  // sd->imbalance_pct of the cache (MC) domain, in %
  // Periodic balancing is due every this many ns per CPU of the domain (sd->min_interval: the
  // domain's CPU count in ms), times busy_factor on a CPU that is busy (sd_init).
  TimeNs balance_interval_ns_per_cpu = 1e6;
  int busy_factor = 16;
  // PELT's half-life: util_avg decays by y per 1024 us period with y^32 = 1/2.
  TimeNs pelt_halflife_ns = 32 * 1024e3;
  // (idle time, exit latency) points, idle time increasing: replaces idle_exit_ns and halt_poll_ns
  // when not empty.
  std::vector<std::pair<TimeNs, TimeNs>> idle_exit_curve;
  TimeNs idle_exit_after(TimeNs idle_for) const;  // the wake-up's extra delay after that much idle
  // Wake-up packing, which upstream lacks and some VM kernels have (docs/models/scheduler.md): an
  // unpinned wakee goes to its waker's CPU whenever that CPU's utilization without the wakee, plus
  // the wakee's, is below this fraction of one CPU's capacity. 0: upstream placement.
  double wake_pack_util = 0;
};

struct MachineSpec {
  int cores = 1;
  double ghz = 1.0;
  // Every stall_every_ns a busy CPU loses stall_ns to what no thread of the machine does: its
  // timer tick's handler, and on a VM the host taking the vCPU away. The running thread's work
  // ends that much later, and the time counts as its own (the guest cannot tell). 0: none.
  TimeNs stall_every_ns = 0;
  TimeNs stall_ns = 0;
  // Or, as measured: stalls of each length at its rate (per second of a busy CPU), each CPU's at
  // random times (a Poisson stream from stall_seed). A VM's vCPU loses short gaps to its tick and
  // rare long ones (milliseconds) to the host; a mean period has no long ones. Replaces the
  // period when not empty.
  struct StallLength {
    TimeNs ns = 0;
    double per_s = 0;
  };
  std::vector<StallLength> stall_lengths{};
  std::uint64_t stall_seed = 0;
  // CPUs of other machines (e.g. remote clients), numbered after the machine's own cores. Threads
  // there should be spawned unaccounted: they are not part of the simulated machine's CPU use.
  int external_cpus = 0;
  SchedSpec sched{};
};

}  // namespace uringsim::sim
