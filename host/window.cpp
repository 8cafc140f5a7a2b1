#include "host/window.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace uringsim::host {

CpuSnapshot take_cpu_snapshot() {
  CpuSnapshot s;
  s.t = RunGuard::Clock::now();
  s.machine_busy_ns = machine_busy_ns();
  s.process_ns = process_cpu_ns();
  s.process_switches = process_switches();
  s.ipis = machine_ipis();
  s.tasks = list_tasks();
  s.children_ns = children_cpu_ns();
  return s;
}

WindowCpu window_cpu(const CpuSnapshot& start, const CpuSnapshot& end, const std::set<pid_t>& runner_tids,
                     bool exited, std::uint64_t requests) {
  WindowCpu w;
  w.seconds = std::chrono::duration<double>(end.t - start.t).count();
  const double window_ns = std::max(1.0, w.seconds * 1e9);
  std::map<pid_t, const TaskStats*> before;
  for (const auto& t : start.tasks) before[t.tid] = &t;

  std::map<std::string, double> cpu_ns;
  std::map<std::string, std::uint64_t> vol, invol;
  double live_ns = 0, runner_ns = 0;
  std::uint64_t live_vol = 0, live_invol = 0;  // every live thread's, the runner's included
  for (const auto& t : end.tasks) {
    const auto it = before.find(t.tid);
    const TaskStats zero{};
    const TaskStats& b = it != before.end() ? *it->second : zero;  // born in the window: all of it
    const double d = static_cast<double>(std::max<std::int64_t>(0, t.cpu_ns - b.cpu_ns));
    live_ns += d;
    live_vol += t.voluntary_ctxt_switches - b.voluntary_ctxt_switches;
    live_invol += t.nonvoluntary_ctxt_switches - b.nonvoluntary_ctxt_switches;
    if (runner_tids.count(t.tid)) {
      runner_ns += d;
      continue;
    }
    const std::string cls = thread_class(t.comm);
    w.sched.add_thread(cls, t, it != before.end() ? it->second : nullptr);
    cpu_ns[cls] += d;
    vol[cls] += t.voluntary_ctxt_switches - b.voluntary_ctxt_switches;
    invol[cls] += t.nonvoluntary_ctxt_switches - b.nonvoluntary_ctxt_switches;
  }
  // Threads in the start snapshot but not the end one exited: the process total still has them.
  for (const auto& t : start.tasks)
    if (std::none_of(end.tasks.begin(), end.tasks.end(), [&](const TaskStats& e) { return e.tid == t.tid; }))
      exited = true;
  const double process_ns = static_cast<double>(end.process_ns - start.process_ns);
  const double exited_ns = exited ? std::max(0.0, process_ns - live_ns) : 0.0;
  if (exited_ns > 0) cpu_ns["iou-wrk"] += exited_ns;
  auto residual = [](std::uint64_t process, std::uint64_t live) {
    return process > live ? process - live : 0;
  };
  std::uint64_t exited_vol = 0, exited_invol = 0;
  if (exited) {
    exited_vol = residual(end.process_switches.voluntary - start.process_switches.voluntary, live_vol);
    exited_invol =
        residual(end.process_switches.involuntary - start.process_switches.involuntary, live_invol);
    if (exited_vol + exited_invol > 0) {
      vol["iou-wrk"] += exited_vol;
      invol["iou-wrk"] += exited_invol;
    }
  }

  double total = 0;
  w.cpu["by_thread"] = nlohmann::json::object();
  for (const auto& [cls, ns] : cpu_ns) {
    w.cpu["by_thread"][cls + "_pct"] = 100.0 * ns / window_ns;
    total += ns;
  }
  w.cpu["total_pct"] = 100.0 * total / window_ns;
  w.cpu["exited_threads_pct"] = 100.0 * exited_ns / window_ns;

  nlohmann::json& cs = w.context_switches;
  cs["voluntary_per_request"] = nlohmann::json::object();
  cs["involuntary_per_request"] = nlohmann::json::object();
  std::uint64_t vt = 0, it = 0;
  auto per = [&](std::uint64_t n) -> nlohmann::json {
    return requests > 0 ? nlohmann::json(static_cast<double>(n) / requests) : nlohmann::json(nullptr);
  };
  for (const auto& [cls, n] : vol) {
    cs["voluntary_per_request"][cls] = per(n);
    vt += n;
  }
  for (const auto& [cls, n] : invol) {
    cs["involuntary_per_request"][cls] = per(n);
    it += n;
  }
  cs["voluntary_total"] = vt;
  cs["involuntary_total"] = it;
  cs["per_request_total"] = per(vt + it);
  cs["exited_threads_total"] = exited_vol + exited_invol;
  w.requests = requests;
  for (const auto& [cls, n] : vol) w.sched.switches_by_class[cls] += n;
  for (const auto& [cls, n] : invol) w.sched.switches_by_class[cls] += n;
  w.sched.ipis = ipis_between(start.ipis, end.ipis);

  w.runner_cpu_pct = 100.0 * runner_ns / window_ns;
  const double ours = process_ns + static_cast<double>(end.children_ns - start.children_ns);
  w.other_cpu_pct = std::max(
      0.0, 100.0 * (static_cast<double>(end.machine_busy_ns - start.machine_busy_ns) - ours) / window_ns);
  return w;
}

WindowOutcome run_window(const RunGuard& guard, RunGuard::Clock::time_point t0, const WindowPlan& plan,
                         analysis::RunMetrics& metrics) {
  using Clock = RunGuard::Clock;
  auto at = [&](double ns) {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::nano>(ns));
  };
  auto since_t0 = [&] { return std::chrono::duration<double, std::nano>(Clock::now() - t0).count(); };
  WindowOutcome out;
  std::set<pid_t> seen;  // threads seen since the window opened
  bool in_window = false;
  double next = 0;
  for (;;) {
    // The window's edges come first; sampling steps fill the time between.
    double target = next;
    if (!in_window) target = std::min(target, plan.warmup_ns);
    target = std::min(target, plan.end_ns);
    if (!guard.sleep_until(at(target))) return out;
    const bool at_end = target >= plan.end_ns;
    if (!in_window && target >= plan.warmup_ns) {
      out.start = take_cpu_snapshot();
      for (const auto& t : out.start.tasks) seen.insert(t.tid);
      in_window = true;
    }
    if (at_end) out.end = take_cpu_snapshot();
    const double t = std::min(since_t0(), plan.end_ns);
    double workers = 0;
    std::set<pid_t> now;
    for (const auto& [tid, comm] : list_task_names()) {
      if (thread_class(comm) == "iou-wrk") ++workers;
      now.insert(tid);
    }
    if (in_window) {
      for (const pid_t tid : seen)
        if (!now.count(tid)) out.threads_exited = true;
      seen.insert(now.begin(), now.end());
    }
    out.workers_peak = std::max(out.workers_peak, workers);
    metrics.sample("iowq.workers", t, workers);
    if (at_end) break;
    // A late wake-up skips the steps it missed rather than rushing through them.
    while (next <= since_t0()) next += plan.sample_step_ns;
  }
  out.completed = true;
  return out;
}

}  // namespace uringsim::host
