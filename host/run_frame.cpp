#include "host/run_frame.hpp"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace uringsim::host {

double run_limit_s(const config::Scenario& s, const HostOptions& o) {
  return std::max(0.0, o.quiet_wait_s) + 0.2 +
         (s.at("/warmup_ms").get<double>() + s.at("/duration_ms").get<double>()) / 1e3 + kRunMarginS;
}

analysis::MetricsConfig host_metrics_config(const config::Scenario& s) {
  analysis::MetricsConfig mc;
  mc.warmup_ns = s.at("/warmup_ms").get<double>() * 1e6;
  mc.end_ns = mc.warmup_ns + s.at("/duration_ms").get<double>() * 1e6;
  mc.percentiles = s.at("/measure/percentiles").get<std::vector<double>>();
  mc.interval_ns = s.at("/measure/interval_ms").get<double>() * 1e6;
  return mc;
}

FrameResult run_frame(const config::Scenario& s, const HostOptions& o, RunGuard& guard, int threads,
                      const SpawnThreads& spawn, const std::vector<const analysis::RunMetrics*>& recorded) {
  FrameResult r;
  r.metrics.emplace(host_metrics_config(s));
  analysis::RunMetrics& metrics = *r.metrics;
  r.quiet = wait_for_quiet(o.quiet_wait_s, o.quiet_other_cpu_pct, guard, o.quiet_max_ns_per_add);
  guard.throw_if_aborted();
  r.speed_before = probe_cpu_speed();
  r.wake_before = probe_idle_wake(guard);
  r.syscall_before = probe_syscall();
  r.kick_before = probe_kick(guard);
  guard.throw_if_aborted();

  WindowPlan plan;
  plan.warmup_ns = metrics.config().warmup_ns;
  plan.end_ns = metrics.config().end_ns;

  Startup startup(threads, guard);
  std::vector<std::thread> running;
  auto stop_and_join = [&] {
    guard.request_stop();
    for (auto& t : running) t.join();
  };
  try {
    spawn(startup, running);
  } catch (...) {  // e.g. no more threads: call off those already started
    startup.call_off();
    stop_and_join();
    throw;
  }
  if (startup.wait_all_ready()) {
    const auto t0 = RunGuard::Clock::now();
    startup.go(t0);
    r.window = run_window(guard, t0, plan, metrics);
    r.wall_s = std::chrono::duration<double>(RunGuard::Clock::now() - t0).count();
  } else {
    startup.call_off();
  }
  stop_and_join();
  for (const auto* m : recorded) metrics.merge(*m);
  r.speed_after = probe_cpu_speed();

  guard.throw_if_aborted();
  if (const auto e = startup.error()) std::rethrow_exception(e);
  if (!r.window.completed) throw std::runtime_error("the run stopped before the end of its window");
  const std::set<pid_t> runner = {::gettid(), guard.watchdog_tid()};
  r.cpu =
      window_cpu(r.window.start, r.window.end, runner, r.window.threads_exited, metrics.window_completions());
  return r;
}

}  // namespace uringsim::host
