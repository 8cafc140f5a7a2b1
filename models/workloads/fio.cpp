#include "models/workloads/fio.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/engine.hpp"

namespace uringsim::models {
namespace {
constexpr double kNsPerS = 1e9;

const sim::Label& sym_fio() {
  static const sim::Label l = sim::intern("[app] fio io_u");
  return l;
}
const sim::Label& sym_prep() {
  static const sim::Label l = sim::intern("[app] io_uring_prep");
  return l;
}
const sim::Label& sym_reap() {
  static const sim::Label l = sim::intern("[app] fio reap");
  return l;
}

bool is_user(const std::string& symbol) {
  return symbol.rfind("[app]", 0) == 0;
}
}  // namespace

std::string fio_scaled(double value, bool iec, const std::string& unit, int digits) {
  static const char* const kSi[] = {"", "k", "M", "G", "T", "P"};
  static const char* const kIec[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  const std::uint64_t base = iec ? 1024 : 1000;
  auto n = static_cast<std::uint64_t>(std::llround(value));
  auto width = [](std::uint64_t x) { return static_cast<int>(std::to_string(x).size()); };
  std::size_t power = 0;
  std::uint64_t rem = 0;
  bool divided = false;
  while (width(n) > digits && power + 1 < std::size(kSi)) {
    rem = n % base;
    n /= base;
    ++power;
    divided = true;
  }
  const std::string prefix = (iec ? kIec : kSi)[power];
  const int decimals = digits - width(n) - 1;
  if (!divided) return fmt::format("{}{}{}", n, prefix, unit);
  if (decimals <= 0) return fmt::format("{}{}{}", n + (2 * rem >= base ? 1 : 0), prefix, unit);
  const double x = static_cast<double>(n) + static_cast<double>(rem) / static_cast<double>(base);
  return fmt::format("{:.{}f}{}{}", x, decimals, prefix, unit);
}

const std::vector<double>& FioModel::fio_percentiles() {
  static const std::vector<double> p = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                        80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  return p;
}

void FioModel::LatStat::add(double ns) {
  h.record(ns);
  sum += ns;
  sumsq += ns * ns;
}

double FioModel::LatStat::stdev_ns() const {
  const double n = static_cast<double>(h.count());
  if (n < 2) return 0;
  const double var = (sumsq - sum * sum / n) / (n - 1);
  return var > 0 ? std::sqrt(var) : 0;
}

FioModel::FioModel(const FioParams& p, const config::CostTable& costs)
    : p_(p),
      c_(UringCosts::from(costs)),
      dev_(std::make_unique<NvmeDevice>(p_.device, DriveCosts::from(costs))),
      dio_complete_cycles_(p_.xfs ? costs.get("dio_complete_cycles") : 0),
      wq_costs_(p_.xfs ? WorkqueueCosts::from(costs) : WorkqueueCosts{}) {}

FioModel::~FioModel() = default;

void FioModel::build(sim::Engine& engine, analysis::RunMetrics& metrics) {
  engine_ = &engine;
  metrics_ = &metrics;
  placer_ = std::make_unique<CpuPlacer>(engine.machine().cores);
  dev_->start(engine);
  if (p_.xfs && !p_.kernel.dio_caller_comp)
    dio_wq_ = std::make_unique<Workqueue>(engine, "dio/nvme0n1", wq_costs_);
  // Pinned CPUs first, so unpinned threads avoid them.
  for (int i = 0; i < p_.numjobs; ++i) {
    auto j = std::make_unique<Job>();
    j->index = i;
    if (p_.sqthread_poll && p_.sqthread_poll_cpu >= 0) j->sq_cpu = placer_->pin(p_.sqthread_poll_cpu);
    jobs_.push_back(std::move(j));
  }
  for (auto& jp : jobs_) {
    Job& j = *jp;
    j.cpu = p_.cpus_allowed >= 0 ? placer_->pin(p_.cpus_allowed) : placer_->pick();
    if (p_.sqthread_poll && j.sq_cpu < 0) j.sq_cpu = placer_->pick();
    j.ring = std::make_unique<Uring>(engine, p_.kernel, c_, *placer_, p_.setup);
    j.ring->ctx.setup(p_.sqthread_poll, p_.hipri);
    if (p_.hybrid_iopoll) j.ring->ctx.set_hybrid_iopoll(true);
    if (j.index > 0) j.ring->ctx.share_breakdown_of(jobs_.front()->ring->ctx);  // one group
    j.file = std::make_unique<BlockFile>(*dev_, p_.direct);
    if (p_.xfs)
      j.file->set_write_completion(
          p_.kernel.dio_caller_comp ? DioWriteCompletion::Caller : DioWriteCompletion::Workqueue,
          dio_wq_.get(), dio_complete_cycles_);
    j.slots.resize(static_cast<std::size_t>(p_.iodepth));
    for (int s = p_.iodepth - 1; s >= 0; --s) j.free_slots.push_back(s);
    j.mix = std::make_unique<sim::Rng>(p_.seed, fmt::format("fio.job{}.rwmix", j.index));
    if (p_.sqthread_poll) {
      j.sqd = std::make_unique<SqThread>(p_.kernel, c_);
      j.sqd->attach(j.ring->ctx);
      j.ring->ctx.attach_sq_thread(j.sqd.get());
      j.sqd->start(engine, fmt::format("iou-sqp-{}", j.index), j.sq_cpu, p_.sqthread_poll_cpu >= 0);
    }
    sim::ThreadOptions jo;
    jo.pinned = p_.cpus_allowed >= 0;  // fio --cpus_allowed
    j.thread = &engine.spawn(
        fmt::format("fio-job{}", j.index), "fio", j.cpu, [this, &j] { job_main(j); }, jo);
    j.ring->task.set_thread(*j.thread);
    declare_topology(engine, j);
  }
}

// Components and how they connect (uringsim graph --kind topology).
void FioModel::declare_topology(sim::Engine& engine, const Job& j) const {
  const std::string ring = fmt::format("io_uring of fio-job{} (SQ/CQ)", j.index), drive = "NVMe drive";
  engine.declare("ring", ring);
  engine.declare("device", drive);
  engine.declare_edge(j.thread->name(), ring,
                      p_.sqthread_poll ? "write SQEs; SQ_WAKEUP if needed" : "io_uring_enter");
  engine.declare_edge(ring, "ctx->uring_lock", "submission under");
  if (p_.sqthread_poll)
    engine.declare_edge(fmt::format("iou-sqp-{}", j.index), ring, "submit SQEs, reap polled CQEs");
  engine.declare_edge(ring, drive, p_.direct ? "O_DIRECT issue" : "punt to io-wq (buffered)");
  engine.declare_edge(drive, ring, p_.hipri ? "completion found by polling" : "IRQ -> task_work -> CQE");
}

Op FioModel::next_op(Job& j) {
  if (p_.rw == "read" || p_.rw == "randread") return Op::Read;
  if (p_.rw == "write" || p_.rw == "randwrite") return Op::Write;
  return j.mix->uniform01() * 100.0 < p_.rwmixread ? Op::Read : Op::Write;
}

void FioModel::job_main(Job& j) {
  auto& self = sim::current();
  const sim::TimeNs period = p_.rate_iops > 0 ? kNsPerS / p_.rate_iops : 0;
  sim::TimeNs next_due = sim::now_ns();
  for (;;) {
    if (j.inflight >= p_.iodepth) {
      wait_events(j, std::min(p_.setup.wait_nr, j.inflight));  // iodepth_batch_complete_min
      continue;
    }
    if (period > 0) {
      // fio's rate_ddir(): ahead of schedule, it completes everything in flight (io_u_quiesce)
      // and sleeps until the next I/O is due.
      if (self.local_now_ns() < next_due) {
        while (j.inflight > 0) wait_events(j, std::min(p_.setup.wait_nr, j.inflight));
        const sim::TimeNs now = sim::now_ns();
        if (now < next_due) self.sleep_ns(next_due - now);
      }
      next_due += period;
    }
    issue_one(j);
    reap(j);
  }
}

void FioModel::issue_one(Job& j) {
  auto& self = sim::current();
  self.charge(c_.fio_io, sym_fio());
  const int slot = j.free_slots.back();
  j.free_slots.pop_back();
  Slot& sl = j.slots[static_cast<std::size_t>(slot)];
  sl.start = self.local_now_ns();  // io_u->start_time
  sl.op = next_op(j);
  Request& r = j.ring->ctx.new_request();
  r.op = sl.op;
  r.file = j.file.get();
  r.bytes = p_.bs_bytes;
  r.user_data = static_cast<std::uint64_t>(slot);
  self.charge(c_.app_sqe_prep, sym_prep());
  j.ring->ctx.sq_push(r);
  // fio_ioring_commit: on an SQPOLL ring only a sleeping SQ thread needs a syscall.
  if (p_.sqthread_poll) {
    if (j.ring->ctx.sq_need_wakeup()) j.ring->ctx.enter_ring(1, 0, kEnterSqWakeup);
  } else {
    j.ring->ctx.enter_ring(1, 0, 0);
  }
  sl.issue = self.local_now_ns();  // io_u->issue_time, after the commit returns
  ++j.inflight;
  metrics_->submitted(sl.start);
}

void FioModel::wait_events(Job& j, int min) {
  // fio_ioring_getevents: reap the CQ; on SQPOLL rings spin in user space, else enter GETEVENTS.
  if (p_.sqthread_poll)
    j.ring->ctx.spin_for_cqes(static_cast<std::size_t>(min));
  else
    j.ring->ctx.enter_ring(0, min, kEnterGetEvents);
  reap(j);
}

void FioModel::reap(Job& j) {
  auto& self = sim::current();
  Cqe cqe;
  while (j.ring->ctx.pop_cqe(cqe)) {
    // Completion time = the CQE read, the same instant the latency breakdown ends at.
    const sim::TimeNs t = self.local_now_ns();
    self.charge(c_.app_cqe, sym_reap());
    const int slot = static_cast<int>(cqe.user_data);
    const Slot& sl = j.slots[static_cast<std::size_t>(slot)];
    j.ring->ctx.release(*cqe.req);
    j.free_slots.push_back(slot);
    --j.inflight;
    if (cqe.result < 0) {  // fio counts a failed I/O as an error, not as I/O done
      ++errors_;
      metrics_->failed();
      continue;
    }
    metrics_->completed(t, t - sl.start);
    if (t >= engine_->window_start_ns() && t <= engine_->window_end_ns()) {
      DirStats& d = sl.op == Op::Write ? write_ : read_;
      ++d.ios;
      d.bytes += p_.bs_bytes;
      d.slat.add(sl.issue - sl.start);
      d.clat.add(t - sl.issue);
      d.lat.add(t - sl.start);
    }
    self.charge(c_.fio_io, sym_fio());  // statistics and io_u put
  }
}

namespace {
nlohmann::json lat_json(const analysis::LatencyHistogram& h, double stdev_ns) {
  nlohmann::json j = h.to_json(FioModel::fio_percentiles());
  j["stdev"] = h.empty() ? nlohmann::json(nullptr) : nlohmann::json(stdev_ns / 1e3);
  return j;
}
}  // namespace

void FioModel::final_checks() const {
  for (const auto& jp : jobs_) jp->ring->ctx.final_checks();
}

void FioModel::report(nlohmann::json& r) const {
  const double window_s = (engine_->window_end_ns() - engine_->window_start_ns()) / kNsPerS;
  const double window_cycles = engine_->ns_to_cycles(engine_->window_end_ns() - engine_->window_start_ns());
  auto dir = [&](const DirStats& d) {
    return nlohmann::json{{"ios", d.ios},
                          {"iops", d.ios / window_s},
                          {"bw_bytes_per_s", d.bytes / window_s},
                          {"slat_us", lat_json(d.slat.h, d.slat.stdev_ns())},
                          {"clat_us", lat_json(d.clat.h, d.clat.stdev_ns())},
                          {"lat_us", lat_json(d.lat.h, d.lat.stdev_ns())}};
  };
  nlohmann::json f;
  f["jobs"] = p_.numjobs;
  f["errors"] = errors_;
  if (read_.ios || p_.rw != "write") f["read"] = dir(read_);
  if (write_.ios || p_.rw == "write" || p_.rw == "randwrite" || p_.rw == "randrw") f["write"] = dir(write_);
  double usr = 0, sys = 0, sq = 0;
  nlohmann::json sqt = nlohmann::json::array();
  for (const auto& jp : jobs_) {
    const auto w = jp->thread->window_cycles_by_symbol();
    for (std::size_t i = 0; i < w.size(); ++i)
      (is_user(sim::label_name(static_cast<sim::Label>(i))) ? usr : sys) += w[i];
    if (jp->sqd) {
      const double c = jp->sqd->thread()->window_cycles();
      sq += c;
      const auto& st = jp->sqd->stats();
      sqt.push_back({{"cpu", jp->sq_cpu},
                     {"cpu_pct", 100.0 * c / window_cycles},
                     {"sleeps", st.sleeps},
                     {"wakeups", st.wakeups},
                     {"passes", st.passes},
                     {"tw_items", st.tw_items},
                     {"tw_max_per_pass", st.tw_max_per_pass},
                     {"tw_capped_passes", st.tw_capped_passes}});
    }
  }
  const double n = static_cast<double>(p_.numjobs);
  f["cpu"] = {{"usr_pct", 100.0 * usr / window_cycles / n}, {"sys_pct", 100.0 * sys / window_cycles / n}};
  // Context switches of the job threads in the window: each switch-in after a sleep charges
  // context_switch_cycles to __schedule (sim/sched.cpp), and nothing else charges that symbol.
  const double cs = engine_->costs().context_switch_cycles;
  double sched = 0;
  for (const auto& jp : jobs_) {
    const auto w = jp->thread->window_cycles_by_symbol();
    const auto i = static_cast<std::size_t>(sim::sym::schedule());
    if (i < w.size()) sched += w[i];
  }
  f["ctx"] = cs > 0 ? nlohmann::json(std::llround(sched / cs)) : nlohmann::json(nullptr);
  f["sq_thread_cpu_pct"] =
      p_.sqthread_poll ? nlohmann::json(100.0 * sq / window_cycles / n) : nlohmann::json(nullptr);
  f["sq_threads"] = sqt;
  r["breakdown"] = jobs_.front()->ring->ctx.breakdown().to_json();  // every job's ring reports into it
  UringStats u;
  for (const auto& jp : jobs_) {
    const auto& s = jp->ring->ctx.stats();
    u.sqes_submitted += s.sqes_submitted;
    u.cqes_posted += s.cqes_posted;
    u.sq_wakeup_enters += s.sq_wakeup_enters;
    u.deputy_calls += s.deputy_calls;
    u.deputy_submitted += s.deputy_submitted;
    u.sq_thread_submitted += s.sq_thread_submitted;
    u.iopoll_passes += s.iopoll_passes;
    u.iopoll_reaped += s.iopoll_reaped;
    u.irq_completions += s.irq_completions;
    u.punted += s.punted;
  }
  f["uring"] = {{"sqes_submitted", u.sqes_submitted},     {"cqes_posted", u.cqes_posted},
                {"sq_wakeup_enters", u.sq_wakeup_enters}, {"deputy_calls", u.deputy_calls},
                {"deputy_submitted", u.deputy_submitted}, {"sq_thread_submitted", u.sq_thread_submitted},
                {"iopoll_passes", u.iopoll_passes},       {"iopoll_reaped", u.iopoll_reaped},
                {"irq_completions", u.irq_completions},   {"punted", u.punted}};
  if (p_.hybrid_iopoll) {
    std::uint64_t sleeps = 0;
    double slept = 0, learned = 0;
    for (const auto& jp : jobs_) {
      sleeps += jp->ring->ctx.stats().iopoll_sleeps;
      slept += jp->ring->ctx.stats().iopoll_slept_ns;
      const double l = jp->ring->ctx.iopoll_wait().learned_ns();
      learned += std::isfinite(l) ? l : 0;
    }
    f["hybrid_iopoll"] = {{"sleeps", sleeps},
                          {"mean_sleep_us", sleeps ? slept / static_cast<double>(sleeps) / 1e3 : 0.0},
                          {"learned_poll_time_us", learned / static_cast<double>(jobs_.size()) / 1e3}};
  }
  if (p_.xfs) {
    nlohmann::json d = {{"write_completion", p_.kernel.dio_caller_comp ? "caller" : "workqueue"}};
    if (dio_wq_) {
      const auto& ws = dio_wq_->stats();
      double kw = 0;
      for (int c = 0; c < engine_->machine().cores; ++c)
        if (const sim::Thread* t = dio_wq_->worker(c)) kw += t->window_cycles();
      d["queued"] = ws.queued;
      d["kworkers"] = ws.workers;
      d["kworker_wakeups"] = ws.wakeups;
      d["kworker_cpu_pct"] = 100.0 * kw / window_cycles;
    }
    f["dio"] = d;
  }
  const auto& ds = dev_->stats();
  f["device"] = {{"submitted", ds.submitted},
                 {"completed", ds.completed},
                 {"irqs", ds.irqs},
                 {"polled_done", ds.polled_done},
                 {"queued_peak", ds.queued_peak},
                 {"mean_service_us", ds.submitted ? ds.service_ns_total / ds.submitted / 1e3 : 0.0}};
  // The block layer's plugs (io_submit_sqes batches of more than two SQEs): blktrace's
  // requests per unplug.
  f["block"] = {{"plugged_requests", ds.plugged},
                {"plug_flushes", ds.plug_flushes},
                {"requests_per_plug_flush",
                 ds.plug_flushes ? nlohmann::json(static_cast<double>(ds.plugged) / ds.plug_flushes)
                                 : nlohmann::json(nullptr)}};
  f["setup"] = {{"sqpoll", p_.sqthread_poll},
                {"iopoll", p_.hipri},
                {"deputy", p_.kernel.sq_deputy},
                {"deputy_active",
                 p_.sqthread_poll && p_.kernel.sq_deputy && (!p_.hipri || p_.kernel.sq_deputy_under_iopoll)},
                {"sq_thread_idle_us", p_.kernel.sq_idle_ns / 1e3},
                {"sq_tw_cap", p_.kernel.sq_tw_cap}};
  r["fio"] = f;
}

std::string FioModel::latency_measure() const {
  return "per I/O, SQE -> CQE: io_u started (SQE prepared) -> CQE read, fio's lat";
}

std::vector<std::pair<std::string, std::string>> FioModel::summary() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& jp : jobs_) {
    if (!jp->sqd) continue;
    const auto& st = jp->sqd->stats();
    const double window_cycles = engine_->ns_to_cycles(engine_->window_end_ns() - engine_->window_start_ns());
    out.emplace_back(fmt::format("SQ thread {}", jp->index),
                     fmt::format("cpu {:.1f} %  sleeps {}  wake-ups {}  (CPU {})",
                                 100.0 * jp->sqd->thread()->window_cycles() / window_cycles, st.sleeps,
                                 st.wakeups, jp->sq_cpu));
  }
  return out;
}

