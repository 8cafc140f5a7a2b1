#include "models/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "analysis/chrome_trace.hpp"
#include "analysis/graphs.hpp"
#include "analysis/io.hpp"
#include "analysis/metrics.hpp"
#include "models/model.hpp"
#include "models/uring/era.hpp"
#include "models/uring/task.hpp"
#include "sim/atomic_line.hpp"
#include "sim/engine.hpp"
#include "sim/lock.hpp"

namespace uringsim::models {
namespace {

static_assert(config::kMaxTimeSeriesIntervals == analysis::RunMetrics::kMaxIntervals,
              "the loader refuses what the metrics cannot hold");

sim::PrimitiveCosts primitive_costs(const config::CostTable& c) {
  sim::PrimitiveCosts p;
  p.spin_lock_fast_cycles = c.get("spin_lock_fast_cycles");
  p.spin_handoff_cycles = c.get("spin_handoff_cycles");
  p.spin_lock_migrate_cycles = c.get("spin_lock_migrate_cycles");
  p.mutex_fast_cycles = c.get("mutex_fast_cycles");
  p.wake_cycles = c.get("wake_cycles");
  p.wake_local_cycles = c.get("wake_local_cycles");
  p.wake_remote_cycles = c.get("wake_remote_cycles");
  p.wake_preempt_cycles = c.get("wake_preempt_cycles");
  p.ipi_receive_cycles = c.get("ipi_receive_cycles");
  p.ipi_delivery_ns = c.get("ipi_delivery_ns");
  p.wakeup_latency_ns = c.get("wakeup_latency_ns");
  p.context_switch_cycles = c.get("context_switch_cycles");
  p.remote_wakee_cycles = c.get("remote_wakee_cycles");
  p.migrate_cycles = c.get("migrate_cycles");
  p.schedule_noswitch_cycles = c.get("schedule_noswitch_cycles");
  return p;
}

// The machine and its scheduler: CFS for the 5.x eras, EEVDF (6.6+) for today's kernel.
sim::MachineSpec machine_spec(const config::Scenario& s, const Model& model) {
  sim::MachineSpec m;
  m.cores = s.at("/machine/cores").get<int>();
  m.ghz = s.at("/machine/ghz").get<double>();
  m.external_cpus = model.external_cpus();
  m.sched.hz = s.at("/machine/hz").get<double>();
  m.stall_every_ns = s.at("/machine/stall_every_ns").get<double>();
  m.stall_ns = s.at("/machine/stall_ns").get<double>();
  for (const auto& l : s.at("/machine/stall_lengths"))
    m.stall_lengths.push_back({l.at(0).get<double>(), l.at(1).get<double>()});
  m.stall_seed = s.at("/seed").get<std::uint64_t>();
  m.sched.idle_exit_ns = s.at("/machine/idle_exit_ns").get<double>();
  m.sched.halt_poll_ns = s.at("/machine/halt_poll_ns").get<double>();
  for (const auto& p : s.at("/machine/idle_exit_curve"))
    m.sched.idle_exit_curve.emplace_back(p.at(0).get<double>(), p.at(1).get<double>());
  m.sched.wake_pack_util = s.at("/machine/wake_pack_util").get<double>();
  const auto preempt = s.at("/machine/preempt").get<std::string>();
  m.sched.preempt = preempt == "none"        ? sim::PreemptModel::None
                    : preempt == "voluntary" ? sim::PreemptModel::Voluntary
                                             : sim::PreemptModel::Full;
  const auto policy = s.at("/kernel/sched").get<std::string>();
  const Era& kernel_era = era(s.at("/kernel/era").get<std::string>());
  const bool eevdf = policy == "eevdf" || (policy == "auto" && kernel_era.eevdf);
  m.sched.policy = eevdf ? sim::SchedPolicy::Eevdf : sim::SchedPolicy::Cfs;
  m.sched.sis_util = kernel_era.sis_util;
  m.sched.base_slice_ns = kernel_era.base_slice_us * 1e3;
  return m;
}

// CPU use in the window as top shows it: 100 % is one core busy for the whole window.
nlohmann::json cpu_section(const sim::Engine& e) {
  const double window_cycles = e.ns_to_cycles(e.window_end_ns() - e.window_start_ns());
  const double window_ns = static_cast<double>(e.window_end_ns() - e.window_start_ns());
  std::map<std::string, double> by_comm, accounted_by_comm;
  double total = 0;
  for (const auto& t : e.threads()) {
    if (!t->accounted()) continue;
    const double c = t->window_cycles();
    by_comm[t->comm()] += c;
    accounted_by_comm[t->comm()] += static_cast<double>(e.scheduler().accounted_ns(*t));
    total += c;
  }
  nlohmann::json j;
  j["total_pct"] = 100.0 * total / window_cycles;
  j["by_thread"] = nlohmann::json::object();
  for (const auto& [comm, c] : by_comm) j["by_thread"][comm + "_pct"] = 100.0 * c / window_cycles;
  // The same threads' time as the kernel accounts it (sum_exec_runtime: what the host side of the
  // twin reads), which a preempting wake-up's skipped clock update moves between threads.
  j["accounted_by_thread"] = nlohmann::json::object();
  for (const auto& [comm, ns] : accounted_by_comm)
    j["accounted_by_thread"][comm + "_pct"] = window_ns > 0 ? 100.0 * ns / window_ns : 0.0;
  return j;
}

// Events per request completed in the window, as `uringsim host` reports them: context switches
// of every thread but the local clients (the host counts the ring's threads and io-wq's), IPIs
// (the ones that kick a task running task_work's way and wake-ups' IPIs to other CPUs, as the
// host counts the machine's reschedule and function-call IPIs), task_work runs, and migrations to
// another CPU of every thread, the clients' included (as the host sums se.nr_migrations).
nlohmann::json per_request_section(const sim::Engine& e, const nlohmann::json& results) {
  std::uint64_t switches = 0, tw_ipis = 0, wake_ipis = 0, runs = 0, migrations = 0;
  std::map<std::string, double> run_delay_ns;                   // by thread class
  std::map<std::string, std::uint64_t> voluntary, involuntary;  // switches out, by thread class
  struct Landed {
    std::uint64_t mine = 0, other = 0;  // on the waker's CPU, on another
  };
  std::map<std::pair<std::string, std::string>, Landed> wakeups;           // by (waker class, wakee class)
  std::map<std::pair<std::string, std::string>, std::uint64_t> preempted;  // (class out, class in)
  auto at = [](const std::vector<std::uint64_t>& v, sim::Label l) { return l < v.size() ? v[l] : 0; };
  for (const auto& t : e.threads()) {
    if (!t->accounted()) continue;
    const auto w = t->window_counts_by_symbol();
    if (t->comm() != "client") switches += at(w, sim::sym::schedule());
    tw_ipis += at(w, models::task_work_ipi_label());
    wake_ipis += at(w, sim::sym::wake_ipi());
    runs += at(w, models::task_work_run_label());
    migrations += at(w, sim::sym::migrate());
    run_delay_ns[t->comm()] += static_cast<double>(t->window_run_delay_ns());
    if (t->scheduled()) {
      voluntary[t->comm()] += at(w, sim::sym::switch_voluntary());
      involuntary[t->comm()] += at(w, sim::sym::switch_involuntary());
    }
    for (std::size_t l = 0; l < w.size(); ++l) {
      if (!w[l]) continue;
      if (const sim::WokeBy* by = sim::woke_by_of(static_cast<sim::Label>(l))) {
        Landed& d = wakeups[{by->waker_comm, t->comm()}];
        (by->on_waker_cpu ? d.mine : d.other) += w[l];
      } else if (const std::string* next = sim::preempted_by_of(static_cast<sim::Label>(l))) {
        preempted[{t->comm(), *next}] += w[l];
      }
    }
  }
  // Every pair of the scheduled classes (the keys of `voluntary`) is listed, none woken or
  // preempted as 0: a reader finds each key.
  for (const auto& a : voluntary)
    for (const auto& b : voluntary) {
      wakeups[{a.first, b.first}];
      preempted[{a.first, b.first}];
    }
  const double n = results.at("window").at("completions").get<double>();
  auto per = [n](std::uint64_t c) {
    return n > 0 ? nlohmann::json(static_cast<double>(c) / n) : nlohmann::json(nullptr);
  };
  nlohmann::json out;
  const std::uint64_t ipis = tw_ipis + wake_ipis;
  out["per_request"] = {{"context_switches", per(switches)},
                        {"ipis", per(ipis)},
                        {"task_work_ipis", per(tw_ipis)},
                        {"task_work_runs", per(runs)},
                        {"migrations", per(migrations)}};
  out["per_request"]["run_delay_us_by_class"] = nlohmann::json::object();
  for (const auto& [cls, ns] : run_delay_ns)
    out["per_request"]["run_delay_us_by_class"][cls] =
        n > 0 ? nlohmann::json(ns / 1e3 / n) : nlohmann::json(nullptr);
  // As the host's: each class's switches away from its CPU, by why (nvcsw, nivcsw).
  nlohmann::json& cs = out["context_switches"];
  cs["voluntary_per_request"] = nlohmann::json::object();
  cs["involuntary_per_request"] = nlohmann::json::object();
  std::uint64_t vol_total = 0, invol_total = 0;
  for (const auto& [cls, c] : voluntary) {
    cs["voluntary_per_request"][cls] = per(c);
    cs["involuntary_per_request"][cls] = per(involuntary[cls]);
    vol_total += c;
    invol_total += involuntary[cls];
  }
  // As bench/sched_trace.py prints the host's: each class's preemptions by the class that ran next.
  cs["involuntary_by_per_request"] = nlohmann::json::object();
  for (const auto& [who, c] : preempted) cs["involuntary_by_per_request"][who.first][who.second] = per(c);
  cs["voluntary_total"] = vol_total;
  cs["involuntary_total"] = invol_total;
  cs["per_request_total"] = per(vol_total + invol_total);
  // As bench/sched_trace.py prints the host's: who woke whom, and whether the wakee was put on the
  // waker's CPU (wake-affine, or its previous CPU was that one) or on another.
  nlohmann::json& wk = out["wakeups"];
  wk["per_request"] = nlohmann::json::object();
  std::uint64_t wake_total = 0;
  for (const auto& [who, d] : wakeups) {
    wk["per_request"][who.first][who.second] = {
        {"total", per(d.mine + d.other)}, {"on_waker_cpu", per(d.mine)}, {"on_other_cpu", per(d.other)}};
    wake_total += d.mine + d.other;
  }
  wk["total"] = wake_total;
  out["per_request_totals"] = {{"requests", n},          {"context_switches", switches},
                               {"ipis", ipis},           {"task_work_ipis", tw_ipis},
                               {"task_work_runs", runs}, {"migrations", migrations}};
  return out;
}

// CPU cycles by (command, symbol) in the window, as shares of all busy cycles: what `perf report
// --sort comm,sym` shows for cycles samples.
nlohmann::json profile_section(const sim::Engine& e) {
  std::map<std::pair<std::string, std::string>, double> cycles;
  double total = 0;
  for (const auto& t : e.threads()) {
    if (!t->accounted()) continue;
    const auto w = t->window_cycles_by_symbol();
    for (std::size_t sym = 0; sym < w.size(); ++sym) {
      if (w[sym] <= 0) continue;
      cycles[{t->comm(), sim::label_name(static_cast<sim::Label>(sym))}] += w[sym];
      total += w[sym];
    }
  }
  std::vector<std::pair<double, std::pair<std::string, std::string>>> rows;
  for (const auto& [k, c] : cycles) rows.push_back({c, k});
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  nlohmann::json entries = nlohmann::json::array();
  double slow = 0;
  std::map<std::string, double> slow_by_comm;
  for (const auto& [c, k] : rows) {
    const double pct = total > 0 ? 100.0 * c / total : 0.0;
    entries.push_back({{"comm", k.first}, {"symbol", k.second}, {"cycles", c}, {"pct", pct}});
    if (k.second == sim::label_name(sim::sym::spin_slowpath())) {
      slow += pct;
      slow_by_comm[k.first] += pct;
    }
  }
  return {{"total_cycles", total},
          {"entries", entries},
          {"spin_slowpath_pct", slow},
          {"spin_slowpath_pct_by_comm", slow_by_comm}};
}

nlohmann::json site_json(const sim::LockSiteStats& s) {
  return {{"acquisitions", s.acquisitions},   {"contended", s.contended},
          {"wait_ns_total", s.wait_ns_total}, {"wait_ns_max", s.wait_ns_max},
          {"hold_ns_total", s.hold_ns_total}, {"hold_ns_max", s.hold_ns_max},
          {"wait_ns_min", s.wait_ns_min},     {"hold_ns_min", s.hold_ns_min},
          {"acq_bounces", s.acq_bounces},     {"con_bounces", s.con_bounces},
          {"contending", s.contending}};
}

// Locks of one name are one lock class, as lockdep and /proc/lock_stat count them: a model's locks
// built on one sim::LockClass report through it, and classes of one name (a task_lock per task)
// add up.
nlohmann::json locks_section(const sim::Engine& e) {
  struct Class {
    sim::LockKind kind;
    sim::LockSiteStats total;
    std::map<sim::Label, sim::LockSiteStats> sites;
  };
  std::map<std::string, Class> classes;
  for (const sim::LockClass* l : e.lock_classes()) {
    Class& c = classes.try_emplace(l->name(), Class{l->kind(), {}, {}}).first->second;
    for (const auto& [site, s] : l->window_sites()) {
      c.total.add(s);
      c.sites[site].add(s);
    }
  }
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, c] : classes) {
    nlohmann::json lj = site_json(c.total);
    lj["kind"] = c.kind == sim::LockKind::Spin ? "spinlock" : "mutex";
    lj["sites"] = nlohmann::json::object();
    for (const auto& [site, s] : c.sites) lj["sites"][sim::label_name(site)] = site_json(s);
    j[name] = lj;
  }
  return j;
}

