#include "sim/cpu_sched.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <optional>
#include <stdexcept>

#include "sim/lock.hpp"
#include "sim/thread.hpp"

namespace uringsim::sim {
namespace {

using Rq = FairPolicy::Rq;

// vruntime advances by delta scaled to nice 0 (calc_delta_fair).
double vdelta(TimeNs delta, const SchedEntity& se) {
  return delta * 1024.0 / se.weight;
}

// CFS, as in 5.15 (kernel/sched/fair.c): the smallest vruntime runs; a waking sleeper is placed
// at most half a latency period behind min_vruntime (GENTLE_FAIR_SLEEPERS) and preempts when the
// running thread is ahead of it by more than the wake-up granularity; at a tick the running
// thread is preempted once it has had its share of the period (check_preempt_tick).
class Cfs final : public FairPolicy {
 public:
  Cfs(TimeNs latency, TimeNs min_gran, TimeNs wakeup_gran)
      : latency_(latency), min_gran_(min_gran), wakeup_gran_(wakeup_gran) {}
  const char* name() const override { return "cfs"; }

  void update_curr(Rq& rq, Thread& curr, TimeNs delta) override {
    auto& se = curr.sched();
    se.vruntime += vdelta(delta, se);
    se.slice_exec += delta;
    update_min(rq);
  }
  void place(Rq& rq, Thread& t, bool initial) override {
    auto& se = t.sched();
    update_min(rq);
    if (initial) {  // START_DEBIT: a new thread starts one slice behind
      se.vruntime = rq.min_vruntime + vdelta(slice(rq, t, 1), se);
    } else {
      se.vruntime = std::max(se.vruntime, rq.min_vruntime - latency_ / 2);
    }
  }
  void dequeue(Rq& rq, Thread&) override { update_min(rq); }
  Thread* pick(Rq& rq, Thread* curr) override {
    Thread* best = curr;
    for (Thread* t : rq.queued)
      if (!best || t->sched().vruntime < best->sched().vruntime) best = t;
    return best;
  }
  void set_next(Rq&, Thread& t) override { t.sched().slice_exec = 0; }
  bool wakeup_preempt(Rq&, Thread& curr, Thread& wakee) override {
    const double vdiff = curr.sched().vruntime - wakee.sched().vruntime;
    return vdiff > vdelta(wakeup_gran_, wakee.sched());
  }
  bool tick_preempt(Rq& rq, Thread& curr) override {
    const auto& se = curr.sched();
    const TimeNs ideal = slice(rq, curr, 0);
    if (se.slice_exec > ideal) return true;
    if (se.slice_exec < min_gran_) return false;
    Thread* left = nullptr;
    for (Thread* t : rq.queued)
      if (!left || t->sched().vruntime < left->sched().vruntime) left = t;
    return left && se.vruntime - left->sched().vruntime > ideal;
  }

 private:
  // sched_slice: the thread's weighted share of the period (extra: threads about to join).
  TimeNs slice(const Rq& rq, const Thread& t, int extra) const {
    double total = t.sched().weight;
    std::size_t n = 1 + static_cast<std::size_t>(extra);
    for (const Thread* q : rq.queued)
      if (q != &t) total += q->sched().weight, ++n;
    if (rq.curr && rq.curr != &t) total += rq.curr->sched().weight, ++n;
    const TimeNs period = n > 8 ? static_cast<double>(n) * min_gran_ : latency_;
    return period * t.sched().weight / total;
  }
  void update_min(Rq& rq) const {
    double m = std::numeric_limits<double>::infinity();
    if (rq.curr) m = rq.curr->sched().vruntime;
    for (const Thread* t : rq.queued) m = std::min(m, t->sched().vruntime);
    if (std::isfinite(m)) rq.min_vruntime = std::max(rq.min_vruntime, m);
  }
  TimeNs latency_, min_gran_, wakeup_gran_;
};

// EEVDF, as in 6.6+ (kernel/sched/fair.c): among the eligible threads (virtual runtime not ahead
// of the queue's weighted average V) the earliest virtual deadline runs; a deadline is one slice
// ahead of the thread's vruntime, renewed when reached. RUN_TO_PARITY: a thread keeps its CPU
// until its deadline is renewed. Lag (V - vruntime) is kept across a sleep (PLACE_LAG) and a new
// thread gets half a slice (PLACE_DEADLINE_INITIAL). DELAY_DEQUEUE (6.12): a thread that sleeps
// while not eligible stays in the queue, still counted in V, until it would be picked (then it
// leaves with its lag cut to 0, DELAY_ZERO) or it is woken there (requeue_delayed_entity).
class Eevdf final : public FairPolicy {
 public:
  Eevdf(TimeNs slice, TimeNs tick) : slice_(slice), tick_(tick) {}
  const char* name() const override { return "eevdf"; }

  void update_curr(Rq& rq, Thread& curr, TimeNs delta) override {
    auto& se = curr.sched();
    se.vruntime += vdelta(delta, se);
    if (se.vruntime >= se.deadline) {  // update_deadline
      se.deadline = se.vruntime + vdelta(slice_, se);
      se.protect = false;
    }
    rq.avg_vruntime = avg(rq);
  }
  void place(Rq& rq, Thread& t, bool initial) override {
    auto& se = t.sched();
    const double v = avg(rq);
    double lag = initial ? 0 : se.vlag;
    const double load = total_weight(rq);
    if (load > 0) lag *= (load + se.weight) / load;  // keep the lag after V moves by our weight
    se.vruntime = v - lag;
    se.deadline = se.vruntime + vdelta(initial ? slice_ / 2 : slice_, se);
    se.protect = false;
  }
  void dequeue(Rq& rq, Thread& t) override {
    auto& se = t.sched();
    se.vlag = lag(rq, t);
  }
  bool delay_dequeue(Rq& rq, Thread& t) override {
    return t.sched().vruntime > avg_with(rq, &t) + kEps;  // !entity_eligible
  }
  void finish_delayed(Rq& rq, Thread& t) override {
    auto& se = t.sched();
    se.vlag = std::min(lag(rq, t), 0.0);
  }
  void requeue_delayed(Rq& rq, Thread& t) override {
    auto& se = t.sched();
    // DELAY_ZERO: it paid more than its debt while delayed; requeue_delayed_entity takes it out
    // of the tree before place_entity, so it lands at V of the others (with only the running
    // thread left, at that thread's vruntime: that one stays eligible and keeps its slice).
    if (lag(rq, t) > 0) {
      se.vruntime = avg_without(rq, t);
      se.deadline = se.vruntime + vdelta(slice_, se);
    }
    se.protect = false;
  }
  Thread* pick(Rq& rq, Thread* curr) override {
    const double v = avg_with(rq, curr);
    if (curr && curr->sched().protect && curr->sched().vruntime <= v + kEps) return curr;
    Thread* best = nullptr;
    Thread* earliest = nullptr;  // if nobody is eligible (rounding), the earliest deadline
    // Deadlines closer than kEps are a tie (float rounding): the thread considered first wins.
    auto consider = [&](Thread* t) {
      const auto& se = t->sched();
      if (!earliest || se.deadline < earliest->sched().deadline - kEps) earliest = t;
      if (se.vruntime <= v + kEps && (!best || se.deadline < best->sched().deadline - kEps)) best = t;
    };
    // pick_eevdf: the earliest deadline in the queue; the running thread only if strictly earlier.
    for (Thread* t : rq.queued) consider(t);
    for (Thread* t : rq.delayed) consider(t);
    if (curr) consider(curr);
    return best ? best : earliest;
  }
  void set_next(Rq&, Thread& t) override { t.sched().protect = true; }
  bool wakeup_preempt(Rq& rq, Thread& curr, Thread& wakee) override { return pick(rq, &curr) == &wakee; }
  // update_curr at a tick: a thread inside its protected slice is not rescheduled, eligible or
  // not (only a wake-up's pick drops an ineligible one's protection); past it, the pick decides.
  bool tick_preempt(Rq& rq, Thread& curr) override {
    return !curr.sched().protect && pick(rq, &curr) != &curr;
  }