std::string FioModel::text_report() const {
  const double window_s = (engine_->window_end_ns() - engine_->window_start_ns()) / kNsPerS;
  std::string s = fmt::format("fio: (groupid=0, jobs={}): ioengine=io_uring, bs={}, iodepth={}{}{}\n",
                              p_.numjobs, p_.bs_bytes, p_.iodepth, p_.hipri ? ", hipri" : "",
                              p_.sqthread_poll ? ", sqthread_poll" : "");
  auto lat_line = [](const char* name, const LatStat& l) {
    const auto& h = l.h;
    if (h.empty()) return fmt::format("    {} (usec): none in the window\n", name);
    return fmt::format("    {} (usec): min={:.2f}, max={:.2f}, avg={:.2f}, stdev={:.2f}\n", name,
                       h.min() / 1e3, h.max() / 1e3, h.mean() / 1e3, l.stdev_ns() / 1e3);
  };
  auto dir = [&](const char* name, const DirStats& d) {
    const double iops = d.ios / window_s, bw = d.bytes / window_s;
    // fio's line: IOPS in SI units, bandwidth in IEC units (SI in brackets), bytes done, runtime.
    s += fmt::format("  {}: IOPS={}, BW={} ({})({}/{}msec)\n", name, fio_scaled(iops, false, ""),
                     fio_scaled(bw, true, "B/s"), fio_scaled(bw, false, "B/s"),
                     fio_scaled(static_cast<double>(d.bytes), true, "B"), std::llround(window_s * 1e3));
    s += lat_line("slat", d.slat);
    s += lat_line("clat", d.clat);
    s += lat_line(" lat", d.lat);
    for (const char* which : {"clat", "lat"}) {
      const LatStat& l = std::string(which) == "clat" ? d.clat : d.lat;
      if (l.h.empty()) continue;
      s += fmt::format("    {} percentiles (usec):\n", which);
      const auto& ps = fio_percentiles();
      for (std::size_t i = 0; i < ps.size(); ++i) {
        if (i % 4 == 0) s += "     |";
        s += fmt::format(" {:5.2f}th=[{:7.2f}]", ps[i], l.h.percentile(ps[i]) / 1e3);
        s += (i % 4 == 3 || i + 1 == ps.size()) ? (i + 1 == ps.size() ? "\n" : ",\n") : ",";
      }
    }
  };
  if (read_.ios) dir("read", read_);
  if (write_.ios) dir("write", write_);
  nlohmann::json r;
  report(r);
  s += fmt::format("  cpu          : usr={:.2f}%, sys={:.2f}%\n", r["fio"]["cpu"]["usr_pct"].get<double>(),
                   r["fio"]["cpu"]["sys_pct"].get<double>());
  if (p_.sqthread_poll)
    s += fmt::format("  sq thread    : cpu={:.2f}%, SQ_WAKEUP enters={}, deputy submits={}\n",
                     r["fio"]["sq_thread_cpu_pct"].get<double>(),
                     r["fio"]["uring"]["sq_wakeup_enters"].get<std::uint64_t>(),
                     r["fio"]["uring"]["deputy_submitted"].get<std::uint64_t>());
  return s;
}

}  // namespace uringsim::models