// Lines of the same name (one per task, say) add up.
nlohmann::json atomics_section(const sim::Engine& e) {
  nlohmann::json j = nlohmann::json::object();
  auto add = [](nlohmann::json& to, const sim::AtomicLine::Counts& n) {
    if (to.is_null()) to = {{"updates", 0}, {"bounces", 0}};
    to["updates"] = to["updates"].get<std::uint64_t>() + n.updates;
    to["bounces"] = to["bounces"].get<std::uint64_t>() + n.bounces;
  };
  for (const sim::AtomicLine* a : e.atomics()) {
    nlohmann::json& aj = j[a->name()];
    if (aj.is_null()) aj = {{"updates", 0}, {"bounces", 0}, {"sites", nlohmann::json::object()}};
    for (const auto& [site, n] : a->window_sites()) {
      add(aj, n);
      add(aj["sites"][sim::label_name(site)], n);
    }
  }
  return j;
}

// Why the compute events happened (sim::SyncCause): where the engine's cost per request comes
// from, for issue 14's work on it.
nlohmann::json compute_by_cause(const sim::Engine& e) {
  using C = sim::SyncCause;
  nlohmann::json first = nlohmann::json::object();
  for (const auto& [comm, n] : e.syncs_other_first_by_comm()) first[comm] = n;
  return {{"lock_busy", e.syncs(C::LockBusy)},   {"other_thread_first", e.syncs(C::OtherThreadFirst)},
          {"other_thread_first_by_comm", first}, {"tick", e.syncs(C::Tick)},
          {"resched", e.syncs(C::Resched)},      {"always", e.syncs(C::Always)}};
}

