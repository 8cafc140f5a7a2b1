#include "models/uring/kernel_config.hpp"

#include <cmath>

#include <algorithm>
#include <stdexcept>

namespace uringsim::models {
namespace {
// RLIMIT_NPROC is the unbound account's default cap; in practice no limit for a simulation.
constexpr int kUnlimitedWorkers = 1 << 20;

IoWqLock iowq_lock_named(const std::string& name) {
  if (name == "global") return IoWqLock::Global;
  if (name == "split") return IoWqLock::Split;
  if (name == "workers") return IoWqLock::Workers;
  throw std::invalid_argument("kernel.iowq.lock: no design named " + name);
}
}  // namespace

KernelConfig KernelConfig::for_era(std::string_view era_name) {
  const Era& e = models::era(era_name);
  KernelConfig k;
  k.era = e.name;
  k.async_mode = e.async_mode;
  k.apoll_ready = e.apoll_ready;
  k.forced_reissue_iowq = e.forced_reissue_iowq;
  k.workers_inherit_affinity = e.workers_inherit_affinity;
  k.iowq_lock = e.iowq_lock;
  k.iowq_rcu_wake = e.iowq_rcu_wake;
  k.iowq_free_via_tw = e.iowq_free_via_tw;
  k.iowq_wake_first_free = e.iowq_wake_first_free;
  k.tw_lockless = e.tw_lockless;
  k.tw_resched_per_item = e.tw_resched_per_item;
  k.net_msg_cache = e.net_msg_cache;
  k.epoll_wake_sync = e.epoll_wake_sync;
  k.tw_on_enter = e.tw_on_enter;
  k.poll_once = e.poll_once;
  k.issue_flags_split = e.unlocked_flag;
  k.hybrid_iopoll_available = e.hybrid_iopoll;
  k.dio_caller_comp = e.dio_caller_comp;
  k.sq_tw_cap = e.sq_tw_cap;
  return k;
}

KernelConfig KernelConfig::from(const config::Scenario& s) {
  KernelConfig k = for_era(s.at("/kernel/era").get<std::string>());
  const Era& row = models::era(k.era);
  const auto mode = s.at("/kernel/async_mode").get<std::string>();
  if (mode != "auto")
    k.async_mode = mode == "hybrid-v1"  ? AsyncMode::HybridV1
                   : mode == "blocking" ? AsyncMode::Blocking
                                        : AsyncMode::Hybrid;
  // The merged hybrid mode came with IO_URING_F_UNLOCKED; its first posting did not have it.
  k.issue_flags_split =
      k.async_mode == AsyncMode::Hybrid || (row.unlocked_flag && k.async_mode != AsyncMode::HybridV1);
  const auto ready = s.at("/kernel/apoll_ready").get<std::string>();
  if (ready != "auto") k.apoll_ready = ready == "inline" ? ApollReady::Inline : ApollReady::TaskWork;
  const auto reissue = s.at("/kernel/forced_reissue").get<std::string>();
  if (reissue != "auto") k.forced_reissue_iowq = reissue == "iowq";
  const auto epoll_wake = s.at("/kernel/epoll_wake").get<std::string>();
  if (epoll_wake != "auto") k.epoll_wake_sync = epoll_wake == "sync";
  k.sq_entries = s.at("/kernel/ring/sq_entries").get<int>();
  const int cq = s.at("/kernel/ring/cq_entries").get<int>();
  k.cq_entries = cq > 0 ? cq : 2 * k.sq_entries;
  const int cores = s.at("/machine/cores").get<int>();
  const int mb = s.at("/kernel/iowq/max_bound").get<int>();
  const int mu = s.at("/kernel/iowq/max_unbound").get<int>();
  k.max_bound = mb > 0 ? mb : std::min(k.sq_entries, 4 * cores);
  k.max_unbound = mu > 0 ? mu : kUnlimitedWorkers;
  const auto lock = s.at("/kernel/iowq/lock").get<std::string>();
  if (lock != "auto") k.iowq_lock = iowq_lock_named(lock);
  k.worker_idle_timeout_ns = s.at("/kernel/iowq/idle_timeout_ms").get<double>() * 1e6;
  for (const auto& e : s.at("/kernel/iowq/create_errors"))
    k.iowq_create_errors.push_back(e.get<std::string>() == "eagain" ? CreateError::Eagain
                                                                    : CreateError::Enomem);
  k.sq_idle_ns = s.at("/kernel/sqpoll/idle_us").get<double>() * 1e3;
  if (row.sq_idle_in_jiffies) {  // upstream: whole ms (0 means 1 s), rounded up to jiffies
    const double hz = s.at("/machine/hz").get<double>();
    double ms = std::ceil(k.sq_idle_ns / 1e6);
    if (ms <= 0) ms = 1000;
    k.sq_idle_jiffies = static_cast<int>(std::ceil(ms * hz / 1000.0));
    k.sq_idle_ns = k.sq_idle_jiffies * 1e9 / hz;
  }
  k.sq_deputy = s.at("/kernel/sqpoll/deputy").get<bool>();
  k.sq_deputy_under_iopoll = s.at("/kernel/sqpoll/deputy_under_iopoll").get<bool>();
  k.sq_submit_cap = s.at("/kernel/sqpoll/submit_cap").get<int>();
  const auto dio = s.at("/kernel/dio_write_completion").get<std::string>();
  if (dio != "auto") k.dio_caller_comp = dio == "caller";
  const int tw_cap = s.at("/kernel/sqpoll/tw_cap").get<int>();
  if (tw_cap >= 0) k.sq_tw_cap = tw_cap;  // -1: the era's
  return k;
}

UringCosts UringCosts::from(const config::CostTable& t) {
  UringCosts c;
  c.syscall = t.get("syscall_cycles");
  c.sqe_submit = t.get("sqe_submit_cycles");
  c.file_lookup = t.get("file_lookup_cycles");
  c.poll_arm = t.get("poll_arm_cycles");
  c.poll_wake = t.get("poll_wake_cycles");
  c.tw_add = t.get("tw_add_cycles");
  c.tw_notify_ipi = t.get("tw_notify_ipi_cycles");
  c.tw_run = t.get("tw_run_cycles");
  c.cqe_post = t.get("cqe_post_cycles");
  c.iowq_prep = t.get("iowq_prep_cycles");
  c.iowq_enqueue = t.get("iowq_enqueue_cycles");
  c.iowq_get_work = t.get("iowq_get_work_cycles");
  c.iowq_worker_busy = t.get("iowq_worker_busy_cycles");
  c.iowq_list_lines = t.get("iowq_list_lines");
  c.iowq_free_list_lines = t.get("iowq_free_list_lines");
  c.iowq_count_lines = t.get("iowq_count_lines");
  c.cacheline_transfer = t.get("spin_lock_migrate_cycles");
  c.iowq_worker_lines = t.get("iowq_worker_lines");
  c.ttwu_running_lines = t.get("ttwu_running_lines");
  c.pi_lock = t.get("spin_lock_fast_cycles");
  c.iowq_work_overhead = t.get("iowq_work_overhead_cycles");
  c.worker_create = t.get("worker_create_cycles");
  c.net_msg_alloc = t.get("net_msg_alloc_cycles");
  c.net_msg_free = t.get("net_msg_free_cycles");
  c.app_cqe = t.get("app_cqe_cycles");
  c.app_sqe_prep = t.get("app_sqe_prep_cycles");
  c.app_batch = t.get("app_batch_cycles");
  c.buf_ring_select = t.get("buf_ring_select_cycles");
  c.app_buf_recycle = t.get("app_buf_recycle_cycles");
  c.rw_complete = t.get("rw_complete_cycles");
  c.iopoll_pass = t.get("iopoll_pass_cycles");
  c.sq_loop_pass = t.get("sq_loop_pass_cycles");
  c.fio_io = t.get("fio_io_cycles");
  c.nop_issue = t.get("nop_issue_cycles");
  c.blk_plug_flush = t.get("blk_plug_flush_cycles");
  return c;
}

}  // namespace uringsim::models
