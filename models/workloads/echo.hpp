#pragma once
// The echo workload (workload.type = "echo"): a single-threaded io_uring echo server and
// closed-loop clients over loopback TCP. See docs/models/echo.md.
#include <deque>
#include <limits>
#include <memory>
#include <queue>
#include <vector>

#include "models/cpu_placer.hpp"
#include "models/model.hpp"
#include "models/net/socket.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/uring.hpp"
#include "models/workloads/echo_multishot.hpp"
#include "models/workloads/echo_params.hpp"
#include "sim/random.hpp"

namespace uringsim::models {

class EchoModel final : public Model {
 public:
  EchoModel(const EchoParams& p, const config::CostTable& costs);
  ~EchoModel() override;
  int external_cpus() const override { return p_.local_clients ? 0 : 1; }
  void build(sim::Engine& engine, analysis::RunMetrics& metrics) override;
  void final_checks() const override;
  void report(nlohmann::json& results) const override;
  std::vector<std::pair<std::string, std::string>> summary() const override;
  std::string latency_measure() const override;

 private:
  struct Event {
    sim::TimeNs t;
    int conn;
    bool operator>(const Event& o) const { return t > o.t || (t == o.t && conn > o.conn); }
  };
  struct Driver {
    sim::Thread* thread = nullptr;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap;
    sim::TimeNs sleeping_until = std::numeric_limits<double>::infinity();  // -1 while running
    // Local clients: connections whose echo is readable, in arrival order (the epoll ready list),
    // and whether the thread sleeps in epoll_wait (then the server's send wakes it).
    std::deque<int> ready;
    bool in_wait = false;
  };
  struct Conn {
    sim::TimeNs t_sent = 0;  // when the client sent the message in flight
    int echo_from_cpu = -1;  // local clients: the CPU whose send made the echo readable
    int driver = 0;
    // Local clients: the client socket's spinlock, which the server's send holds while it queues
    // the echo and wakes the client, and the client's recv takes (lock_sock).
    std::unique_ptr<sim::SpinLock> client_slock;
  };

  void declare_topology(sim::Engine& engine);
  void server_main();
  void driver_main(Driver& d);        // remote clients: no CPU of ours, the wire's delay
  void local_client_main(Driver& d);  // local clients: an epoll loop on this machine's CPUs
  void client_send(int conn);
  bool record_echo(int conn, sim::TimeNs t);  // the round trip ends at t; false after the window
  void on_server_send(int conn);              // in the sender's context
  void schedule_arrival(int conn, sim::TimeNs t_arrive);
  void sampler_main();
  Request& make_request(Op op, int conn);

  EchoParams p_;
  UringCosts c_;
  SocketCosts sc_;
  ConnectionCache conn_cache_;  // both ends of every connection, the clients' calls and the server's

  sim::Engine* engine_ = nullptr;
  analysis::RunMetrics* metrics_ = nullptr;
  std::unique_ptr<CpuPlacer> placer_;
  std::unique_ptr<Uring> ring_;
  std::unique_ptr<EchoMultishotServer> multishot_;  // recv_mode "multishot": the server's loop
  // Local clients: the class of both ends' socket spinlocks (lockdep's slock-AF_INET); it outlives
  // the sockets and connections whose locks report through it.
  std::unique_ptr<sim::LockClass> slock_class_;
  std::vector<std::unique_ptr<Socket>> sockets_;
  std::vector<Conn> conns_;
  std::vector<Driver> drivers_;
  sim::Rng think_rng_;
  std::uint64_t round_trips_window_ = 0;
  std::uint64_t failed_ = 0;  // CQEs with a negative result (retried), whole run
};

}  // namespace uringsim::models
