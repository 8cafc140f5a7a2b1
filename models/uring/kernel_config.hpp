#pragma once
// The kernel design being simulated: era defaults resolved into explicit knobs, and the costs of
// the io_uring paths (cycles, from the cost table). Components read these, never the raw scenario.
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "models/uring/era.hpp"
#include "sim/types.hpp"

namespace uringsim::models {

enum class CreateError { Enomem, Eagain };  // create_io_thread failures: fatal, or retried

struct KernelConfig {
  std::string era;
  AsyncMode async_mode = AsyncMode::Hybrid;
  // These two pick the ring's PollReissue (poll_reissue.hpp): what a poll that fires, or is found
  // ready as it is armed, does with its request.
  ApollReady apoll_ready = ApollReady::TaskWork;
  // io_req_task_submit obeys REQ_F_FORCE_ASYNC (6.3+): a poll-woken IOSQE_ASYNC request goes back
  // to io-wq instead of being issued in the task's task_work.
  bool forced_reissue_iowq = false;
  // io-wq workers get the CPU affinity of the task that owns the ring (measured on 6.18: an
  // iou-wrk thread's Cpus_allowed_list is its submitter's); before, the node's CPUs.
  bool workers_inherit_affinity = false;
  int max_bound = 0;    // resolved: never 0
  int max_unbound = 0;  // resolved: never 0
  IoWqLock iowq_lock = IoWqLock::Split;
  // 6.6 ("don't grab wq->lock for worker activation"): the enqueue's free-list lookup is RCU only.
  // The workers design has it whatever this says (it came after).
  bool iowq_rcu_wake = false;
  bool iowq_free_via_tw = false;      // the era's (models/uring/era.hpp)
  bool iowq_wake_first_free = false;  // the era's
  bool tw_lockless = false;           // the era's: the task_work list is an llist, no tctx->task_lock
  bool tw_resched_per_item = false;   // the era's: handle_tw_list's need_resched() check per item
  bool net_msg_cache = false;         // the era's: a send's or recv's async header from the netmsg cache
  bool epoll_wake_sync = false;       // kernel.epoll_wake: ep_poll_callback wakes with WF_SYNC
  bool tw_on_enter = false;           // io_uring_enter runs pending task_work on entry (until 6.1)
  bool poll_once = false;             // REQ_F_POLLED: a request is polled at most once, then punted (5.15)
  // IO_URING_F_UNLOCKED exists (5.16, with the merged hybrid mode): "may not hold uring_lock" is its
  // own flag. Without it, IO_URING_F_NONBLOCK also means "the caller holds uring_lock".
  bool issue_flags_split = true;
  sim::TimeNs worker_idle_timeout_ns = 5e9;
  // Fault injection: errors of the first worker creations, in order (kernel.iowq.create_errors).
  std::vector<CreateError> iowq_create_errors;
  int sq_entries = 4096;
  int cq_entries = 8192;
  // SQPOLL (kernel.sqpoll)
  sim::TimeNs sq_idle_ns = 1e9;  // sq_thread_idle
  // Upstream takes sq_thread_idle in ms and counts it in jiffies (msecs_to_jiffies); the 5.x eras
  // model seed 001's RFC, whose part 1/2 made it ns-granular. 0: counted in ns.
  int sq_idle_jiffies = 0;
  bool sq_deputy = false;               // seed 001's IORING_ENTER_SQ_DEPUTY (never merged)
  bool sq_deputy_under_iopoll = false;  // lift the RFC's !IOPOLL condition
  int sq_submit_cap = 8;                // IORING_SQPOLL_CAP_ENTRIES_VALUE
  // IORING_SETUP_HYBRID_IOPOLL exists (6.13): a workload may ask for it.
  bool hybrid_iopoll_available = false;
  // kernel.dio_write_completion: an async O_DIRECT write to an XFS file finishes its iomap
  // completion in the submitter's task_work (IOCB_DIO_CALLER_COMP) instead of a dio/ kworker.
  bool dio_caller_comp = false;
  int sq_tw_cap = 0;  // IORING_TW_CAP_ENTRIES_VALUE per SQ loop pass; 0 = no cap

  // The era's defaults (models/uring/era.hpp), every other knob at its default.
  static KernelConfig for_era(std::string_view era_name);
  // The scenario's kernel: its era's row, then the knobs it sets (not `auto`).
  static KernelConfig from(const config::Scenario& s);
};

// Per-operation CPU costs of the io_uring paths, in cycles (see models/costs.json). The socket's and
// the drive's own costs are theirs (SocketCosts in models/net, DriveCosts in models/block).
struct UringCosts {
  sim::Cycles syscall, sqe_submit, file_lookup;
  sim::Cycles poll_arm, poll_wake, tw_add, tw_notify_ipi, tw_run, cqe_post;
  sim::Cycles iowq_prep, iowq_enqueue, iowq_get_work, iowq_worker_busy, iowq_work_overhead, worker_create;
  // A send's or recv's async header when the ring's netmsg cache has none (kmalloc at prep), and its
  // kfree when io-wq issued the request (freed with it, in the submitter's task_work).
  sim::Cycles net_msg_alloc, net_msg_free;
  // Shared data lines written inside io-wq's locked sections, and what one line costs to fetch from
  // another core (spin_lock_migrate_cycles): paid when the lock's previous holder ran elsewhere.
  double iowq_list_lines, iowq_free_list_lines, iowq_count_lines;
  sim::Cycles cacheline_transfer;
  // A free worker as the lockless walk finds it, and wake_up_process() of one that is awake: its
  // lines come from its CPU; the pi_lock is a plain uncontended spinlock.
  double iowq_worker_lines, ttwu_running_lines;
  sim::Cycles pi_lock;
  sim::Cycles app_cqe, app_sqe_prep, app_batch;
  sim::Cycles buf_ring_select, app_buf_recycle;  // provided buffer rings (multishot receive)
  sim::Cycles rw_complete, iopoll_pass, sq_loop_pass, fio_io, nop_issue;
  sim::Cycles blk_plug_flush;  // the block plug io_submit_sqes holds (models/block/plug.hpp)

  static UringCosts from(const config::CostTable& t);
};

}  // namespace uringsim::models
