#include "models/workloads/echo.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/engine.hpp"
#include "sim/sched.hpp"

namespace uringsim::models {
namespace {
// The clients' first messages are spread over this window so they do not arrive all at once.
constexpr sim::TimeNs kFirstSendSpreadNs = 100e3;
}  // namespace

EchoModel::EchoModel(const EchoParams& p, const config::CostTable& costs)
    : p_(p),
      c_(UringCosts::from(costs)),
      sc_(SocketCosts::from(costs)),
      conn_cache_(sc_.tcp_cold, sc_.tcp_cache_connections),
      think_rng_(p_.seed, "echo.client.think") {}

EchoModel::~EchoModel() = default;

void EchoModel::build(sim::Engine& engine, analysis::RunMetrics& metrics) {
  engine_ = &engine;
  metrics_ = &metrics;
  const int cores = engine.machine().cores;
  placer_ = std::make_unique<CpuPlacer>(cores);
  ring_ = std::make_unique<Uring>(engine, p_.kernel, c_, *placer_, p_.setup);
  if (p_.multishot)
    multishot_ = std::make_unique<EchoMultishotServer>(
        p_, c_, ring_->ctx, [this](Op op, int conn) -> Request& { return make_request(op, conn); });

  if (p_.local_clients) slock_class_ = std::make_unique<sim::LockClass>("slock-AF_INET", sim::LockKind::Spin);
  for (int i = 0; i < p_.connections; ++i)
    sockets_.push_back(std::make_unique<Socket>(
        i, sc_, [this](int conn, std::uint32_t) { on_server_send(conn); }, &conn_cache_, slock_class_.get()));

  // Local clients take the last cores; remote clients run on one external CPU, unaccounted.
  const int ndrivers = p_.local_clients ? p_.client_threads : 1;
  drivers_.resize(ndrivers);
  conns_.resize(p_.connections);
  for (int i = 0; i < p_.connections; ++i) {
    conns_[i].driver = i % ndrivers;
    if (slock_class_) conns_[i].client_slock = std::make_unique<sim::SpinLock>(*slock_class_);
  }
  for (int d = 0; d < ndrivers; ++d) {
    sim::ThreadOptions o;
    int cpu = cores;  // the external CPU
    if (p_.local_clients) {
      // Pinned where client_cpus says; otherwise they start on the last cores and the scheduler
      // places them from there.
      const int pinned = p_.client_cpus.empty() ? -1 : p_.client_cpus[d % p_.client_cpus.size()];
      cpu = pinned >= 0 ? placer_->pin(pinned) : placer_->pin(cores - 1 - d % cores);
      o.pinned = pinned >= 0;
    } else {
      o.accounted = false;
    }
    drivers_[d].thread = &engine.spawn(
        fmt::format("client-{}", d), "client", cpu,
        [this, d] { p_.local_clients ? local_client_main(drivers_[d]) : driver_main(drivers_[d]); }, o);
  }

  sim::ThreadOptions so;
  so.weight = sim::nice_to_weight(p_.server_nice) / 1024.0;
  so.pinned = p_.server_cpu >= 0;
  ring_->task.set_thread(engine.spawn(
      "io_uring_echo_server", "io_uring_echo_s", placer_->pin(p_.server_cpu >= 0 ? p_.server_cpu : 0),
      [this] { server_main(); }, so));

  sim::ThreadOptions sampler;
  sampler.daemon = true;
  sampler.accounted = false;
  engine.spawn(
      "sampler", "sampler", 0, [this] { sampler_main(); }, sampler);

  declare_topology(engine);

  // Every client sends its first message at a random time near the start.
  sim::Rng first(p_.seed, "echo.client.first");
  for (int i = 0; i < p_.connections; ++i) {
    const sim::TimeNs t = first.uniform01() * kFirstSendSpreadNs;
    conns_[i].t_sent = t;
    // Remote clients: the heap holds arrivals at the server; local ones: their own send times.
    drivers_[conns_[i].driver].heap.push({p_.local_clients ? t : t + sc_.net_one_way_ns, i});
  }
}

// Components and how they connect (uringsim graph --kind topology). The io_uring components'
// own locks are registered by them; the io-wq internals are the io-wq model's to declare.
void EchoModel::declare_topology(sim::Engine& engine) {
  const std::string server = "io_uring_echo_server", ring = "io_uring (SQ/CQ)", wq = "io-wq",
                    sockets = fmt::format("sockets ({} connections)", p_.connections);
  engine.declare("ring", ring);
  engine.declare("device", sockets);
  engine.declare("queue", "task_work list");
  engine.declare_edge(server, ring, "io_uring_enter: submit SQEs, wait for CQEs");
  engine.declare_edge(ring, "ctx->uring_lock", "submission under");
  engine.declare_edge(ring, "ctx->completion_lock", "CQE posting under");
  engine.declare_edge(ring, sockets, "issue recv/send");
  if (slock_class_) engine.declare_edge(sockets, slock_class_->name(), "protected by (both ends)");
  engine.declare_edge(ring, wq, "punt (IOSQE_ASYNC)");
  engine.declare_edge(wq, sockets, "blocking issue");
  engine.declare_edge(sockets, "task_work list", "poll wake: task_work");
  if (!p_.kernel.tw_lockless) engine.declare_edge("task_work list", "tctx->task_lock", "protected by");
  engine.declare_edge(server, "task_work list", "runs task_work");
  for (const auto& d : drivers_) engine.declare_edge(d.thread->name(), sockets, "send; receive the echo");
}

Request& EchoModel::make_request(Op op, int conn) {
  Request& r = ring_->ctx.new_request();
  r.op = op;
  r.file = sockets_[conn].get();
  r.user_data = static_cast<std::uint64_t>(conn);
  r.bytes = p_.msg_bytes;
  r.force_async = p_.force_async;
  r.fixed_file = p_.fixed_files;
  return r;
}

void EchoModel::server_main() {
  static const sim::Label app = sim::intern("[app] event loop"), work = sim::intern("[app] server work"),
                          prep = sim::intern("[app] io_uring_prep");
  if (multishot_) {
    multishot_->run();
    return;
  }
  auto& self = sim::current();
  std::vector<Request*> sqes;
  for (int i = 0; i < p_.connections; ++i) {
    self.charge(c_.app_sqe_prep, prep);
    sqes.push_back(&make_request(Op::Recv, i));
  }
  for (;;) {
    // io_uring_submit_and_wait(wait_nr), at most the requests in flight (each gives a CQE), as
    // the host's loop does: more would wait for ever.
    const auto in_flight = static_cast<int>(ring_->ctx.in_flight() + sqes.size());
    ring_->ctx.enter(sqes, std::min(p_.setup.wait_nr, in_flight));
    Cqe cqe;
    while (ring_->ctx.pop_cqe(cqe)) {
      self.charge(c_.app_cqe, app);
      const int conn = static_cast<int>(cqe.user_data);
      const Op op = cqe.req->op;
      ring_->ctx.release(*cqe.req);
      self.charge(c_.app_sqe_prep, prep);
      if (op == Op::Recv && cqe.result > 0) {
        self.charge(p_.server_work_cycles, work);
        sqes.push_back(&make_request(Op::Send, conn));
      } else if (op == Op::Send && cqe.result < 0) {  // e.g. -ECANCELED: send the echo again
        ++failed_;
        sqes.push_back(&make_request(Op::Send, conn));
      } else {
        if (cqe.result < 0) ++failed_;
        sqes.push_back(&make_request(Op::Recv, conn));
      }
    }
  }
}

void EchoModel::on_server_send(int conn) {
  const sim::TimeNs now = sim::current().local_now_ns();  // after the sender's CPU work
  if (p_.local_clients) {
    static const sim::Label rcv = sim::intern("tcp_v4_rcv");
    // Loopback: the receive softirq ran inside the send (tcp_send_cycles), so the echo is readable
    // from the end of the send (the lock's date: the sender's local one); under the client
    // socket's spinlock, sk_data_ready's ep_poll_callback wakes the client if it sleeps in
    // epoll_wait.
    Conn& cn = conns_[conn];
    cn.client_slock->lock(rcv);
    Driver& d = drivers_[cn.driver];
    cn.echo_from_cpu = sim::current().cpu();
    d.ready.push_back(conn);
    if (d.in_wait) {
      d.in_wait = false;
      sim::wake_up_process(*d.thread, p_.kernel.epoll_wake_sync ? sim::Wake::Sync : sim::Wake::Normal);
    }
    cn.client_slock->unlock();
    return;
  }
  const sim::TimeNs t_echo = now + sc_.net_one_way_ns;
  if (!record_echo(conn, t_echo)) return;
  Conn& cn = conns_[conn];
  const sim::TimeNs t_next = t_echo + p_.think.sample_ns(think_rng_);
  cn.t_sent = t_next;
  schedule_arrival(conn, t_next + sc_.net_one_way_ns);
}

bool EchoModel::record_echo(int conn, sim::TimeNs t) {
  if (t > engine_->window_end_ns()) return false;  // after the end: still in flight, nothing more sent
  metrics_->completed(t, t - conns_[conn].t_sent);
  if (t >= engine_->window_start_ns()) ++round_trips_window_;
  return true;
}

void EchoModel::schedule_arrival(int conn, sim::TimeNs t_arrive) {
  Driver& d = drivers_[conns_[conn].driver];
  d.heap.push({t_arrive, conn});
  if (d.sleeping_until > t_arrive) d.thread->unpark();  // it sleeps past this arrival: wake it to re-plan
}

void EchoModel::driver_main(Driver& d) {
  auto& self = sim::current();
  for (;;) {
    if (d.heap.empty()) {
      d.sleeping_until = std::numeric_limits<double>::infinity();
      self.park();
      d.sleeping_until = -1;
      continue;
    }
    const Event ev = d.heap.top();
    const sim::TimeNs now = sim::now_ns();
    if (ev.t > now) {
      d.sleeping_until = ev.t;
      self.park_for_ns(ev.t - now);
      d.sleeping_until = -1;
      continue;
    }
    d.heap.pop();
    metrics_->submitted(conns_[ev.conn].t_sent);
    sockets_[ev.conn]->deliver(p_.msg_bytes);
  }
}

// As the host's client runs (host/echo_runner.cpp): epoll_wait for up to 64 readable connections,
// recv() each echo, send() the next message after the think time (a timer when it is not 0).
void EchoModel::local_client_main(Driver& d) {
  static const sim::Label epoll = sim::intern("ep_poll");
  static const sim::Label recv = sim::intern("[client]_tcp_recvmsg");
  constexpr int kMaxEvents = 64;
  auto& self = sim::current();
  for (;;) {
    {
      const sim::Syscall sys;  // epoll_wait
      self.charge(sc_.epoll_wait, epoll);
      const bool timer_due = !d.heap.empty() && d.heap.top().t <= self.local_now_ns();
      if (d.ready.empty() && !timer_due) {  // nothing ready: sleep in the wait
        d.in_wait = true;
        if (d.heap.empty())
          self.park();
        else
          self.park_for_ns(std::max(0.0, d.heap.top().t - self.local_now_ns()));
        d.in_wait = false;
      }
    }
    for (int n = 0; n < kMaxEvents && !d.ready.empty(); ++n) {
      const int conn = d.ready.front();
      d.ready.pop_front();
      Conn& cn = conns_[conn];
      {
        static const sim::Label lock_sock = sim::intern("lock_sock_nested");
        const sim::Syscall sys;  // recv
        self.charge(c_.syscall, recv);
        cn.client_slock->lock(lock_sock);  // the socket is the client's from here
        cn.client_slock->unlock();
        self.charge(sc_.tcp_recv + sc_.tcp_byte * p_.msg_bytes + conn_cache_.touch(conn), recv);
        self.charge(sc_.cross_cpu_read(cn.echo_from_cpu, self.cpu()), recv);  // the server's lines
      }
      const sim::TimeNs t = self.local_now_ns();
      if (!record_echo(conn, t)) continue;
      const sim::TimeNs think = p_.think.sample_ns(think_rng_);
      if (think <= 0)
        client_send(conn);
      else
        d.heap.push({t + think, conn});
    }
    while (!d.heap.empty() && d.heap.top().t <= self.local_now_ns()) {
      const int conn = d.heap.top().conn;
      d.heap.pop();
      client_send(conn);
    }
  }
}

void EchoModel::client_send(int conn) {
  static const sim::Label send = sim::intern("[client]_tcp_sendmsg");
  auto& self = sim::current();
  Conn& cn = conns_[conn];
  cn.t_sent = self.local_now_ns();
  metrics_->submitted(cn.t_sent);
  // Loopback: the server's receive softirq, and the poll wake-up it triggers, run in this send.
  const sim::Syscall sys;
  self.charge(c_.syscall + sc_.tcp_send + sc_.tcp_byte * p_.msg_bytes + conn_cache_.touch(conn), send);
  sockets_[conn]->deliver(p_.msg_bytes, self.cpu());
}

void EchoModel::sampler_main() {
  auto& self = sim::current();
  // Gauges every tenth of the time-series interval, traced or not: a finer step under --trace would
  // add synchronisation points and so change the run the timeline is meant to show.
  const double step = metrics_->config().interval_ns / 10;
  for (;;) {
    self.sleep_ns(step);
    const double t = engine_->clock_ns();
    const auto& u = ring_->wq.acct(1);
    metrics_->sample("iowq.unbound.workers", t, u.nr_workers);
    metrics_->sample("iowq.unbound.running", t, u.nr_running);
    metrics_->sample("iowq.unbound.queued", t, static_cast<double>(u.list.size()));
    metrics_->sample("iowq.unbound.blocked_in_work", t, u.blocked_in_work);
    metrics_->sample("iowq.bound.workers", t, ring_->wq.acct(0).nr_workers);
    metrics_->sample("iowq.free_workers", t, static_cast<double>(ring_->wq.free_workers()));
    metrics_->sample("uring.cq_ready", t, static_cast<double>(ring_->ctx.cq_ready()));
    if (auto* tr = engine_->trace()) {  // the same gauges as counter tracks of the timeline
      tr->counter("iowq.unbound.running", t, u.nr_running);
      tr->counter("iowq.unbound.queued", t, static_cast<double>(u.list.size()));
      tr->counter("iowq.unbound.workers", t, u.nr_workers);
      tr->counter("uring.cq_ready", t, static_cast<double>(ring_->ctx.cq_ready()));
    }
  }
}

void EchoModel::final_checks() const {
  ring_->ctx.final_checks();
}

void EchoModel::report(nlohmann::json& r) const {
  ring_->report(r);
  r["echo"] = {{"connections", p_.connections},
               {"async_mode", async_mode_name(p_.kernel.async_mode)},
               {"round_trips_window", round_trips_window_},
               {"failed_ops", failed_ + (multishot_ ? multishot_->failed() : 0)}};
  if (multishot_) {  // as the host reports them (whole run)
    r["echo"]["recv_mode"] = "multishot";
    r["echo"]["buf_ring_entries"] = p_.buf_ring_entries;
    r["echo"]["multishot_rearms"] = multishot_->rearms();
    r["echo"]["multishot_enobufs"] = multishot_->enobufs();
  }
}

std::string EchoModel::latency_measure() const {
  return "client round trip: request sent -> echo received at the client";
}

std::vector<std::pair<std::string, std::string>> EchoModel::summary() const {
  const auto& u = ring_->wq.acct(1);
  std::vector<std::pair<std::string, std::string>> lines = {
      {"io-wq unbound",
       fmt::format("max {}  peak {}  created {}  queue peak {}",
                   u.max_workers == (1 << 20) ? -1 : u.max_workers, u.workers_peak, u.created, u.list_peak)},
      {"io_uring", fmt::format("sqes {}  cqes {}  punted {}  polls armed {}  worker blocking issues {}",
                               ring_->ctx.stats().sqes_submitted, ring_->ctx.stats().cqes_posted,
                               ring_->ctx.stats().punted, ring_->ctx.stats().poll_armed,
                               ring_->ctx.stats().worker_blocked)}};
  if (multishot_)
    lines.emplace_back(
        "multishot recv",
        fmt::format("{} buffers: {} CQEs with F_MORE, {} re-arms ({} after -ENOBUFS)", p_.buf_ring_entries,
                    ring_->ctx.stats().multishot_cqes, multishot_->rearms(), multishot_->enobufs()));
  return lines;
}

}  // namespace uringsim::models