 private:
  static constexpr double kEps = 1e-3;  // ns of virtual time
  static double total_weight(const Rq& rq) {
    double w = rq.curr ? rq.curr->sched().weight : 0;
    for (const Thread* t : rq.queued) w += t->sched().weight;
    for (const Thread* t : rq.delayed) w += t->sched().weight;
    return w;
  }
  // update_entity_lag: V - vruntime, clamped to a slice or a tick's worth either way.
  double lag(Rq& rq, Thread& t) {
    const auto& se = t.sched();
    const double limit = vdelta(std::max(2 * slice_, tick_), se);
    return std::clamp(avg_with(rq, &t) - se.vruntime, -limit, limit);
  }
  // Weighted vruntime sums over the current thread and the queue (the tree and curr of
  // avg_vruntime), leaving out `skip`.
  static void sums(const Rq& rq, const Thread* skip, double& w, double& wv) {
    auto add = [&](const Thread* t) {
      if (t == skip) return;
      w += t->sched().weight;
      wv += t->sched().weight * t->sched().vruntime;
    };
    if (rq.curr) add(rq.curr);
    for (const Thread* t : rq.queued) add(t);
    for (const Thread* t : rq.delayed) add(t);
  }
  // V over the queue and the current thread (avg_vruntime); with `extra` counted once.
  double avg_with(Rq& rq, const Thread* extra) {
    double w = 0, wv = 0;
    sums(rq, nullptr, w, wv);
    if (extra && extra != rq.curr &&
        std::find(rq.queued.begin(), rq.queued.end(), extra) == rq.queued.end() &&
        std::find(rq.delayed.begin(), rq.delayed.end(), extra) == rq.delayed.end()) {
      w += extra->sched().weight;
      wv += extra->sched().weight * extra->sched().vruntime;
    }
    if (w > 0) rq.avg_vruntime = wv / w;
    return rq.avg_vruntime;
  }
  double avg(Rq& rq) { return avg_with(rq, nullptr); }
  // V over everything on the CPU but `t` (avg_vruntime once `t` has left the tree).
  double avg_without(Rq& rq, const Thread& t) {
    double w = 0, wv = 0;
    sums(rq, &t, w, wv);
    return w > 0 ? wv / w : avg(rq);
  }
  TimeNs slice_, tick_;
};

}  // namespace

double nice_to_weight(int nice) {
  static constexpr std::array<int, 40> w = {
      88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
      3906,  3121,  2501,  1991,  1586,  1277,  1024,  820,   655,   526,   423,  335,  272,  215,
      172,   137,   110,   87,    70,    56,    45,    36,    29,    23,    18,   15};
  if (nice < -20 || nice > 19) throw std::invalid_argument("nice outside -20..19");
  return w[static_cast<std::size_t>(nice + 20)];
}

CpuScheduler::CpuScheduler(int cpus, const SchedSpec& spec, const PrimitiveCosts& costs, double ghz)
    : spec_(spec),
      costs_(costs),
      ipi_receive_ns_(ghz > 0 ? costs.ipi_receive_cycles / ghz : 0),
      rqs_(static_cast<std::size_t>(cpus)),
      idle_since_(static_cast<std::size_t>(cpus), 0),
      ipi_pending_until_(static_cast<std::size_t>(cpus), -1),
      util_(static_cast<std::size_t>(cpus)),
      load_(static_cast<std::size_t>(cpus)),
      last_balance_(static_cast<std::size_t>(cpus), 0),
      nr_idle_scan_(cpus) {
  if (spec.hz <= 0) throw std::invalid_argument("scheduler: hz must be > 0");
  tick_ns_ = 1e9 / spec.hz;
  // SCHED_TUNABLESCALING_LOG: the granularities grow with 1 + log2 of the CPU count, up to 8 CPUs.
  const int n = std::min(cpus, 8);
  const double factor = 1 + std::floor(std::log2(static_cast<double>(n)));
  slice_ns_ = spec.base_slice_ns * factor;
  if (spec.policy == SchedPolicy::Cfs)
    policy_ = std::make_unique<Cfs>(spec.latency_ns * factor, slice_ns_, spec.wakeup_gran_ns * factor);
  else
    policy_ = std::make_unique<Eevdf>(slice_ns_, tick_ns_);
}

CpuScheduler::~CpuScheduler() = default;

const char* CpuScheduler::policy_name() const {
  return policy_->name();
}

TimeNs CpuScheduler::next_tick_ns(TimeNs now) const {
  return (std::floor(now / tick_ns_ + 1e-9) + 1) * tick_ns_;
}

std::string CpuScheduler::dump() const {
  std::string out;
  for (std::size_t c = 0; c < rqs_.size(); ++c) {
    const auto& q = rqs_[c];
    if (!q.curr && q.queued.empty()) continue;
    out += "cpu" + std::to_string(c) + ": curr=" +
           (q.curr ? q.curr->name() + "(" + std::to_string(static_cast<int>(q.curr->state())) + ")" : "-");
    if (q.curr && q.curr->waiting_lock()) {
      const auto* l = q.curr->waiting_lock();
      out += " waits " + l->name();
      if (l->owner())
        out += " held by " + l->owner()->name() + " on_cpu=" + std::to_string(l->owner()->sched().on_cpu) +
               " queued=" + std::to_string(l->owner()->sched().queued) +
               " state=" + std::to_string(static_cast<int>(l->owner()->state())) +
               " cpu=" + std::to_string(l->owner()->cpu());
    }
    out += " queued=";
    for (const Thread* t : q.queued) out += t->name() + " ";
    if (!q.delayed.empty()) out += " delayed=";
    for (const Thread* t : q.delayed) out += t->name() + " ";
    out += "\n";
  }
  return out;
}

TimeNs SchedSpec::idle_exit_after(TimeNs idle_for) const {
  if (idle_exit_curve.empty()) return idle_for > halt_poll_ns ? idle_exit_ns : 0;
  const auto& c = idle_exit_curve;
  if (idle_for <= c.front().first) return c.front().second;
  if (idle_for >= c.back().first) return c.back().second;
  const auto hi =
      std::upper_bound(c.begin(), c.end(), idle_for, [](TimeNs t, const auto& p) { return t < p.first; });
  const auto lo = hi - 1;
  const double f = (idle_for - lo->first) / (hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

bool CpuScheduler::idle(int cpu) const {
  const auto& q = rqs_[static_cast<std::size_t>(cpu)];
  return !q.curr && q.queued.empty();
}

bool CpuScheduler::wake_needs_ipi(Thread& t, int cpu, TimeNs now) {
  Rq& q = rq(cpu);
  // An idle CPU takes an IPI. One that polls TIF_NEED_RESCHED (cpuidle's poll state, a guest's
  // guest_halt_poll_ns) would not, but the machine says only how the wake-up's delay grows with
  // the idle time (halt_poll_ns, idle_exit_ns), not who polls: the model does not tell them apart.
  if (!q.curr) return true;
  // resched_curr sends none when the running thread's TIF_NEED_RESCHED is set already.
  if (q.curr->resched_pending()) return false;
  // Busy: the IPI is resched_curr's, sent only if `t` would preempt. Tried on a copy of the
  // state: `t` placed and queued as enqueue() would, or requeued where it is delayed as
  // requeue_delayed() would (before the running thread's update), then everything put back.
  auto& se = t.sched();
  Thread& curr = *q.curr;
  const bool in_place = se.delayed && std::find(q.delayed.begin(), q.delayed.end(), &t) != q.delayed.end();
  update_clock(q, now);
  const SchedEntity saved = se;
  // The real requeue must still find the running thread's vruntime as its last update left it.
  std::optional<SchedEntity> saved_curr;
  const double min_v = q.min_vruntime, avg_v = q.avg_vruntime;
  if (in_place) {
    saved_curr = curr.sched();
    requeue_then_update(q, t, now);
  } else {
    update_vruntime(q, now);
    policy_->place(q, t, false);
    q.queued.push_back(&t);
  }
  const bool preempts = policy_->wakeup_preempt(q, curr, t);
  if (!in_place) q.queued.pop_back();
  se = saved;
  if (saved_curr) curr.sched() = *saved_curr;
  q.min_vruntime = min_v;
  q.avg_vruntime = avg_v;
  return preempts;
}

void CpuScheduler::account_curr(Rq& q, TimeNs now) {
  update_clock(q, now);
  update_vruntime(q, now);
}

void CpuScheduler::update_vruntime(Rq& q, TimeNs now) {
  Thread* c = q.curr;
  if (!c) return;
  auto& se = c->sched();
  // Picked but not yet running (an idle CPU's exit, or its switch not yet simulated): in the
  // kernel it is not the CPU's current entity until its schedule() sets exec_start.
  if (se.runnable_since >= 0) return;
  const TimeNs delta = now - se.exec_start;
  if (delta > 0) {
    policy_->update_curr(q, *c, delta);
    se.exec_start = now;
  }
}

// update_rq_clock, then update_curr's sum_exec_runtime: the running thread is charged up to now.
void CpuScheduler::update_clock(Rq& q, TimeNs now) {
  q.clock = std::max(q.clock, now);
  if (!q.curr) return;
  auto& se = q.curr->sched();
  if (now <= se.acct_start) return;  // still being switched in after an idle wake-up
  charge_accounted(*q.curr, se.acct_start, now);
  se.acct_start = now;
}

// __schedule's clock update, which a wake-up that preempted has asked to skip (wakeup_preempt:
// rq_clock_skip_update, "we're going to schedule" at once). When the switch comes later (the
// reschedule IPI's delivery, a section without preemption), the clock stays at its last update:
// the preempted thread is not charged for the time since, and the picked thread is charged from
// then (set_next_entity's exec_start). The same clock drives update_curr's vruntime, so the
// picked thread's vruntime takes that time too, and with it its lag (what /proc shows, and the
// twin's host side reads, moves alike).
void CpuScheduler::schedule_clock(Rq& q, TimeNs now) {
  const bool skip = q.clock_skip;
  q.clock_skip = false;
  q.clock_skipped = skip;
  if (skip)
    update_vruntime(q, q.clock);
  else
    account_curr(q, now);
}

void CpuScheduler::charge_accounted(Thread& t, TimeNs from, TimeNs to) {
  const TimeNs a = std::max(from, window_start_), b = std::min(to, window_end_);
  if (b > a) t.sched().acct_window_ns += b - a;
}

void CpuScheduler::set_window(TimeNs start_ns, TimeNs end_ns) {
  window_start_ = start_ns;
  window_end_ = end_ns;
}

TimeNs CpuScheduler::accounted_ns(const Thread& t) const {
  const auto& se = t.sched();
  TimeNs ns = se.acct_window_ns;
  if (se.on_cpu) {  // reading schedstat updates the clock first
    const TimeNs a = std::max(se.acct_start, window_start_);
    if (window_end_ > a) ns += window_end_ - a;
  }
  return ns;
}

// select_task_rq_fair, reduced to the single cache domain of these machines. want_affine (`affine`:
// not wake_wide) lets the waker's CPU be chosen: the previous CPU if it is idle, else the waker's
// CPU if that is idle (wake_affine_idle). Otherwise the target is the waker's CPU for an affine
// sync wake-up from a waker that runs alone there (wake_affine_idle: it will sleep and leave its
// CPU to the wakee; delayed threads do not count: cfs_h_nr_delayed, 2025), else the previous CPU;
// select_idle_sibling then takes the CPU the thread used before its previous one if that is idle
// (recent_used_cpu: not bounded by SIS_UTIL, so a thread that balancing moved can go back), else
// any idle CPU its scan reaches (from the previous CPU), else the target. When neither CPU is
// idle and the sync rule does not apply, the target is chosen by load (wake_affine_weight).
// `busy`: a CPU that counts as busy although it has nothing to run now (-1: none); when it is the
// waker's, the waker left it at this date. A machine that packs wake-ups (wake_pack_util) first
// keeps the wakee with its waker while their CPU has room.
int CpuScheduler::select_cpu(const Thread& t, const Thread* waker, int waker_cpu, bool affine, int busy,
                             Wake how, TimeNs now, bool* reached_recent) const {
  const int prev = t.cpu();
  if (t.sched().pinned) return prev;
  if (packs_on_waker(t, waker_cpu, now)) return waker_cpu;
  auto free = [&](int c) { return c != busy && idle(c); };
  if (free(prev)) return prev;
  if (!affine) waker_cpu = -1;
  if (waker_cpu >= 0 && waker_cpu != prev && free(waker_cpu)) return waker_cpu;
  int target = prev;
  if (waker_cpu >= 0 && waker_cpu != prev) {
    const Rq& w = rqs_[static_cast<std::size_t>(waker_cpu)];
    const bool sync = how == Wake::Sync;
    if (sync && w.queued.empty() && (w.curr || waker_cpu == busy))
      target = waker_cpu;
    else if (affine_by_load(t, waker, waker_cpu, prev, sync, now))
      target = waker_cpu;
  }
  if (reached_recent) *reached_recent = true;
  const int recent = t.sched().recent_used_cpu;
  if (recent >= 0 && recent != prev && recent != target && free(recent)) return recent;
  const int n = static_cast<int>(rqs_.size());
  const int scan = spec_.sis_util ? nr_idle_scan_ : n - 1;  // select_idle_cpu's nr
  for (int k = 1; k < n && k <= scan; ++k) {
    const int c = (prev + k) % n;
    if (free(c)) return c;
  }
  return target;
}

// Wake-up packing (SchedSpec::wake_pack_util): not upstream's select_task_rq_fair, which takes an
// idle CPU over a busy waker's, but what `uringsim calibrate` finds on some VM kernels (this
// project's 2-vCPU guests: `kernel.sched_vcpu_pack`, in no public source), where a wakee stays on,
// or goes to, its waker's vCPU while that one is busy less than about 70 % of the time, whichever
// CPU it last ran on and whether the other is idle. Its utilization is PELT's util_avg read at the
// wake, less the wakee's own share when the wakee last ran there (cpu_util_without), plus the
// wakee's (its runnable average brought to now).
bool CpuScheduler::packs_on_waker(const Thread& t, int waker_cpu, TimeNs now) const {
  if (!(spec_.wake_pack_util > 0) || waker_cpu < 0 || waker_cpu >= static_cast<int>(rqs_.size()))
    return false;
  double util = util_at(waker_cpu, now);
  const double own = runnable_avg_at(t.sched(), now);
  if (t.cpu() == waker_cpu) util = std::max(0.0, util - own);
  return util + own < spec_.wake_pack_util;
}

// wake_affine_weight: the waker's CPU if the wakee's load added there leaves it lighter than the
// previous CPU without the wakee, the previous CPU favoured by half the domain's imbalance_pct
// (WA_BIAS); a sync waker's own load counts as gone from its CPU, and if it is more than that
// CPU's whole load the wakee comes along. The CPUs' loads are read at `now` (the kernel's are
// updated at every tick and enqueue on a busy CPU); the wakee's is the one it went to sleep with
// (select_task_rq_fair does not bring it up to date). Both CPUs have the same capacity here.
bool CpuScheduler::affine_by_load(const Thread& t, const Thread* waker, int this_cpu, int prev, bool sync,
                                  TimeNs now) const {
  double this_load = load_at(this_cpu, now);
  if (sync && waker) {
    const double current_load = waker->sched().weight * runnable_avg_at(waker->sched(), now);
    if (current_load > this_load) return true;
    this_load -= current_load;
  }
  const double task_load = t.sched().weight * t.sched().runnable_avg;
  const double this_eff = (this_load + task_load) * 100;
  double prev_eff = (load_at(prev, now) - task_load) * (100 + std::floor((spec_.imbalance_pct - 100) / 2));
  if (sync) prev_eff += 1;  // a tie lets select_idle_sibling stack the wakee on the waker
  return this_eff < prev_eff;
}

// record_wakee: a waker that wakes another thread than the last one flips; its count halves at
// most once a second (HZ jiffies, taken here in ns).
void CpuScheduler::record_wakee(Thread& waker, const Thread& t, TimeNs now) {
  constexpr TimeNs kFlipDecayNs = 1e9;
  auto& w = waker.sched();
  if (now > w.wakee_flip_decay_ts + kFlipDecayNs) {
    w.wakee_flips >>= 1;
    w.wakee_flip_decay_ts = now;
  }
  if (w.last_wakee != &t) {
    w.last_wakee = &t;
    ++w.wakee_flips;
  }
}

// wake_wide: the waker and wakee are in a one-to-many relation (one flips at least llc_size
// times as often as the other, which flips at least llc_size times): the wakee is not pulled to
// the waker's CPU. The cache domain here is the whole machine.
bool CpuScheduler::wake_wide(unsigned waker_flips, const Thread& t) const {
  const unsigned factor = static_cast<unsigned>(rqs_.size());
  unsigned master = waker_flips, slave = t.sched().wakee_flips;
  if (master < slave) std::swap(master, slave);
  return !(slave < factor || master < slave * factor);
}

int CpuScheduler::wake_target(const Thread& t, const Thread& waker, Wake how, TimeNs now) const {
  const auto& w = waker.sched();
  const unsigned flips = w.wakee_flips + (w.last_wakee != &t ? 1 : 0);  // as record_wakee leaves it
  return select_cpu(t, &waker, waker.cpu(), !wake_wide(flips, t), -1, how, now);
}

void CpuScheduler::start(Thread& t, TimeNs now, bool at_setup) {
  t.sched().recent_used_cpu = t.cpu();  // wake_up_new_task
  enqueue(t, t.cpu(), true, now, true, at_setup);
}

void CpuScheduler::wake(Thread& t, Thread* waker, int waker_cpu, TimeNs now, bool by_timer, Wake how) {
  if (t.sched().delayed) {
    // ttwu_runnable: a delayed thread that may run elsewhere, on a CPU with another thread to
    // run, leaves its queue and takes the full wake-up path (select_task_rq); otherwise it is
    // runnable again where it is.
    Rq& q = rq(t.cpu());
    if (t.sched().pinned || !q.curr) {
      count_wakeup(t, waker, waker_cpu, t.cpu(), by_timer);
      requeue_delayed(t, now, resched_of(waker_cpu, t.cpu(), by_timer));
      return;
    }
    account_curr(q, now);
    leave_delayed(q, t);
  }
  // The wake takes effect at the waker's local date, which may be the date its waker left its
  // CPU for a sleep; the two may be processed in either order. In the kernel try_to_wake_up ran
  // while the waker still ran there: placement sees that CPU busy, and a wakee put on it was
  // queued before the waker's schedule(), which switched to it without the CPU going idle.
  const bool waker_left_now = waker_cpu >= 0 && !rq(waker_cpu).curr && rq(waker_cpu).queued.empty() &&
                              idle_since_[static_cast<std::size_t>(waker_cpu)] == now;
  bool affine = true;
  if (waker && !t.sched().pinned) {  // select_task_rq_fair runs for threads that may move
    record_wakee(*waker, t, now);
    affine = !wake_wide(waker->sched().wakee_flips, t);
  }
  bool reached_recent = false;
  const int cpu =
      select_cpu(t, waker, waker_cpu, affine, waker_left_now ? waker_cpu : -1, how, now, &reached_recent);
  if (reached_recent) t.sched().recent_used_cpu = t.cpu();
  count_wakeup(t, waker, waker_cpu, cpu, by_timer);
  if (cpu != t.cpu()) migrated(t);
  enqueue(t, cpu, false, now, !by_timer, false, waker_left_now && cpu == waker_cpu,
          resched_of(waker_cpu, cpu, by_timer), waker && !by_timer && waker_cpu >= 0 && waker_cpu != cpu);
}

// Counted on the wakee by its waker's class and where it was put, as the kernel's sched_waking and
// sched_wakeup trace it; a timer's wake-up, or one from outside the machine, has no waking thread.
void CpuScheduler::count_wakeup(Thread& t, const Thread* waker, int waker_cpu, int cpu, bool by_timer) {
  if (!waker || by_timer || waker_cpu < 0) return;
  t.count(waker->woke_by_label(cpu == waker_cpu));
}

// A wake-up that preempts another CPU's thread reaches it by a reschedule IPI (resched_curr):
// until the IPI lands, that CPU does not see the request (x86 keeps need_resched folded in
// preempt_count, which scheduler_ipi sets). A wake from the CPU itself, or by its own timer, is
// seen at once; so is one from outside the machine (the model has no CPU to send it from).
Resched CpuScheduler::resched_of(int waker_cpu, int cpu, bool by_timer) const {
  if (by_timer || waker_cpu < 0 || waker_cpu == cpu) return {};
  return {true, costs_.ipi_delivery_ns};
}

// requeue_delayed_entity tests the lag (DELAY_ZERO) against the running thread's vruntime as its
// last update_curr left it: only the wake-up preemption check after it (check_preempt_wakeup_fair)
// brings that up to now. A thread delayed behind a running one may so come back behind the
// average, not at it.
void CpuScheduler::requeue_then_update(Rq& q, Thread& t, TimeNs now) {
  policy_->requeue_delayed(q, t);
  update_vruntime(q, now);
}

// A delayed thread is woken on the queue it never left: runnable again there, no placement on
// another CPU, then the usual wake-up preemption check.
void CpuScheduler::requeue_delayed(Thread& t, TimeNs now, Resched resched) {
  auto& se = t.sched();
  Rq& q = rq(t.cpu());
  update_clock(q, now);  // ttwu_runnable's update_rq_clock
  requeue_then_update(q, t, now);
  q.delayed.erase(std::find(q.delayed.begin(), q.delayed.end(), &t));
  se.delayed = false;
  se.runnable_since = now;
  set_runnable(t, true, now);
  if (!q.curr) throw std::logic_error("scheduler: " + t.name() + " delayed on an idle CPU");
  se.queued = true;
  q.queued.push_back(&t);
  check_preempt(q, t, now, resched);
}

Thread* CpuScheduler::pick_next(Rq& q) {
  for (;;) {
    Thread* next = policy_->pick(q, nullptr);
    if (!next) return nullptr;
    if (next->sched().delayed) {  // dequeue_entities(DEQUEUE_DELAYED), then pick again
      leave_delayed(q, *next);
      continue;
    }
    q.queued.erase(std::find(q.queued.begin(), q.queued.end(), next));
    next->sched().queued = false;
    return next;
  }
}

void CpuScheduler::leave_delayed(Rq& q, Thread& t) {
  policy_->finish_delayed(q, t);
  q.delayed.erase(std::find(q.delayed.begin(), q.delayed.end(), &t));
  t.sched().delayed = false;
}

// With only delayed threads left, pick_next_entity picks them one by one, in pick_eevdf's order
// (the eligible one with the earliest deadline first), and dequeues each: the first leaves with
// its lag (>= 0, cut to 0), the last alone, at the average.
void CpuScheduler::drop_delayed(Rq& q) {
  while (!q.delayed.empty()) {
    Thread* next = policy_->pick(q, nullptr);
    leave_delayed(q, next ? *next : *q.delayed.back());
  }
}

// wakeup_preempt: `t` just joined the queue of a CPU that runs `curr`.
void CpuScheduler::check_preempt(Rq& q, Thread& t, TimeNs now, Resched resched) {
  Thread& curr = *q.curr;
  if (policy_->wakeup_preempt(q, curr, t)) {
    ++preemptions_;
    q.clock_skip = true;
    // resched_curr finds TIF_NEED_RESCHED set already: the preemption asked first, and its IPI if
    // it sent one, switches the CPU.
    if (curr.resched_pending()) return;
    TimeNs delay = resched.delay;
    // The IPI's handler (on a VM the exits that deliver it) runs on that CPU before its
    // schedule(), on the time of the thread it interrupts, as a kick's does.
    if (resched.ipi && ipi_receive_ns_ > 0) delay += land_reschedule_ipi(curr.cpu(), now + delay);
    if (delay > 0)
      curr.request_resched_at(now + delay);
    else
      curr.request_resched();
  } else {
    curr.rq_changed();  // it now checks for preemption at ticks
  }
}

void CpuScheduler::enqueue(Thread& t, int cpu, bool initial, TimeNs now, bool ipi, bool at_setup,
                           bool waker_just_left, Resched resched, bool woken_remotely) {
  auto& se = t.sched();
  if (se.on_cpu || se.queued || se.delayed)
    throw std::logic_error("scheduler: " + t.name() + " enqueued twice");
  const bool migrated = se.last_cpu >= 0 && se.last_cpu != cpu;
  if (se.runnable_since < 0) se.runnable_since = now;  // a balance's move keeps its wait
  move_load(t, cpu, now);
  t.set_cpu(cpu);
  set_runnable(t, true, now);
  Rq& q = rq(cpu);
  account_curr(q, now);
  policy_->place(q, t, initial);
  if (!q.curr) {  // an idle CPU: wake it
    util_update(cpu, now);
    const TimeNs idle_for = now - idle_since_[static_cast<std::size_t>(cpu)];
    TimeNs delay = ipi ? costs_.wakeup_latency_ns : 0;
    delay += spec_.idle_exit_after(idle_for);
    q.curr = &t;
    se.on_cpu = true;
    se.acct_start = now + (waker_just_left ? 0 : delay);  // the idle CPU's schedule() picks it then
    policy_->set_next(q, t);
    if (at_setup) {  // already running when the scenario starts
      t.dispatch(0, false, 0);
      return;
    }
    if (waker_just_left) {  // picked by the waker's schedule(): a plain switch
      ++switches_;
      t.dispatch(0, true, migrated ? costs_.migrate_cycles : 0);
      return;
    }
    ++idle_wakeups_;
    ++switches_;
    t.dispatch(delay, true, migrated ? costs_.migrate_cycles : 0,
               woken_remotely ? costs_.remote_wakee_cycles : 0);
    return;
  }
  se.queued = true;
  q.queued.push_back(&t);
  check_preempt(q, t, now, resched);
}

void CpuScheduler::block(Thread& t, TimeNs now, bool exits) {
  const int cpu = t.cpu();
  Rq& q = rq(cpu);
  if (q.curr != &t) throw std::logic_error("scheduler: " + t.name() + " blocks but is not running");
  if (!exits) t.count(sym::switch_voluntary());  // __schedule counts prev's nvcsw
  set_runnable(t, false, now);
  schedule_clock(q, now);
  const bool delay = !exits && policy_->delay_dequeue(q, t);
  policy_->dequeue(q, t);
  t.stolen_ns_ = 0;  // no work of its own overlapped those handlers: nothing to delay
  t.sched().on_cpu = false;
  t.sched().last_cpu = cpu;
  util_update(cpu, now);
  q.curr = nullptr;
  if (delay) {
    t.sched().delayed = true;
    q.delayed.push_back(&t);
  }
  switch_next(cpu, &t, now);
  q.clock_skipped = false;  // the CPU went idle: nobody took the skipped clock's time
}

bool CpuScheduler::yield(Thread& t, TimeNs now) {
  const int cpu = t.cpu();
  Rq& q = rq(cpu);
  if (q.curr != &t) throw std::logic_error("scheduler: " + t.name() + " yields but is not running");
  schedule_clock(q, now);
  Thread* next = policy_->pick(q, &t);
  while (next && next->sched().delayed) {  // pick_next_entity drops a delayed pick, picks again
    leave_delayed(q, *next);
    next = policy_->pick(q, &t);
  }
  if (next == &t || !next) {  // nobody else should run: keep going
    // With the clock update skipped, the time since it stays to be charged to the same thread.
    if (!std::exchange(q.clock_skipped, false)) t.sched().exec_start = now;
    t.sched().acct_start = std::max(t.sched().acct_start, q.clock);
    return false;
  }
  ++preemptions_;
  t.count(sym::switch_involuntary());  // nivcsw: preempted, and another thread runs
  t.count(next->preempted_by_label());
  t.sched().on_cpu = false;
  t.sched().last_cpu = cpu;
  t.sched().queued = true;
  t.sched().runnable_since = now;
  util_update(cpu, now);
  q.curr = nullptr;
  q.queued.push_back(&t);
  q.queued.erase(std::find(q.queued.begin(), q.queued.end(), next));
  next->sched().queued = false;
  dispatch(cpu, *next, &t, now, 0);
  return true;
}

bool CpuScheduler::tick(Thread& t, TimeNs now) {
  Rq& q = rq(t.cpu());
  if (q.curr != &t) return false;
  account_curr(q, now);
  const bool preempt = !q.queued.empty() && policy_->tick_preempt(q, t);
  periodic_balance(t.cpu(), now, true);  // trigger_load_balance runs after task_tick
  idle_balance_kick(t.cpu(), now);
  return preempt && !q.queued.empty();
}

// `t` changes CPU: counted for the scheduler and for the thread (se.nr_migrations).
void CpuScheduler::migrated(Thread& t) {
  ++migrations_;
  t.count(sym::migrate());
}

// Balancing may move `t`: it is not pinned, and not cache-hot (task_hot: it last ran at least
// sysctl_sched_migration_cost ago; exec_start is when it last stopped running).
bool CpuScheduler::movable(const Thread& t, TimeNs now) const {
  return !t.sched().pinned && now - t.sched().exec_start >= spec_.migration_cost_ns;
}

// A busy CPU's tick, with a thread waiting in its queue and another CPU idle, kicks that CPU to
// balance (nohz_balancer_kick; sched_balance_rq as CPU_IDLE). It pulls an unpinned waiting thread
// that is not cache-hot; if all are hot the balance fails, and once it has failed more than
// cache_nice_tries times in a row it takes a hot one (can_migrate_task).
void CpuScheduler::idle_balance_kick(int busy_cpu, TimeNs now) {
  Rq& src = rq(busy_cpu);
  if (src.queued.empty()) return;
  int target = -1;
  for (int c = 0; c < static_cast<int>(rqs_.size()) && target < 0; ++c)
    if (c != busy_cpu && idle(c)) target = c;
  if (target < 0) return;
  periodic_balance(target, now, false);  // the kicked CPU balances as CPU_IDLE
  auto it =
      std::find_if(src.queued.begin(), src.queued.end(), [&](const Thread* t) { return movable(*t, now); });
  if (it == src.queued.end()) {  // only hot ones, if any may move at all
    it = std::find_if(src.queued.begin(), src.queued.end(),
                      [](const Thread* t) { return !t->sched().pinned; });
    if (it == src.queued.end()) return;
    if (balance_failed_ <= spec_.cache_nice_tries) {
      ++balance_failed_;
      return;
    }
  }
  balance_failed_ = 0;
  Thread& t = detach(busy_cpu, it);
  migrated(t);
  enqueue(t, target, false, now, true);  // the kick's IPI wakes the idle CPU, which runs it
}

// A waiting thread leaves `cpu`'s queue to move (detach_task): it keeps its lag for the new queue.
Thread& CpuScheduler::detach(int cpu, std::vector<Thread*>::iterator it) {
  Rq& src = rq(cpu);
  Thread& t = **it;
  src.queued.erase(it);
  t.sched().queued = false;
  policy_->dequeue(src, t);
  t.sched().last_cpu = cpu;
  return t;
}

void CpuScheduler::steal(int cpu, TimeNs now, TimeNs ns) {
  Thread* c = rq(cpu).curr;
  if (!c) return;
  if (c->state() == Thread::State::Spinning && c->waiting_lock_ && c->arrival_ns_ > now) {
    c->waiting_lock_->delay_arrival(*c, ns);           // queued ahead: its work up to the lock ends later
  } else if (c->state() == Thread::State::Spinning) {  // handlers on one CPU run one after another
    c->busy_wait_irq_ns_ += ns;
    c->irq_until_ns_ = std::max(c->irq_until_ns_, now) + ns;
  } else {  // working, or between two pieces of work (in a lock hand-off): the work to come
    c->stolen_ns_ += ns;
  }
}

void CpuScheduler::interrupt_current(int cpu, TimeNs now, TimeNs ns, Cycles cycles, Label symbol) {
  Thread* c = rq(cpu).curr;
  if (!c) return;
  steal(cpu, now, ns);
  c->account(cycles, symbol);
}

TimeNs CpuScheduler::land_reschedule_ipi(int cpu, TimeNs at) {
  interrupt_current(cpu, at, ipi_receive_ns_, costs_.ipi_receive_cycles, sym::reschedule_ipi());
  ipi_pending(cpu, at + ipi_receive_ns_);
  return ipi_receive_ns_;
}

void CpuScheduler::ipi_pending(int cpu, TimeNs until) {
  auto& u = ipi_pending_until_[static_cast<std::size_t>(cpu)];
  u = std::max(u, until);
}

void CpuScheduler::started_running(Thread& t, TimeNs now) {
  auto& se = t.sched();
  se.exec_start = se.exec_start_from >= 0 ? std::min(se.exec_start_from, now) : now;
  se.exec_start_from = -1;
  if (se.runnable_since >= 0) se.run_delay_ns += now - se.runnable_since;
  se.runnable_since = -1;
}

// The CPU's current thread left: the next one runs, or it pulls a waiting thread that is not
// cache-hot from a busy CPU (newidle balance), or it goes idle.
void CpuScheduler::switch_next(int cpu, Thread* prev, TimeNs now) {
  Rq& q = rq(cpu);
  if (!q.queued.empty()) {
    Thread* next = pick_next(q);
    dispatch(cpu, *next, prev, now, 0);
    return;
  }
  drop_delayed(q);  // picked one by one and dropped before the CPU goes idle
  if (Thread* pulled = pull_for(cpu, now)) {
    migrated(*pulled);
    const bool moved = pulled->sched().last_cpu >= 0 && pulled->sched().last_cpu != cpu;
    move_load(*pulled, cpu, now);
    pulled->set_cpu(cpu);
    policy_->place(q, *pulled, false);
    dispatch(cpu, *pulled, prev, now, moved ? costs_.migrate_cycles : 0);
    return;
  }
  idle_since_[static_cast<std::size_t>(cpu)] = now;
}

// An unpinned, cold thread waiting on the CPU with the most of them (ties: lowest CPU), FIFO.
Thread* CpuScheduler::pull_for(int cpu, TimeNs now) {
  int best = -1;
  std::size_t longest = 0;
  for (int c = 0; c < static_cast<int>(rqs_.size()); ++c) {
    if (c == cpu) continue;
    std::size_t n_movable = 0;
    for (const Thread* t : rqs_[static_cast<std::size_t>(c)].queued)
      if (movable(*t, now)) ++n_movable;
    if (n_movable > longest) longest = n_movable, best = c;
  }
  if (best < 0) return nullptr;
  Rq& src = rq(best);
  const auto it =
      std::find_if(src.queued.begin(), src.queued.end(), [&](const Thread* t) { return movable(*t, now); });
  return it == src.queued.end() ? nullptr : &detach(best, it);
}

void CpuScheduler::dispatch(int cpu, Thread& next, Thread* prev, TimeNs now, Cycles migrate_cycles) {
  Rq& q = rq(cpu);
  util_update(cpu, now);
  q.curr = &next;
  next.sched().on_cpu = true;
  next.sched().acct_start = q.clock;  // set_next_entity: charged from the rq clock's last update
  if (std::exchange(q.clock_skipped, false)) next.sched().exec_start_from = q.clock;
  policy_->set_next(q, next);
  const bool switched = prev != &next;
  if (switched) ++switches_;
  next.dispatch(0, switched, migrate_cycles);
}

// PELT's util_avg of a CPU, reduced to the time it has a thread on it: it halves every
// pelt_halflife_ns and grows toward full capacity while the CPU runs; continuous here. Called just
// before the CPU's current thread changes between none and one.
void CpuScheduler::util_update(int cpu, TimeNs now) {
  Util& u = util_[static_cast<std::size_t>(cpu)];
  if (now <= u.at) return;  // a date already integrated (threads act at their own local dates)
  u.avg = util_at(cpu, now);
  u.at = now;
}

// Periodic balancing of the one cache domain on `cpu` (sched_balance_domains), due every
// balance_interval (sd_weight ms), times busy_factor on a busy CPU. What it changes here is
// the idle scan's length, from the domain's summed utilization (update_idle_cpu_scan): with x the
// utilization per CPU as a fraction of capacity, nr = llc_weight * (1 - (x * imbalance_pct/100)^2),
// rounded down, 0 from x = 100/117 on; on 2 CPUs, 0 from x = 0.61.
void CpuScheduler::periodic_balance(int cpu, TimeNs now, bool busy) {
  const int n = static_cast<int>(rqs_.size());
  const TimeNs interval =
      std::max(tick_ns_, spec_.balance_interval_ns_per_cpu * n * (busy ? spec_.busy_factor : 1));
  TimeNs& last = last_balance_[static_cast<std::size_t>(cpu)];
  if (now - last < interval) return;
  last = now;
  if (busy) busy_balance(cpu, now);
  if (!spec_.sis_util) return;
  double sum = 0;
  for (int c = 0; c < n; ++c) {
    util_update(c, now);
    sum += std::min(1.0, util_[static_cast<std::size_t>(c)].avg);  // cpu_util_cfs: capped at capacity
  }
  const double x = sum / n * spec_.imbalance_pct / 100;
  nr_idle_scan_ = static_cast<int>(std::floor(n * (1 - std::min(1.0, x * x))));
}

// PELT's geometric average `avg` carried `dt` ns forward while what it averages stood at `level`
// (busy or not, runnable or not, the runnable weight); unchanged for dt <= 0.
double CpuScheduler::pelt_toward(double avg, double level, TimeNs dt) const {
  if (dt <= 0) return avg;
  const double keep = std::exp(-dt / (spec_.pelt_halflife_ns / std::numbers::ln2));
  return avg * keep + level * (1 - keep);
}

// Dates may come out of order (threads act at their own local dates): an earlier one counts as
// the last one integrated.
void CpuScheduler::load_decay(int cpu, TimeNs now) {
  Load& l = load_[static_cast<std::size_t>(cpu)];
  if (now <= l.at) return;
  l.avg = load_at(cpu, now);
  l.at = now;
}

double CpuScheduler::util_at(int cpu, TimeNs now) const {
  const Util& u = util_[static_cast<std::size_t>(cpu)];
  return pelt_toward(u.avg, rqs_[static_cast<std::size_t>(cpu)].curr ? 1 : 0, now - u.at);
}

double CpuScheduler::runnable_avg_at(const SchedEntity& se, TimeNs now) const {
  return pelt_toward(se.runnable_avg, se.runnable ? 1 : 0, now - se.runnable_at);
}

void CpuScheduler::thread_load_decay(SchedEntity& se, TimeNs now) const {
  if (now <= se.runnable_at) return;
  se.runnable_avg = runnable_avg_at(se, now);
  se.runnable_at = now;
}

void CpuScheduler::set_runnable(Thread& t, bool runnable, TimeNs now) {
  auto& se = t.sched();
  if (se.runnable == runnable || t.cpu() < 0 || t.cpu() >= static_cast<int>(load_.size())) return;
  load_decay(t.cpu(), now);
  thread_load_decay(se, now);
  load_[static_cast<std::size_t>(t.cpu())].runnable_weight += runnable ? se.weight : -se.weight;
  se.runnable = runnable;
}

// migrate_task_rq_fair / detach_entity_load_avg: a thread that changes CPU takes its load along.
void CpuScheduler::move_load(Thread& t, int to, TimeNs now) {
  const int from = t.cpu();
  if (from == to || from < 0 || from >= static_cast<int>(load_.size())) return;
  auto& se = t.sched();
  load_decay(from, now);
  load_decay(to, now);
  thread_load_decay(se, now);
  const double mine = se.weight * se.runnable_avg;
  Load &a = load_[static_cast<std::size_t>(from)], &b = load_[static_cast<std::size_t>(to)];
  a.avg = std::max(0.0, a.avg - mine);
  b.avg += mine;
  if (se.runnable) {
    a.runnable_weight -= se.weight;
    b.runnable_weight += se.weight;
  }
}

double CpuScheduler::load_at(int cpu, TimeNs now) const {
  const Load& l = load_[static_cast<std::size_t>(cpu)];
  return pelt_toward(l.avg, l.runnable_weight, now - l.at);
}

double CpuScheduler::cpu_load(int cpu, TimeNs now) {
  load_decay(cpu, now);
  return load_[static_cast<std::size_t>(cpu)].avg;
}

// sched_balance_rq on a busy CPU (CPU_NOT_IDLE), for the one cache domain whose groups are single
// CPUs. The busiest CPU must be overloaded: more than one thread runnable, and busy beyond
// 100 / imbalance_pct of its capacity (group_is_overloaded). A CPU with spare capacity (less busy
// than that) evens the number of runnable threads (migrate_task, half the difference); a fully
// busy one pulls load (migrate_load), as much as brings neither CPU past the average, and not at
// all if it is as loaded as the busiest or the average. Threads that may move are waiting (not
// running), unpinned and not cache-hot, the coldest first; a thread's load, halved for each failed
// balance before, must fit what is left to move; past cache_nice_tries failures hot threads may go
// (can_migrate_task). Active balancing (pushing a running thread) is not modelled.
void CpuScheduler::busy_balance(int cpu, TimeNs now) {
  const int n = static_cast<int>(rqs_.size());
  auto nr_running = [&](int c) {
    const Rq& q = rq(c);
    return static_cast<int>(q.queued.size()) + (q.curr ? 1 : 0);
  };
  auto overloaded = [&](int c) {
    util_update(c, now);
    return nr_running(c) > 1 && util_[static_cast<std::size_t>(c)].avg * spec_.imbalance_pct > 100;
  };
  int busiest = -1;
  double busiest_load = 0;
  for (int c = 0; c < n; ++c) {
    if (c == cpu || !overloaded(c)) continue;
    const double l = cpu_load(c, now);
    if (busiest < 0 || l > busiest_load) busiest = c, busiest_load = l;
  }
  if (busiest < 0) return;
  util_update(cpu, now);
  // The balancing CPU runs a thread (its tick called this): spare capacity only if little busy.
  const bool spare = util_[static_cast<std::size_t>(cpu)].avg * spec_.imbalance_pct < 100;
  double imbalance = 0;
  int tasks = 0;
  if (spare) {
    tasks = (nr_running(busiest) - nr_running(cpu)) / 2;
    if (tasks <= 0) return;
  } else {
    const double local = cpu_load(cpu, now);
    double total = 0;
    for (int c = 0; c < n; ++c) total += cpu_load(c, now);
    const double avg = total / n;
    if (local >= busiest_load || local >= avg) return;
    imbalance = std::min(busiest_load - avg, avg - local);
    if (imbalance <= 0) return;
  }
  Rq& src = rq(busiest);
  std::vector<Thread*> order(src.queued.begin(), src.queued.end());
  std::stable_sort(order.begin(), order.end(), [](const Thread* a, const Thread* b) {
    return a->sched().exec_start < b->sched().exec_start;
  });
  bool moved = false, all_pinned = true;
  for (Thread* t : order) {
    if (t->sched().pinned) continue;
    all_pinned = false;
    if (!movable(*t, now) && balance_failed_ <= spec_.cache_nice_tries) continue;
    double load = 0;
    if (!spare) {
      thread_load_decay(t->sched(), now);
      load = std::max(1.0, t->sched().weight * t->sched().runnable_avg);
      if (load / std::ldexp(1.0, std::min(balance_failed_, 30)) > imbalance) continue;
    }
    auto it = std::find(src.queued.begin(), src.queued.end(), t);
    Thread& m = detach(busiest, it);
    migrated(m);
    enqueue(m, cpu, false, now, false);
    moved = true;
    if (spare ? --tasks <= 0 : (imbalance -= load) <= 0) break;
  }
  // sd->nr_balance_failed: a balance that found an imbalance and moved nothing (all hot, or all
  // too heavy for it) lets the next take hotter and heavier threads.
  // Nothing could move at all (out_all_pinned): not a failure. (The kernel then clears this
  // CPU's count; the model's one count is every CPU's, so it is left as it is.)
  if (all_pinned) return;
  balance_failed_ = moved ? 0 : balance_failed_ + 1;
}

}  // namespace uringsim::sim
