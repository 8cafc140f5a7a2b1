#include "host/calibrate_derive.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/cost_table.hpp"
#include "config/schema.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host::calib {
namespace {

// Why the entries no benchmark measures keep their defaults.
const std::map<std::string, std::string>& never_measured() {
  static const std::map<std::string, std::string> reasons = {
      {"iowq_worker_busy_cycles",
       "taking an idle worker off the free list happens once per wake-up, inside the NOP round trip's "
       "hand-offs; no benchmark here isolates it"},
      {"iowq_list_lines", "a count of cache lines taken from the kernel source, not a cost"},
      {"iowq_free_list_lines", "a count of cache lines taken from the kernel source, not a cost"},
      {"iowq_count_lines", "a count of cache lines taken from the kernel source, not a cost"},
      {"iowq_worker_lines", "a count of cache lines taken from the kernel source, not a cost"},
      {"ttwu_running_lines", "a count of cache lines taken from the kernel source, not a cost"},
      {"net_one_way_ns",
       "on loopback the data is queued at the peer inside send() (the TCP benchmark's recv finds it at "
       "once); "
       "what is left is the wake-up, measured by its own entries, so this stays a modelling choice"},
      {"fio_io_cycles",
       "fio's own bookkeeping per I/O; fio is a macro workload, which may not feed the calibration"},
      {"nvme_submit_cycles", "needs an NVMe device; the calibration touches no storage"},
      {"rw_complete_cycles", "needs an NVMe device; the calibration touches no storage"},
      {"irq_handle_cycles", "needs an NVMe device's interrupts; the calibration touches no storage"},
      {"iopoll_pass_cycles", "needs a polled NVMe queue; the calibration touches no storage"},
      {"sq_loop_pass_cycles", "the SQPOLL thread's loop; no benchmark here isolates it"},
      {"net_msg_free_cycles",
       "the kfree of a send's async header happens in the submitter's task_work, with the request's "
       "free; no benchmark here times that part alone"},
  };
  return reasons;
}

std::vector<double> scaled(const std::vector<double>& v, double k) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * k);
  return out;
}

// Per-round sums and differences (rounds pair up by index).
std::vector<double> combine(const std::vector<double>& a, const std::vector<double>& b, double sign) {
  std::vector<double> out;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) out.push_back(a[i] + sign * b[i]);
  return out;
}
std::vector<double> minus(const std::vector<double>& a, const std::vector<double>& b) {
  return combine(a, b, -1);
}

class Builder {
 public:
  Builder(double ghz, config::Calibration& c) : ghz_(ghz), c_(c) {}

  double def(const std::string& key) const { return table_.get(key); }
  double cyc(double ns) const { return ns * ghz_; }
  bool has(const std::string& key) const { return c_.costs.count(key) > 0; }
  double value(const std::string& key) const { return has(key) ? c_.costs.at(key).value : def(key); }
  // A measured entry's method gains a remark (a cross-check against another benchmark).
  void remark(const std::string& key, const std::string& text) {
    if (has(key)) c_.costs.at(key).method += text;
  }

  // primary: the samples the value is computed from, already in the entry's unit.
  void put(const std::string& key, double value, std::string method, const std::vector<double>& primary) {
    if (value < 0) {
      method += fmt::format(
          "; the result, {:.1f}, is below 0 (the subtracted parts exceed what was measured, "
          "i.e. it is within their noise) and is clamped to 0",
          value);
      value = 0;
    }
    const Summary s = summarize(primary);
    config::CalibratedCost e;
    e.value = value;
    e.unit = table_.describe().at(key).at("unit").get<std::string>();
    e.method = std::move(method);
    e.samples = s.n;
    e.median = s.median;
    e.spread = spread_text(s);
    c_.costs[key] = std::move(e);
  }

  // A total the model spends on several entries that no call separates: each entry gets the share
  // its default has in their sum. what: how the total was measured, with its arithmetic.
  void share(const std::vector<std::string>& keys, double total, const std::string& what,
             const std::vector<double>& primary) {
    double sum = 0;
    std::string ratio;
    for (const auto& k : keys) {
      sum += def(k);
      ratio += fmt::format("{}{:g}", ratio.empty() ? "" : " : ", def(k));
    }
    std::string names;
    for (const auto& k : keys) names += (names.empty() ? "" : " + ") + k;
    for (const auto& k : keys) {
      const double part = def(k) / sum;
      put(k, total * part,
          fmt::format(
              "{}; the model spends that on {}, which cannot be told apart from user space, so each gets the "
              "share of its default ({}): {:.3f} x {:.1f} = {:.1f} cycles",
              what, names, ratio, part, total, total * part),
          primary);
    }
  }

  void keep(const std::string& key, const std::string& reason) {
    if (!has(key) && !kept(key)) c_.defaults_kept.emplace_back(key, reason);
  }
  bool kept(const std::string& key) const {
    return std::any_of(c_.defaults_kept.begin(), c_.defaults_kept.end(),
                       [&](const auto& k) { return k.first == key; });
  }

  void keep_the_rest() {
    for (const auto& key : table_.keys()) {
      const auto it = never_measured().find(key);
      keep(key, it != never_measured().end() ? it->second : "no micro-benchmark here isolates it");
    }
  }

 private:
  double ghz_;
  config::Calibration& c_;
  config::CostTable table_ = config::CostTable::defaults();
};

std::string why_not(const std::string& reason) {
  return "not measured: " + reason;
}

}  // namespace

bool stalls_usable(const StallProbe& stalls) {
  return stalls.share() < config::kStallMaxShare && stalls.per_s() <= config::kStallMaxRate;
}