nlohmann::json violation_json(const sim::Violation& v) {
  return {{"t_ns", v.t_ns},       {"kind", v.kind},       {"thread", v.thread},        {"path", v.path},
          {"message", v.message}, {"request", v.request}, {"locks_held", v.locks_held}};
}

// results.json `checks`, the summary lines and the lockdep-style reports.
void report_checks(const sim::Engine& engine, RunOutput& out) {
  const sim::Checks& c = engine.checks();
  out.lock_order = c.lock_order();
  const auto cycles = analysis::lock_order_cycles(out.lock_order);
  out.wait_for = engine.deadlock_snapshot() ? *engine.deadlock_snapshot() : engine.wait_snapshot();

  nlohmann::json j;
  j["violations_total"] = c.total();
  j["violations_by_kind"] = c.by_kind();
  j["violations"] = nlohmann::json::array();
  for (const auto& v : c.stored()) j["violations"].push_back(violation_json(v));
  j["lock_order"] = analysis::lock_order_json(out.lock_order, cycles);
  j["deadlock"] = engine.deadlocked() ? analysis::deadlock_json(out.wait_for) : nlohmann::json(nullptr);
  out.results["checks"] = j;
  out.checks_ok = c.total() == 0 && cycles.empty() && !engine.deadlocked();

  for (const auto& [kind, n] : c.by_kind()) {
    const sim::Violation* first = nullptr;
    for (const auto& v : c.stored())
      if (!first && v.kind == kind) first = &v;
    std::string where;
    if (first)
      where = fmt::format(" (first at {:.0f} ns: {} in {}: {})", first->t_ns, first->thread, first->path,
                          first->message);
    out.summary.emplace_back("VIOLATION " + kind, std::to_string(n) + where);
  }
  for (const auto& cyc : cycles) {
    out.summary.emplace_back("LOCK-ORDER CYCLE", analysis::cycle_line(cyc));
    out.reports.push_back(analysis::lockdep_report(cyc));
  }
  if (engine.deadlocked()) out.summary.emplace_back("deadlock", analysis::deadlock_text(out.wait_for));
}

