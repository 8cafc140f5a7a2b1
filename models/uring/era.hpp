#pragma once
// The kernel eras the model knows, as one table: what each era does where io_uring's designs
// differ. A scenario's `auto` knobs take their era's value (KernelConfig::from), tests build their
// kernels from a row (KernelConfig::for_era), and docs/models/kernel-eras.md shows this table
// (a test checks the page against it).
#include <string>
#include <string_view>
#include <vector>

namespace uringsim::models {

// HybridV1: the first posting of seed 000 (reviewed in seed 004): the worker issues with NONBLOCK
// while NONBLOCK still also meant "holds uring_lock".
enum class AsyncMode { Blocking, Hybrid, HybridV1 };
const char* async_mode_name(AsyncMode m);
enum class ApollReady { Inline, TaskWork };
// io-wq's lock design (kernel.iowq.lock): one IoWqLocking class each (models/uring/iowq_locking.hpp).
// Global: wqe->lock guards everything (up to 5.17). Split: each account's work list under its own
// acct->lock, the worker lists under wqe->lock (5.18, seed 003). Workers: the worker lists per
// account under acct->workers_lock, no wq-wide lock (6.15, docs/models/locking.md).
enum class IoWqLock { Global, Split, Workers };
const char* iowq_lock_name(IoWqLock l);

struct Era {
  const char* name;
  AsyncMode async_mode;      // an IOSQE_ASYNC request on a pollable file in io-wq (5.16: hybrid)
  ApollReady apoll_ready;    // an armed poll found ready at once: re-issued inline (5.15) or by task_work
  IoWqLock iowq_lock;        // io-wq's lock design (5.18: split, 6.15: workers)
  bool iowq_rcu_wake;        // io_wq_enqueue finds a free worker under RCU alone, no wq->lock (6.6)
  bool tw_on_enter;          // io_uring_enter runs pending task_work on entry (until 6.1)
  bool poll_once;            // REQ_F_POLLED: a request is polled at most once, then punted (5.15)
  bool unlocked_flag;        // IO_URING_F_UNLOCKED exists, NONBLOCK no longer means "holds uring_lock" (5.16)
  bool forced_reissue_iowq;  // a poll-woken IOSQE_ASYNC request goes back to io-wq (6.3)
  bool workers_inherit_affinity;  // io-wq workers take the ring task's CPU affinity (seen on 6.18)
  bool sq_idle_in_jiffies;        // sq_thread_idle taken in ms and counted in jiffies (upstream)
  bool eevdf;                     // the fair scheduler is EEVDF (6.6) rather than CFS
  // What an application may ask for at ring setup (docs/models/task-work-delivery.md, multishot.md).
  bool coop_taskrun;    // IORING_SETUP_COOP_TASKRUN and TASKRUN_FLAG (5.19)
  bool defer_taskrun;   // SINGLE_ISSUER (6.0) + DEFER_TASKRUN (6.1), with 6.4's lazy wake-up, 6.5's
                        // FIFO order and 6.13's cap per run
  bool multishot_recv;  // IORING_RECV_MULTISHOT (6.0) with provided buffer rings (5.19)
  bool hybrid_iopoll;   // IORING_SETUP_HYBRID_IOPOLL (6.13, docs/models/block-completion.md)
  // An async O_DIRECT write on an iomap filesystem (XFS) completes in the submitter's task_work
  // (IOCB_DIO_CALLER_COMP) rather than a dio/ workqueue kworker. Merged in 6.6-rc1, disabled by
  // io_uring before 6.6 was released and removed in 2025: no released era has it.
  bool dio_caller_comp;
  // Most task_work items the SQ thread runs per loop pass (IORING_TW_CAP_ENTRIES_VALUE): 0 = all
  // of them (io_run_task_work, before 6.9); 8 from 6.9 ("manage task_work privately"), 32 from 6.15.
  int sq_tw_cap;
  // io_wq_free_work's last reference frees the request through the submitter's task_work
  // (io_free_req: io_req_task_complete with CQE_SKIP, 6.x); before, the worker freed it.
  bool iowq_free_via_tw;
  // io_wq_enqueue's free-worker lookup takes the first worker on the free list even when it is
  // already awake ("it's either already starting work or finishing work", 6.x); before, it looked
  // for one that wake_up_process() actually woke.
  bool iowq_wake_first_free;
  // tctx->task_list is a lockless llist (6.0, "io_uring: lockless task list"): an add is one
  // cmpxchg, a run takes the list with one xchg; before, both went under tctx->task_lock.
  bool tw_lockless;
  // epoll's ep_poll_callback passes a sync wake-up on (wake_up_sync, 6.10: commit 900bbaae67e9):
  // a socket's data wakes an epoll_wait sleeper with WF_SYNC; before, as a plain wake-up.
  bool epoll_wake_sync;
  // SIS_UTIL (6.0, commit 70fb5ccf2ebb): a wake-up scans the cache domain for an idle CPU only as
  // far as the domain's utilization allows, not at all past 85 % of it; before, it always scanned.
  bool sis_util;
  // sysctl_sched_base_slice's default before its 1 + log2(CPUs) scaling, in us: 750 (CFS's
  // sched_min_granularity, EEVDF from 6.6), 700 in mainline's EEVDF by 6.18 (this project's
  // 6.18 host shows se.slice = 1 400 000 ns for its threads on 2 CPUs in /proc/PID/sched).
  double base_slice_us;
  // handle_tw_list: between task_work items, when need_resched(), flush the ring's completions,
  // drop uring_lock and cond_resched() (6.8, commit f58680085478 "io_uring: add reschedule point to
  // handle_tw_list()", also in stable 5.10+). Before it, tctx_task_work called cond_resched() once
  // per batch with uring_lock held, which the model does not have.
  bool tw_resched_per_item;
  // A send or recv gets its struct io_async_msghdr at prep, from the ring's netmsg cache or, when
  // that is empty, from kmalloc (6.10, commit 790b68b32a67 "io_uring/net: always setup an
  // io_async_msghdr"). Its issue puts it back in the cache, but not from io-wq (IO_URING_F_UNLOCKED:
  // io_netmsg_recycle cannot take the cache's lock), where it is kfree'd with the request. Before,
  // a plain send or recv had no async header (docs/models/submission.md).
  bool net_msg_cache;
};

const std::vector<Era>& eras();
const Era& era(std::string_view name);  // std::invalid_argument for a name not in eras()
// The table as docs/models/kernel-eras.md shows it (markdown).
std::string eras_markdown();

}  // namespace uringsim::models
