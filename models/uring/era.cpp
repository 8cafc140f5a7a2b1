#include "models/uring/era.hpp"

#include <stdexcept>

namespace uringsim::models {

const char* async_mode_name(AsyncMode m) {
  switch (m) {
    case AsyncMode::Blocking:
      return "blocking";
    case AsyncMode::Hybrid:
      return "hybrid";
    case AsyncMode::HybridV1:
      return "hybrid-v1";
  }
  return "?";
}

const char* iowq_lock_name(IoWqLock l) {
  switch (l) {
    case IoWqLock::Global:
      return "global";
    case IoWqLock::Split:
      return "split";
    case IoWqLock::Workers:
      return "workers";
  }
  return "?";
}

const std::vector<Era>& eras() {
  using A = AsyncMode;
  using R = ApollReady;
  using L = IoWqLock;
  // name, async_mode, apoll_ready, io-wq lock, RCU wake, tw on enter, poll once, UNLOCKED flag,
  // forced re-issue, workers' affinity, SQPOLL idle in jiffies, EEVDF, COOP_TASKRUN,
  // DEFER_TASKRUN, multishot recv, hybrid IOPOLL, DIO write caller completion, SQ thread's
  // task_work cap, io-wq's request free by task_work, first free worker counts as woken, lockless
  // task_work list, epoll's sync wake-up, the idle CPU scan by utilization, base slice (us),
  // a reschedule point between task_work items, net ops' async header from the netmsg cache
  static const std::vector<Era> table = {
      {"5.15", A::Blocking, R::Inline, L::Global, false, true,  true,  false, false,
       false,  false,       false,     false,     false, false, false, false, 0,
       false,  false,       false,     false,     false, 750,   false, false},
      {"5.16", A::Hybrid, R::TaskWork, L::Global, false, true,  false, true,  false,
       false,  false,     false,       false,     false, false, false, false, 0,
       false,  false,     false,       false,     false, 750,   false, false},
      {"5.18", A::Hybrid, R::TaskWork, L::Split, false, true,  false, true,  false,
       false,  false,     false,       false,    false, false, false, false, 0,
       false,  false,     false,       false,    false, 750,   false, false},
      {"6.x", A::Hybrid, R::TaskWork, L::Workers, true, false, false, true, true, true, true, true, true,
       true,  true,      true,        false,      32,   true,  true,  true, true, true, 700,  true, true},
  };
  return table;
}

const Era& era(std::string_view name) {
  for (const Era& e : eras())
    if (name == e.name) return e;
  std::string known;
  for (const Era& e : eras()) known += (known.empty() ? "" : ", ") + std::string(e.name);
  throw std::invalid_argument("kernel era \"" + std::string(name) + "\": expected one of " + known);
}

std::string eras_markdown() {
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  std::string md =
      "| Era | `async_mode` (auto) | `apoll_ready` (auto) | `iowq.lock` (auto) | task_work run at "
      "`io_uring_enter` entry | free worker found on enqueue | a polled request that gets -EAGAIN again | "
      "`IO_URING_F_UNLOCKED` | "
      "poll-woken IOSQE_ASYNC request (`forced_reissue` auto) | io-wq workers' CPUs | SQPOLL idle | "
      "scheduler (`sched` auto) | setup flags `coop_taskrun`, `taskrun_flag` | `single_issuer`, "
      "`defer_taskrun` | `recv_mode` `multishot` | fio `hybrid_iopoll` | "
      "O_DIRECT write completion on XFS (`dio_write_completion` auto) "
      "| SQ thread's task_work per pass (`sqpoll.tw_cap` auto) "
      "| a request io-wq completed is freed | an enqueue whose first free worker is awake "
      "| task_work list | a socket's data wakes an `epoll_wait` sleeper (`epoll_wake` auto) "
      "| a wake-up's scan for an idle CPU | base slice (`sysctl_sched_base_slice`, before scaling) "
      "| task_work run reschedules | a send's or recv's async header "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|--"
      "-|--"
      "-|"
      "\n";
  for (const Era& e : eras()) {
    md += std::string("| ") + e.name + " | `" + async_mode_name(e.async_mode) + "` | `" +
          (e.apoll_ready == ApollReady::Inline ? "inline" : "task_work") + "` | `" +
          iowq_lock_name(e.iowq_lock) + "` | " + yes(e.tw_on_enter) + " | " +
          (e.iowq_rcu_wake ? "under RCU" : "under wqe->lock") + " | " +
          (e.poll_once ? "punted to io-wq (`REQ_F_POLLED`)" : "re-armed") + " | " + yes(e.unlocked_flag) +
          " | " + (e.forced_reissue_iowq ? "back to io-wq" : "issued in task_work") + " | " +
          (e.workers_inherit_affinity ? "the ring task's" : "any") + " | " +
          (e.sq_idle_in_jiffies ? "ms, in jiffies" : "ns") + " | " + (e.eevdf ? "EEVDF" : "CFS") + " | " +
          yes(e.coop_taskrun) + " | " + yes(e.defer_taskrun) + " | " + yes(e.multishot_recv) + " | " +
          yes(e.hybrid_iopoll) + " | " +
          (e.dio_caller_comp ? "`caller` (task_work)" : "`workqueue` (kworker)") + " | " +
          (e.sq_tw_cap > 0 ? std::to_string(e.sq_tw_cap) : std::string("all")) + " | " +
          (e.iowq_free_via_tw ? "by the submitter's task_work" : "by the worker") + " | " +
          (e.iowq_wake_first_free ? "counts it as woken" : "wakes a sleeping one") + " | " +
          (e.tw_lockless ? "lockless llist" : "under `tctx->task_lock`") + " | " +
          (e.epoll_wake_sync ? "sync (`WF_SYNC`)" : "plain") + " | " +
          (e.sis_util ? "as far as utilization allows (`SIS_UTIL`)" : "always") + " | " +
          std::to_string(static_cast<int>(e.base_slice_us)) + " us | " +
          (e.tw_resched_per_item ? "between items, when `need_resched()`" : "not modelled (once per batch)") +
          " | " + (e.net_msg_cache ? "at prep, from the netmsg cache or kmalloc; io-wq's kfree'd" : "none") +
          " |\n";
  }
  return md;
}

}  // namespace uringsim::models