// A scenario that needs more threads than this machine can run is bad input, found while building.
void build_model(Model& model, sim::Engine& engine, analysis::RunMetrics& metrics,
                 const config::Scenario& scenario) {
  try {
    model.build(engine, metrics);
  } catch (const sim::ThreadLimitError& e) {
    throw config::InputError(scenario.source + ": " + e.what());
  }
}

}  // namespace

sim::Topology build_topology(const config::Scenario& scenario) {
  const auto& doc = scenario.doc;
  auto model = make_model(scenario);
  sim::Engine engine(machine_spec(scenario, *model), primitive_costs(scenario.costs));
  analysis::MetricsConfig mc;
  mc.warmup_ns = doc.at("warmup_ms").get<double>() * 1e6;
  mc.end_ns = mc.warmup_ns + doc.at("duration_ms").get<double>() * 1e6;
  mc.percentiles = scenario.at("/measure/percentiles").get<std::vector<double>>();
  mc.interval_ns = scenario.at("/measure/interval_ms").get<double>() * 1e6;
  analysis::RunMetrics metrics(mc);
  build_model(*model, engine, metrics, scenario);
  return engine.topology();
}

RunOutput simulate(const config::Scenario& scenario, const std::string& tool_version,
                   const TraceRequest* trace) {
  const auto& doc = scenario.doc;
  const double warmup_ns = doc.at("warmup_ms").get<double>() * 1e6;
  const double end_ns = warmup_ns + doc.at("duration_ms").get<double>() * 1e6;

  auto model = make_model(scenario);
  sim::Engine engine(machine_spec(scenario, *model), primitive_costs(scenario.costs));
  std::unique_ptr<analysis::ChromeTrace> timeline;
  if (trace) {
    timeline = std::make_unique<analysis::ChromeTrace>(trace->start_ms * 1e6, trace->end_ms * 1e6);
    engine.set_trace(timeline.get());
  }

  analysis::MetricsConfig mc;
  mc.warmup_ns = warmup_ns;
  mc.end_ns = end_ns;
  mc.percentiles = scenario.at("/measure/percentiles").get<std::vector<double>>();
  mc.interval_ns = scenario.at("/measure/interval_ms").get<double>() * 1e6;
  analysis::RunMetrics metrics(mc);

  build_model(*model, engine, metrics, scenario);
  engine.set_window(warmup_ns, end_ns);

  const auto wall0 = std::chrono::steady_clock::now();
  engine.run_until_ns(end_ns);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (timeline) analysis::write_file_atomic(trace->path, timeline->to_json());

  RunOutput out;
  if (timeline) out.trace_events = timeline->size();
  nlohmann::json& r = out.results;
  r = metrics.to_json();
  r["source"] = "simulation";
  r["tool"] = {{"name", "uringsim"}, {"version", tool_version}};
  r["scenario"] = doc;
  if (!scenario.calibration.is_null()) r["calibration"] = scenario.calibration;
  r["variant"] = scenario.variant;
  r["seed"] = doc.at("seed");
  // SimGrid's clock runs on to the end date even after a deadlock stopped every thread.
  const double simulated_ns = engine.deadlocked() ? engine.deadlock_ns() : engine.clock_ns();
  r["simulated_ns"] = simulated_ns;
  r["deadlock"] = engine.deadlocked();
  r["cpu"] = cpu_section(engine);
  r["locks"] = locks_section(engine);
  r["atomics"] = atomics_section(engine);
  r["profile"] = profile_section(engine);
  r.update(per_request_section(engine, r));
  model->final_checks();
  model->report(r);

  const double sim_s = simulated_ns * 1e-9;
  // Simulation events per request completed in the whole run: SimGrid activities per round trip
  // for the echo (issue 14's measure), deterministic unlike the wall time around it.
  auto per_request = [](std::uint64_t events, const nlohmann::json& res) -> nlohmann::json {
    const auto it = res.find("requests");
    if (it == res.end() || !it->contains("completed")) return nullptr;
    const double n = it->at("completed").get<double>();
    return n > 0 ? nlohmann::json(static_cast<double>(events) / n) : nlohmann::json(nullptr);
  };
  out.run_info = {{"wall_s", wall_s},
                  {"events", engine.events()},
                  {"events_per_s", wall_s > 0 ? engine.events() / wall_s : 0.0},
                  {"events_by_kind",
                   {{"compute", engine.events(sim::Engine::EventKind::Compute)},
                    {"sleep", engine.events(sim::Engine::EventKind::Sleep)},
                    {"park", engine.events(sim::Engine::EventKind::Park)},
                    {"park_timeout", engine.events(sim::Engine::EventKind::ParkTimeout)},
                    {"lock_wait", engine.events(sim::Engine::EventKind::LockWait)}}},
                  {"compute_by_cause", compute_by_cause(engine)},
                  {"events_per_request", per_request(engine.events(), r)},
                  {"simulated_s", sim_s},
                  {"real_time_factor", sim_s > 0 ? wall_s / sim_s : 0.0},
                  {"peak_rss_bytes", analysis::peak_rss_bytes()}};

  // Values can be null (no completion in the window): print "-" rather than fail.
  auto num = [](const nlohmann::json& j, const char* key, const char* fmt_spec) -> std::string {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? fmt::format(fmt::runtime(fmt_spec), it->get<double>()) : "-";
  };
  const auto& lat = r["latency_us"];
  out.summary.emplace_back("throughput", num(r["throughput"], "ops_per_s", "{:.1f} ops/s"));
  out.summary.emplace_back(
      "latency (us)", "mean " + num(lat, "mean", "{:.3f}") + "  p50 " + num(lat, "p50", "{:.3f}") + "  p99 " +
                          num(lat, "p99", "{:.3f}") + "  max " + num(lat, "max", "{:.3f}"));
  out.summary.emplace_back("latency is", model->latency_measure());
  out.summary.emplace_back("cpu", num(r["cpu"], "total_pct", "{:.1f} %"));
  const auto& rq = r["requests"];
  const std::uint64_t failed = rq.value("failed", std::uint64_t{0});
  out.summary.emplace_back(
      "requests",
      fmt::format("submitted {}  completed {}{}  in flight {}", rq.value("submitted", 0),
                  rq.value("completed", 0), failed ? fmt::format("  failed {}", failed) : std::string(),
                  rq.value("in_flight_at_end", 0)));
  for (auto& line : model->summary()) out.summary.push_back(std::move(line));
  if (const auto b = r.find("breakdown"); b != r.end() && b->contains("tail_exact"))
    out.summary.emplace_back("WARNING breakdown",
                             "the p99 tail is approximate: some requests at or beyond p99 were not kept "
                             "(the completion rate rose far above its average so far)");
  out.text = model->text_report();
  report_checks(engine, out);
  return out;
}

}  // namespace uringsim::models