std::optional<double> wake_pack_util(const Measurements& m) {
  double sum = 0;
  for (const bool same : {false, true}) {
    std::vector<std::pair<double, double>> rungs;  // (busy share, share kept on the waker's CPU)
    for (const auto& r : m.pack) {
      const int n = same ? r.same_n : r.other_n;
      const auto& busy = same ? r.same_busy : r.other_busy;  // each case's own: their timer slack differs
      if (n > 0 && !busy.empty())
        rungs.emplace_back(median(busy), static_cast<double>(same ? r.same_on : r.other_on) / n);
    }
    if (rungs.empty()) return std::nullopt;
    // In the asked shares' order: the measured ones can swap neighbours (a stall in a busy part).
    double crossing = rungs.back().first;  // kept at every busy share measured
    for (std::size_t k = 0; k < rungs.size(); ++k) {
      if (rungs[k].second >= 0.5) continue;
      if (k == 0) {
        crossing = 0;
      } else {
        const auto [b0, s0] = rungs[k - 1];
        const auto [b1, s1] = rungs[k];
        crossing = b0 + (s0 - 0.5) / (s0 - s1) * (b1 - b0);
      }
      break;
    }
    sum += crossing;
  }
  return sum / 2;
}

config::Calibration derive_calibration(const Measurements& m, const MachineInfo& machine, bool quick) {
  config::Calibration c;
  c.kernel_release = machine.kernel_release;
  c.cpu_model = machine.cpu_model;
  c.date = machine.date;
  c.quick = quick;
  c.machine.cores = machine.nproc;
  c.machine.ghz = machine.ghz_nominal;
  c.machine.ghz_source = machine.ghz_source;
  // lazy (6.13+) is not modelled: the scenario's own value stays.
  if (machine.preempt == "none" || machine.preempt == "voluntary" || machine.preempt == "full")
    c.machine.preempt = machine.preempt;
  if (!m.speed_ns_per_add.empty()) c.machine.speed_ns_per_add = median(m.speed_ns_per_add);
  if (!m.null_syscall.empty()) c.machine.syscall_ns = median(m.null_syscall);
  if (m.stalls.stalls() > 0 && stalls_usable(m.stalls)) c.machine.stall_lengths = m.stalls.lengths();
  c.machine.wake_pack_util = wake_pack_util(m);
  const double G = machine.ghz_nominal;
  Builder e(G, c);
  const std::string at_ghz = fmt::format("x {:.3g} GHz", G);

  // Uncontended locks.
  const double sp = e.cyc(median(m.spin_pair)), mx = e.cyc(median(m.mutex_pair));
  e.put("spin_lock_fast_cycles", sp,
        fmt::format("pthread_spin_lock + pthread_spin_unlock on one thread, no contention, the median over "
                    "50 chunks of "
                    "1000 pairs of the mean per pair: {:.2f} ns {} = {:.1f} cycles (a user-space lock word, "
                    "the same atomics as the kernel's "
                    "fast path)",
                    median(m.spin_pair), at_ghz, sp),
        scaled(m.spin_pair, G));
  e.put("mutex_fast_cycles", mx,
        fmt::format("pthread_mutex_lock + pthread_mutex_unlock on one thread, no contention, the median over "
                    "50 chunks of "
                    "1000 pairs of the mean per pair: {:.2f} ns {} = {:.1f} cycles (one atomic each way, as "
                    "the kernel's fast path)",
                    median(m.mutex_pair), at_ghz, mx),
        scaled(m.mutex_pair, G));

  // A cache line between two CPUs.
  if (!m.line_one_way.empty()) {
    const double line = e.cyc(median(m.line_one_way));
    e.put("spin_lock_migrate_cycles", line,
          fmt::format(
              "an atomic counter incremented in turn by two threads pinned on two CPUs, each spinning on it "
              "for the other's write, the median over chunks of 200 transfers: {:.1f} ns per transfer {} = "
              "{:.0f} cycles",
              median(m.line_one_way), at_ghz, line),
          scaled(m.line_one_way, G));
    e.put("spin_handoff_cycles", line,
          fmt::format(
              "the cache-line transfer of spin_lock_migrate_cycles ({:.1f} ns {}): a waiter spinning on the "
              "lock word pays one such transfer when the lock is released from the other CPU",
              median(m.line_one_way), at_ghz),
          scaled(m.line_one_way, G));
  } else {
    e.keep("spin_lock_migrate_cycles", why_not(m.cross_cpu_unavailable));
    e.keep("spin_handoff_cycles", why_not(m.cross_cpu_unavailable));
  }

  // io_uring_enter and the NOP batch fit.
  const double S = median(m.null_syscall);
  const double a = median(m.nop_a), b = median(m.nop_b);
  const std::string batches = fmt::format("{}", fmt::join(m.nop_batches, ", "));
  e.put(
      "syscall_cycles", e.cyc(a) - mx - sp,
      fmt::format(
          "io_uring_submit_and_wait of n NOPs (n = {}) timed and fitted per round as T(n) = a + b n: a = "
          "{:.1f} ns = {:.0f} cycles, less the uring_lock (mutex_fast_cycles {:.0f}) and completion_lock "
          "(spin_lock_fast_cycles {:.0f}) fast paths the model charges in the same call = {:.0f} cycles; for "
          "comparison a null io_uring_enter(fd, 0, 0, 0) takes {:.1f} ns and getppid() {:.1f} ns",
          batches, a, e.cyc(a), mx, sp, e.cyc(a) - mx - sp, median(m.enter_null), S),
      scaled(m.nop_a, G));
  e.share(
      {"sqe_submit_cycles", "nop_issue_cycles", "cqe_post_cycles"}, e.cyc(b),
      fmt::format("the slope b of the NOP batch fit above: {:.2f} ns = {:.1f} cycles per NOP", b, e.cyc(b)),
      scaled(m.nop_b, G));
  const double post = e.value("cqe_post_cycles");

  // The application's own code per SQE and per CQE: uringsim's host NOP runner's, timed around
  // its batches (the echo server's lookup of its connection is not in it).
  e.put("app_sqe_prep_cycles", e.cyc(median(m.app_prep)),
        fmt::format("the host NOP runner's code per SQE (host/app_loop.hpp: io_uring_get_sqe, "
                    "io_uring_prep_nop, a record), timed over batches of {}: {:.1f} ns {} = {:.0f} cycles",
                    m.app_batch, median(m.app_prep), at_ghz, e.cyc(median(m.app_prep))),
        scaled(m.app_prep, G));
  e.put("app_cqe_cycles", e.cyc(median(m.app_reap)),
        fmt::format("the host NOP runner's code per CQE (host/app_loop.hpp: the CQ walk, a clock read, a "
                    "record of the latency, the head advance), timed over batches of {}: {:.1f} ns {} = "
                    "{:.0f} cycles",
                    m.app_batch, median(m.app_reap), at_ghz, e.cyc(median(m.app_reap))),
        scaled(m.app_reap, G));
  // And once per batch: the rest of the runner's loop (host/app_loop.hpp), timed around its syscall.
  {
    const double fixed = median(m.loop_a), item = median(m.loop_b);
    e.put("app_batch_cycles", e.cyc(fixed),
          fmt::format(
              "the host NOP runner's loop (host/app_loop.hpp NopBatches::run, as `uringsim host` runs "
              "it) over batches of n inline NOPs (n = {}), timed per chunk of batches with each batch's "
              "io_uring_submit_and_wait timed inside it; per batch, the chunk's time less those calls "
              "less the two clock reads ({:.1f} ns each) that time them, fitted per round as "
              "R(n) = a + b n: a = {:.1f} ns {} = {:.0f} cycles, what the loop spends once per batch "
              "besides the syscall (the batch's two clock reads, its window count, the stop check, "
              "the fixed part of preparing and reaping); b = {:.1f} ns per NOP, against "
              "app_sqe_prep_cycles + app_cqe_cycles {:.1f} ns. Each request is recorded in the "
              "runner's own metrics, as in a host run",
              batches, median(m.clock_read), fixed, at_ghz, e.cyc(fixed), item,
              median(m.app_prep) + median(m.app_reap)),
          scaled(m.loop_a, G));
  }

  // A schedule() that finds the caller runnable: sched_yield with nothing else on the CPU.
  const double yield = median(m.sched_yield);
  e.put("schedule_noswitch_cycles", e.cyc(yield - S),
        fmt::format("sched_yield() with nothing else runnable on its CPU ({:.1f} ns: yield_task_fair and a "
                    "__schedule that picks the caller again), less one syscall entry + exit (getppid {:.1f} "
                    "ns) = {:.1f} ns {} = {:.0f} cycles",
                    yield, S, yield - S, at_ghz, e.cyc(yield - S)),
        scaled(minus(m.sched_yield, m.null_syscall), G));

  // Wake-ups. The same-CPU ping-pong gives the switch; the cross-CPU ones the waker's work and the delay.
  const double ow_same = median(m.pingpong_same), w_same = median(m.wake_call_same);
  const double ctx = e.cyc(ow_same - w_same - S);
  e.put("context_switch_cycles", ctx,
        fmt::format(
            "futex ping-pong between two threads on one CPU: {:.0f} ns per one-way hand-off, made of the "
            "waker's FUTEX_WAKE call ({:.0f} ns, measured in the loop), one syscall entry + exit (the "
            "FUTEX_WAIT it sleeps in, returning in the other thread: getppid {:.0f} ns) and the switch: "
            "({:.0f} - {:.0f} - {:.0f}) ns {} = {:.0f} cycles",
            ow_same, w_same, S, ow_same, w_same, S, at_ghz, ctx),
        scaled(m.pingpong_same, G));
  {
    const double fw0 = median(m.futex_wake_none);
    e.put(
        "wake_local_cycles", e.cyc(w_same - fw0),
        fmt::format("the waker's FUTEX_WAKE call inside the same-CPU ping-pong ({:.0f} ns: the woken thread "
                    "queues on the waker's CPU, no IPI), less FUTEX_WAKE with nobody waiting ({:.0f} ns) = "
                    "{:.0f} ns {} = {:.0f} cycles",
                    w_same, fw0, w_same - fw0, at_ghz, e.cyc(w_same - fw0)),
        scaled(minus(m.wake_call_same, m.futex_wake_none), G));
  }
  if (!m.wake_idle.empty()) {
    const double w_idle = median(m.wake_call_idle), fw0 = median(m.futex_wake_none);
    const double wake = e.cyc(w_idle - fw0);
    e.put("wake_cycles", wake,
          fmt::format(
              "the waker's FUTEX_WAKE call when the thread it wakes sleeps on another CPU, idle for 100 us: "
              "{:.0f} ns, less FUTEX_WAKE with nobody waiting ({:.0f} ns) = {:.0f} ns {} = {:.0f} cycles "
              "(try_to_wake_up, including the IPI to that CPU)",
              w_idle, fw0, w_idle - fw0, at_ghz, wake),
          scaled(m.wake_call_idle, G));
    // A FUTEX_WAKE to another CPU, less one with nobody waiting: the waker's try_to_wake_up.
    const auto put_wake_call = [&](const char* key, const std::vector<double>& calls,
                                   const std::string& when) {
      const double w = median(calls);
      e.put(key, e.cyc(w - fw0),
            fmt::format("the waker's FUTEX_WAKE call when {}: {:.0f} ns, less FUTEX_WAKE with nobody waiting "
                        "({:.0f} ns) = {:.0f} ns {} = {:.0f} cycles",
                        when, w, fw0, w - fw0, at_ghz, e.cyc(w - fw0)),
            scaled(minus(calls, m.futex_wake_none), G));
    };
    if (!m.wake_call_remote.empty())
      put_wake_call("wake_remote_cycles", m.wake_call_remote,
                    "the thread it wakes sleeps on another CPU that is busy with a spinning thread, and is "
                    "SCHED_IDLE, so it preempts nothing and no IPI is sent");
    else
      e.keep("wake_remote_cycles", m.wake_remote_unavailable.empty()
                                       ? "the wake to a busy CPU without preemption was not measured"
                                       : m.wake_remote_unavailable);
    if (!m.wake_call_busy.empty())
      put_wake_call(
          "wake_preempt_cycles", m.wake_call_busy,
          fmt::format("the thread it wakes sleeps on another CPU where a thread spins, which the woken "
                      "one preempts (the reschedule IPI to a running CPU; it ran {:.0f} ns after the "
                      "call began)",
                      median(m.wake_busy)));
    else
      e.keep("wake_preempt_cycles", "the wake to a busy CPU was not measured");
    const double idle = median(m.wake_idle);
    // The wake-up's delay by how long the target CPU was idle: the shortest idle is a CPU that
    // still polls (no halt to leave), the longest one that halted.
    std::vector<std::pair<double, double>> rungs;  // (idle ns, median one-way ns)
    for (std::size_t k = 0; k < std::min(m.idle_ladder_ns.size(), m.wake_by_idle.size()); ++k)
      if (!m.wake_by_idle[k].empty()) rungs.emplace_back(m.idle_ladder_ns[k], median(m.wake_by_idle[k]));
    const bool ladder = rungs.size() >= 2;
    const double short_idle = ladder ? rungs.front().second : idle;
    // Part of that one-way is the woken thread's own CPU: its FUTEX_WAIT costs it more, by its CPU
    // clock, when the wake comes from another CPU to its idle one than in the ping-pong on one CPU.
    double wakee_ns = 0;
    std::string wakee_why;
    if (!m.wakee_cpu_by_idle.empty() && !m.wakee_cpu_by_idle.front().empty() && !m.wakee_cpu_same.empty()) {
      const double remote = median(m.wakee_cpu_by_idle.front()), same = median(m.wakee_cpu_same);
      // At most what the one-way time leaves after the waker's call and the switch, so that the
      // model's wake takes the measured one-way time.
      const double room = std::max(0.0, short_idle - w_idle - std::max(ctx, 0.0) / G);
      wakee_ns = std::clamp(remote - same, 0.0, room);
      e.put("remote_wakee_cycles", e.cyc(wakee_ns),
            fmt::format("the woken thread's own CPU time (its CPU clock) across the FUTEX_WAIT a wake ends: "
                        "{:.0f} ns when woken from another CPU onto its CPU idle for {:.0f} us, {:.0f} ns in "
                        "the ping-pong on one CPU (the waits that slept); the difference {:.0f} ns{}, {} = "
                        "{:.0f} cycles",
                        remote, ladder ? rungs.front().first / 1e3 : 100.0, same, remote - same,
                        remote - same > room
                            ? fmt::format(", capped at what the one-way time leaves after the waker's call "
                                          "and the switch ({:.0f} ns)",
                                          room)
                            : std::string(),
                        at_ghz, e.cyc(wakee_ns)),
            scaled(m.wakee_cpu_by_idle.front(), G));
      wakee_why =
          fmt::format(", and the woken thread's own part of it (remote_wakee_cycles, {:.0f} ns)", wakee_ns);
    } else {
      e.keep("remote_wakee_cycles", "the woken thread's CPU time in its wait was not measured");
    }
    const double lat = short_idle - w_idle - std::max(ctx, 0.0) / G - wakee_ns;
    e.put("wakeup_latency_ns", lat,
          fmt::format(
              "the same wake-up timed from the waker's call to the woken thread running (shared monotonic "
              "clock), the target idle for {:.0f} us: {:.0f} ns one-way, less what the model charges as CPU "
              "work around the delay: the waker's FUTEX_WAKE call ({:.0f} ns, wake_cycles and the syscall) "
              "and the switch in (context_switch_cycles, {:.0f} ns){}: {:.0f} ns. A wake to a CPU idle a "
              "short while; longer idles add machine.idle_exit_curve",
              ladder ? rungs.front().first / 1e3 : 100.0, short_idle, w_idle, std::max(ctx, 0.0) / G,
              wakee_why, lat),
          ladder ? m.wake_by_idle.front() : m.wake_idle);
    if (ladder) {  // each rung's wake less the shortest idle's, which wakeup_latency_ns holds
      std::vector<std::pair<double, double>> curve;
      for (const auto& [idle_ns, one_way] : rungs)
        curve.emplace_back(idle_ns, std::max(0.0, one_way - rungs.front().second));
      c.machine.idle_exit_curve = curve;
    }
    c.machine.wake_idle_ns = idle;
    if (!m.wake_busy.empty()) c.machine.wake_busy_ns = median(m.wake_busy);
  } else {
    e.keep("wake_cycles", why_not(m.cross_cpu_unavailable));
    e.keep("wake_remote_cycles", why_not(m.cross_cpu_unavailable));
    e.keep("wake_preempt_cycles", why_not(m.cross_cpu_unavailable));
    e.keep("wakeup_latency_ns", why_not(m.cross_cpu_unavailable));
    e.keep("remote_wakee_cycles", why_not(m.cross_cpu_unavailable));
  }

  if (m.iowq_unavailable.empty() && !m.worker_first_extra.empty()) {
    const double extra = median(m.worker_first_extra);
    e.put("worker_create_cycles", e.cyc(extra),
          fmt::format(
              "in a new thread (a new io_uring task, so a new io-wq without workers), after one inline NOP: "
              "its first IOSQE_ASYNC NOP, which creates the worker, minus the median of the next 7, which "
              "find it idle: {:.0f} ns {} = {:.0f} cycles (one thread per sample)",
              extra, at_ghz, e.cyc(extra)),
          scaled(m.worker_first_extra, G));
  } else {
    e.keep("worker_create_cycles", why_not(m.iowq_unavailable));
  }

  // Loopback TCP: per-byte slopes from the two sizes, then the per-message parts without the syscall.
  const double s_small = median(m.send_small), s_large = median(m.send_large);
  const double r_small = median(m.recv_small), r_large = median(m.recv_large);
  const double span = m.tcp_large - m.tcp_small;
  const double byte_ns = ((s_large - s_small) / span + (r_large - r_small) / span) / 2;
  const double byte = e.cyc(byte_ns);
  std::vector<double> byte_rounds;
  for (std::size_t i = 0; i < std::min(m.send_small.size(), m.recv_small.size()); ++i)
    byte_rounds.push_back(
        e.cyc(((m.send_large[i] - m.send_small[i]) + (m.recv_large[i] - m.recv_small[i])) / (2 * span)));
  e.put("tcp_byte_cycles", byte,
        fmt::format(
            "send() and recv() of {} and {} B on loopback, one thread holding both ends: per-byte slopes "
            "send ({:.0f} - {:.0f}) ns / {:.0f} B and recv ({:.0f} - {:.0f}) ns / {:.0f} B, averaged (the "
            "model charges it on both sides): {:.4f} ns {} = {:.3f} cycles",
            m.tcp_small, m.tcp_large, s_large, s_small, span, r_large, r_small, span, byte_ns, at_ghz, byte),
        byte_rounds);
  const double small = m.tcp_small;
  // Each of these calls takes a socket spinlock section that the model charges on its own with a
  // local peer (models/net/socket.hpp): the send's softirq the peer socket's (bh_lock_sock), a
  // recv its own (lock_sock); one spin_lock_fast each comes off.
  e.put("tcp_send_cycles", e.cyc(s_small - S) - small * byte - sp,
        fmt::format(
            "send() of {} B on loopback (the receive side's softirq runs inside it): {:.0f} ns, less the "
            "syscall (getppid {:.0f} ns) = {:.0f} cycles, less {:.0f} B x tcp_byte_cycles and the peer "
            "socket's spinlock section in the softirq (spin_lock_fast {:.0f}) = {:.0f} cycles",
            m.tcp_small, s_small, S, e.cyc(s_small - S), small, sp, e.cyc(s_small - S) - small * byte - sp),
        scaled(m.send_small, G));
  e.put("tcp_recv_cycles", e.cyc(r_small - S) - small * byte - sp,
        fmt::format(
            "recv() of {} B already queued on loopback: {:.0f} ns, less the syscall (getppid {:.0f} ns) = "
            "{:.0f} cycles, less {:.0f} B x tcp_byte_cycles and lock_sock's spinlock section (spin_lock_fast "
            "{:.0f}) = {:.0f} cycles",
            m.tcp_small, r_small, S, e.cyc(r_small - S), small, sp, e.cyc(r_small - S) - small * byte - sp),
        scaled(m.recv_small, G));
  const double eagain = median(m.recv_eagain);
  e.put("tcp_recv_eagain_cycles", e.cyc(eagain - S) - sp,
        fmt::format("recv(MSG_DONTWAIT) on an empty loopback socket, the median over 20 chunks of 100 calls "
                    "of the mean per call: {:.0f} ns, less the "
                    "syscall (getppid {:.0f} ns) = {:.0f} ns {} = {:.0f} cycles, less lock_sock's spinlock "
                    "section (spin_lock_fast {:.0f}) = {:.0f} cycles",
                    eagain, S, eagain - S, at_ghz, e.cyc(eagain - S), sp, e.cyc(eagain - S) - sp),
        scaled(m.recv_eagain, G));
  const double ep = median(m.epoll_wait_one);
  e.put("epoll_wait_cycles", e.cyc(ep),
        fmt::format("epoll_wait(maxevents 64, timeout 0) on an epoll set with one readable loopback socket "
                    "(level-triggered): {:.1f} ns {} = {:.0f} cycles, the call with one event returned",
                    ep, at_ghz, e.cyc(ep)),
        scaled(m.epoll_wait_one, G));

  // A loopback message whose two ends run on different CPUs: the extra time over the same-CPU
  // round trip, per message, in cache lines moved at the measured core-to-core cost.
  if (!m.tcp_rtt_cross.empty() && !m.line_one_way.empty()) {
    const double same = median(m.tcp_rtt_same), cross = median(m.tcp_rtt_cross);
    const double line_ns = median(m.line_one_way);
    // The receiving socket's spinlock line moves twice per message (to the sender's softirq, back
    // to the receiver's lock_sock); the model's lock moves it itself.
    constexpr double kSlockLines = 2;
    const double lines = std::max(0.0, (cross - same) / 2 / line_ns - kSlockLines);
    std::vector<double> per_round;
    for (std::size_t i = 0; i < std::min(m.tcp_rtt_same.size(), m.tcp_rtt_cross.size()); ++i)
      per_round.push_back(
          std::max(0.0, (m.tcp_rtt_cross[i] - m.tcp_rtt_same[i]) / 2 / line_ns - kSlockLines));
    e.put("tcp_cross_cpu_lines", lines,
          fmt::format(
              "12 B round trips over one loopback connection with spinning receivers: the far end on "
              "the other CPU {:.0f} ns, both ends on one CPU {:.0f} ns; per message ({:.0f} - {:.0f}) / 2 "
              "= {:.0f} ns, in cache-line transfers of {:.1f} ns (the bounce above) = {:.1f} lines, less "
              "the 2 transfers of the socket's spinlock line, which the model's lock makes itself = {:.1f} "
              "lines",
              cross, same, cross, same, (cross - same) / 2, line_ns, (cross - same) / 2 / line_ns, lines),
          per_round);
  } else {
    e.keep("tcp_cross_cpu_lines", why_not(m.cross_cpu_unavailable));
  }

  // Loopback calls rotated over n connections: the rise over n = 1 against the share of an
  // n-connection working set that the cache cannot hold (calibrate_fit.hpp fit_cache).
  const bool rungs_measured =
      m.tcp_many_n.size() >= 2 &&
      std::all_of(m.tcp_many_pair.begin(), m.tcp_many_pair.end(), [](const auto& v) { return !v.empty(); });
  if (rungs_measured) {
    std::vector<double> n, rise;
    std::string ladder;
    const double base = median(m.tcp_many_pair[0]);
    for (std::size_t k = 0; k < m.tcp_many_n.size(); ++k) {
      const double t = median(m.tcp_many_pair[k]);
      ladder += fmt::format("{}n = {} {:.0f} ns", k ? ", " : "", m.tcp_many_n[k], t);
      if (k == 0) continue;
      n.push_back(m.tcp_many_n[k]);
      rise.push_back(t - base);
    }
    const CacheFit fit = fit_cache(n, rise);
    // Per round: that round's rise fitted with the same k, and the round's own k.
    std::vector<double> cold_rounds, k_rounds;
    std::size_t rounds = m.tcp_many_pair[0].size();
    for (const auto& v : m.tcp_many_pair) rounds = std::min(rounds, v.size());
    for (std::size_t r = 0; r < rounds; ++r) {
      std::vector<double> y;
      for (std::size_t k = 1; k < m.tcp_many_n.size(); ++k)
        y.push_back(m.tcp_many_pair[k][r] - m.tcp_many_pair[0][r]);
      cold_rounds.push_back(e.cyc(std::max(0.0, fit_cache_m(n, y, fit.k))) / 2);
      k_rounds.push_back(fit_cache(n, y).k);
    }
    e.put("tcp_cold_cycles", e.cyc(fit.m) / 2,
          fmt::format("send() + recv() of 64 B rotated over n loopback connections, one thread holding both "
                      "ends, ns per pair (the median over 7 chunks of 1024 pairs): {}; the rise over n = 1 "
                      "fitted as m x max(0, 1 - k / n): m = {:.0f} ns per pair, k = {:.0f}; half of m per "
                      "call, {} = {:.0f} cycles",
                      ladder, fit.m, fit.k, at_ghz, e.cyc(fit.m) / 2),
          cold_rounds);
    e.put(
        "tcp_cache_connections", fit.k,
        fmt::format("the k of that fit: calls begin to pay tcp_cold_cycles beyond {:.0f} connections", fit.k),
        k_rounds);
  } else {
    const std::string why = !m.tcp_many_limited.empty() ? m.tcp_many_limited : "fewer than two rungs ran";
    e.keep("tcp_cold_cycles", why_not(why));
    e.keep("tcp_cache_connections", why_not(why));
  }

  // Poll on a DEFER_TASKRUN ring: arm, wake and task_work run land in three different calls.
  if (m.poll_unavailable.empty() && !m.poll_add.empty()) {
    const double data = median(m.poll_data), fixed = median(m.poll_data_fixed);
    e.put("file_lookup_cycles", e.cyc(data - fixed),
          fmt::format(
              "submit_and_wait of a recv that finds 64 B on loopback, by fd {:.0f} ns - through a registered "
              "file {:.0f} ns = {:.1f} ns {} = {:.0f} cycles (fget/fput)",
              data, fixed, data - fixed, at_ghz, e.cyc(data - fixed)),
          scaled(minus(m.poll_data, m.poll_data_fixed), G));
    const double add = median(m.poll_add), recv_arm = median(m.poll_recv_arm);
    const double around =
        e.value("syscall_cycles") + mx + e.value("sqe_submit_cycles") + e.value("file_lookup_cycles");
    const double v_arm = e.cyc(add) - around;
    e.put("poll_arm_cycles", v_arm,
          fmt::format(
              "submit of IORING_OP_POLL_ADD(POLLIN) on an empty loopback socket: {:.0f} ns = {:.0f} cycles, "
              "less what the model charges around the arm in that call (syscall + the uring_lock section "
              "(mutex_fast) + sqe_submit + file_lookup = {:.0f}) = {:.0f} cycles. For comparison a recv on "
              "the empty socket, which arms the same poll after its -EAGAIN attempt, takes {:.0f} ns "
              "({:.0f} cycles more; tcp_recv_eagain is {:.0f})",
              add, e.cyc(add), around, v_arm, recv_arm, e.cyc(recv_arm - add),
              e.value("tcp_recv_eagain_cycles")),
          scaled(m.poll_add, G));
    const double armed = median(m.poll_send_armed), plain = median(m.poll_send_plain);
    const double woke = e.cyc(armed - plain) - sp;
    e.share(
        {"poll_wake_cycles", "tw_add_cycles"}, woke,
        fmt::format(
            "send() of 64 B to a socket with a poll armed (the wake callback queues task_work, which "
            "DEFER_TASKRUN does not run there) {:.0f} ns - the same send() with nothing armed {:.0f} ns = "
            "{:.0f} cycles, less the task list's atomic the model charges (llist_add, a spin_lock_fast "
            "{:.0f}) = {:.0f} cycles",
            armed, plain, e.cyc(armed - plain), sp, woke),
        scaled(minus(m.poll_send_armed, m.poll_send_plain), G));
    const double ge = median(m.poll_getevents), en = median(m.poll_enter_null);
    const double v_tw = e.cyc(ge - en) - post - 2 * sp - mx;
    e.put(
        "tw_run_cycles", v_tw,
        fmt::format(
            "io_uring_enter(GETEVENTS, min 1) that runs that task_work (the poll's handler posts the CQE) "
            "{:.0f} ns - the same call with nothing to do {:.0f} ns = {:.0f} cycles, less the CQE (cqe_post "
            "{:.0f}) and the task list's llist_del_all, the completion_lock and uring_lock sections (2 x "
            "{:.0f} + {:.0f}) = "
            "{:.0f} cycles",
            ge, en, e.cyc(ge - en), post, sp, mx, v_tw),
        scaled(minus(m.poll_getevents, m.poll_enter_null), G));
  } else {
    for (const char* key :
         {"poll_arm_cycles", "poll_wake_cycles", "tw_add_cycles", "tw_run_cycles", "file_lookup_cycles"})
      e.keep(key, why_not(m.poll_unavailable));
  }

  // TWA_SIGNAL's kick: the armed send to a running task, less the plain send and less what the
  // armed send costs where nobody is kicked (the DEFER_TASKRUN ring's, just above).
  if (m.kick_unavailable.empty() && !m.kick_send.empty() && m.poll_unavailable.empty()) {
    const double kick = median(m.kick_send), plain = median(m.kick_send_plain);
    const double queued = median(m.poll_send_armed) - median(m.poll_send_plain);
    std::vector<double> rounds;
    for (double d : minus(m.kick_send, m.kick_send_plain)) rounds.push_back((d - queued) * G);
    e.put("tw_notify_ipi_cycles", e.cyc(kick - plain - queued),
          fmt::format(
              "send() of 64 B to a socket with a poll armed by a ring whose task runs in user space "
              "on the other CPU (TWA_SIGNAL: the wake callback queues task_work and kick_process() "
              "sends the task an IPI) {:.0f} ns - the same send() with nothing armed {:.0f} ns = {:.0f} "
              "ns, less the armed send where nobody is kicked (DEFER_TASKRUN, above: {:.0f} ns) = "
              "{:.0f} ns {} = {:.0f} cycles. The kicked task's spin loop was away {:.0f} ns (the "
              "interrupt, the task_work and the return), which the model does not charge it",
              kick, plain, kick - plain, queued, kick - plain - queued, at_ghz, e.cyc(kick - plain - queued),
              median(m.kick_away)),
          rounds);
    // The kicked task's side: the gap in its spin loop, less the task_work it ran there as the
    // model charges it (one item, its CQE, the list's xchg, the completion_lock and uring_lock).
    const double ran = e.value("tw_run_cycles") + e.value("cqe_post_cycles") + 2 * sp + mx;
    const double away = median(m.kick_away);
    e.put("ipi_receive_cycles", std::max(0.0, e.cyc(away) - ran),
          fmt::format("the same kick seen by the kicked task: its user-space spin loop was away {:.0f} ns "
                      "(the IPI's interrupt, the task_work it runs on the way back to user space, the "
                      "return) {} = {:.0f} cycles, less that task_work as the model charges it (tw_run + "
                      "cqe_post + 2 spin_lock_fast + mutex_fast = {:.0f}) = {:.0f} cycles",
                      away, at_ghz, e.cyc(away), ran, std::max(0.0, e.cyc(away) - ran)),
          scaled(m.kick_away, G));
    // When the interrupt lands, from the kick's start: the gap's start after the send() began, less
    // the part of the send() before the wake callback kicks (at most the whole plain send()).
    if (!m.kick_onset.empty()) {
      const double onset = median(m.kick_onset), send = kick - plain - queued;
      const double at = std::clamp(onset - plain, 0.0, send);
      std::vector<double> rounds;
      for (double o : m.kick_onset) rounds.push_back(o - plain);
      e.put(
          "ipi_delivery_ns", at,
          fmt::format("the kicked task's spin loop stopped {:.0f} ns after the sender's send() began "
                      "(shared monotonic clock), less the plain send() ({:.0f} ns: the part before the "
                      "kick is at most that) = {:.0f} ns{}",
                      onset, plain, onset - plain,
                      onset - plain > send ? fmt::format(", capped at the kick's own part ({:.0f} ns)", send)
                                           : std::string()),
          rounds);
    }
  } else {
    const std::string reason = why_not(!m.kick_unavailable.empty()   ? m.kick_unavailable
                                       : !m.poll_unavailable.empty() ? m.poll_unavailable
                                                                     : "the kick was not measured");
    e.keep("tw_notify_ipi_cycles", reason);
    e.keep("ipi_receive_cycles", reason);
    e.keep("ipi_delivery_ns", reason);
  }

  // io-wq: the batch slopes differ by the per-item io-wq work; the hand-offs stay in the intercepts.
  if (m.iowq_unavailable.empty() && !m.iowq_async_b.empty()) {
    const double bi = median(m.iowq_inline_b), bw = median(m.iowq_async_b);
    const double ai = median(m.iowq_inline_a), aw = median(m.iowq_async_a);
    const double locks = kIowqSpinSectionsPerItem * sp;
    // 6.x frees each request through the submitter's task_work (io_free_req): one item added and
    // run per NOP, charged by the task_work entries derived above.
    const double free_tw = e.value("tw_add_cycles") + e.value("tw_run_cycles");
    const double item = e.cyc(bw - bi) - locks - free_tw;
    const std::string batches = fmt::format(
        "NOP batches (n = 1..32) fitted as T(n) = a + b n, the submitter and its one io-wq worker "
        "(IORING_REGISTER_IOWQ_MAX_WORKERS 1) pinned to one CPU: b = {:.1f} ns with IOSQE_ASYNC, "
        "{:.1f} ns inline; the difference, {:.1f} ns = {:.0f} cycles per item, less {} spin_lock_fast "
        "sections or atomics ({:.0f}) and the task_work item that frees the request (tw_add + tw_run, "
        "{:.0f}) is the io-wq work per item, {:.0f} cycles (the intercepts, {:.0f} ns vs {:.0f} ns, hold "
        "the two hand-offs, a wake-up and a switch each way, charged by the wake-up entries)",
        bw, bi, bw - bi, e.cyc(bw - bi), kIowqSpinSectionsPerItem, locks, free_tw, item, aw, ai);
    const auto per_item = scaled(minus(m.iowq_async_b, m.iowq_inline_b), G);
    if (m.iowq_queued_unavailable.empty() && !m.iowq_queued_b.empty()) {
      // Who pays decides who waits: the submitter's part (io_queue_iowq's prep and io_wq_enqueue)
      // measured on its own, the worker's the rest of the batches' per-item difference.
      const double bq = median(m.iowq_queued_b);
      const double submit = e.value("sqe_submit_cycles");
      const double queue = e.cyc(bq) - submit - kIowqQueuedSpinSections * sp;
      const double queued = std::max(0.0, queue);  // what a clamped share leaves the submitter
      e.share({"iowq_prep_cycles", "iowq_enqueue_cycles"}, queue,
              fmt::format("IOSQE_ASYNC NOPs submitted (not waited for) while the ring's one bound io-wq "
                          "worker, on the same CPU, is held in an fsync, so they queue behind it and "
                          "nobody is woken or created, fitted as a + b n over n = 1..32 ({} samples, {} "
                          "dropped because a CQE came during the submit): b = {:.1f} ns = {:.0f} cycles "
                          "per NOP, less sqe_submit ({:.0f}) and {} spin_lock_fast sections (acct->lock "
                          "at the enqueue, acct->workers_lock at the creation attempt: {:.0f}) is the "
                          "submitter's queueing per item, {:.0f} cycles",
                          m.iowq_queued_kept, m.iowq_queued_dropped, bq, e.cyc(bq), submit,
                          kIowqQueuedSpinSections, kIowqQueuedSpinSections * sp, queue),
              scaled(m.iowq_queued_b, G));
      // A send queued the same way also allocates its async header: io-wq never gives it back to
      // the ring's cache, so each send's prep misses it (as every IOSQE_ASYNC send or recv does).
      if (!m.iowq_queued_send_b.empty()) {
        const double bs = median(m.iowq_queued_send_b);
        const auto per_send = scaled(minus(m.iowq_queued_send_b, m.iowq_queued_b), G);
        e.put("net_msg_alloc_cycles", median(per_send),
              fmt::format("IOSQE_ASYNC sends of 1 byte on a loopback TCP connection, queued the same way "
                          "in the same rounds (alternating with the NOPs): b = {:.1f} ns per send, "
                          "against {:.1f} ns per NOP; the difference per round, median {:.0f} cycles, is "
                          "a send's prep whose async header is not in the ring's cache (io-wq, which "
                          "runs the sends, does not put it back): io_msg_alloc_async's kmalloc, the "
                          "header's setup and the buffer's import",
                          bs, bq, median(per_send)),
              per_send);
      } else {
        e.keep("net_msg_alloc_cycles", why_not("no queued sends were measured"));
      }
      e.share({"iowq_get_work_cycles", "iowq_work_overhead_cycles"}, item - queued,
              fmt::format("{}, less the submitter's queueing measured apart (iowq_prep_cycles + "
                          "iowq_enqueue_cycles, {:.0f}): the worker's part, {:.0f} cycles",
                          batches, queued, item - queued),
              per_item);
    } else {
      e.keep("net_msg_alloc_cycles", why_not(m.iowq_queued_unavailable.empty() ? "the queued part did not run"
                                                                               : m.iowq_queued_unavailable));
      e.share(
          {"iowq_prep_cycles", "iowq_enqueue_cycles", "iowq_get_work_cycles", "iowq_work_overhead_cycles"},
          item,
          m.iowq_queued_unavailable.empty()
              ? batches
              : fmt::format("{}; the submitter's part alone was not measured ({})", batches,
                            m.iowq_queued_unavailable),
          per_item);
    }
    // The intercepts' difference holds two same-CPU hand-offs: a check on the futex ping-pong's
    // switch, which the model charges to every switch.
    const double handoffs = 2 * (e.value("context_switch_cycles") + e.value("wake_local_cycles")) / G;
    if (handoffs > aw - ai)
      e.remark(
          "context_switch_cycles",
          fmt::format("; cross-check: the io-wq NOP batches' two same-CPU hand-offs (a wake-up and a "
                      "switch each way) took {:.0f} ns in all (intercepts {:.0f} ns with IOSQE_ASYNC, "
                      "{:.0f} ns inline), less than two of these switches and local wake-ups ({:.0f} ns): "
                      "the futex ping-pong ran slower than io_uring's own waits here, and the model's "
                      "switches cost more than the NOP's",
                      aw - ai, aw, ai, handoffs));
  } else {
    for (const char* key : {"iowq_prep_cycles", "iowq_enqueue_cycles", "iowq_get_work_cycles",
                            "iowq_work_overhead_cycles", "net_msg_alloc_cycles"})
      e.keep(key, why_not(m.iowq_unavailable));
  }

  e.keep_the_rest();
  return c;
}

}  // namespace uringsim::host::calib
