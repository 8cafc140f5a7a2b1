#pragma once
// The server side of a loopback TCP connection. Data sent by the peer becomes readable here and
// wakes the socket's wait queue: armed polls fire (their wake callback runs in the waker's context)
// and a thread sleeping in a blocking recv is woken. Sends always fit in the socket buffer.
//
// With both ends simulated (a local peer), the peer's send delivers in a softirq on its own CPU
// that holds this socket's spinlock (bh_lock_sock_nested in tcp_v4_rcv) from queueing the data
// through its wake-ups, and a recv starts with lock_sock, which takes the same spinlock: a recv
// that runs while the sender still wakes someone spins (docs/models/sockets.md). Data from the
// network takes no lock here: its softirq is not simulated.
#include <functional>
#include <vector>

#include "config/cost_table.hpp"
#include "models/io/file.hpp"
#include "models/net/conn_cache.hpp"
#include "sim/lock.hpp"
#include "sim/types.hpp"
#include "sim/waitqueue.hpp"

namespace uringsim::models {

// CPU costs of the loopback TCP stack, for both ends: the server's socket and a local client's
// calls (see models/costs.json).
struct SocketCosts {
  sim::Cycles tcp_send, tcp_recv, tcp_recv_eagain, tcp_byte;
  sim::TimeNs net_one_way_ns;
  sim::Cycles epoll_wait;          // a local client's epoll_wait call
  double tcp_cross_cpu_lines;      // lines a loopback message moves when its ends run on different CPUs
  sim::Cycles cacheline_transfer;  // one of those lines (spin_lock_migrate_cycles)
  sim::Cycles tcp_cold;            // a send or recv whose connection's state is out of the cache
  double tcp_cache_connections;    // connections whose state the cache holds (models/net/conn_cache.hpp)
  // What the receiver of a loopback message pays for the sender's lines: 0 on the same CPU or for
  // data from the network (from_cpu -1).
  sim::Cycles cross_cpu_read(int from_cpu, int cpu) const {
    return from_cpu >= 0 && from_cpu != cpu ? tcp_cross_cpu_lines * cacheline_transfer : 0;
  }

  static SocketCosts from(const config::CostTable& t);
};

class Socket final : public File {
 public:
  // on_send(bytes): called in the sender's context when the server sends on this socket. cache:
  // where the connection's state competes with the others' for the CPU cache; none: always warm.
  // slock: the class of the socket's spinlock when the peer is local (see above); none: remote.
  Socket(int conn, const SocketCosts& costs, std::function<void(int conn, std::uint32_t bytes)> on_send,
         ConnectionCache* cache = nullptr, sim::LockClass* slock = nullptr);

  int conn() const { return conn_; }
  std::uint64_t readable_bytes() const { return rx_bytes_; }

  // The peer's data arrives (in the waker's context). from_cpu: the CPU of a local sender, whose
  // cache lines the receiver pulls if it reads on another CPU; -1 for data from the network.
  void deliver(std::uint32_t bytes, int from_cpu = -1);

  bool pollable() const override { return true; }
  bool try_issue(IoRequest& req) override;
  void issue_blocking(IoRequest& req, BlockHooks* hooks) override;
  bool poll_ready(const IoRequest& req) const override;
  void add_poll(IoRequest& req) override;
  void remove_poll(IoRequest& req) override;

 private:
  void lock_sock();  // lock_sock_nested's spinlock section, before a recv looks at the queue
  void do_recv(IoRequest& req);
  void do_send(IoRequest& req);
  sim::Cycles cold_misses();  // what this call's connection state costs to bring back into the cache

  int conn_;
  const SocketCosts& costs_;
  std::function<void(int, std::uint32_t)> on_send_;
  ConnectionCache* cache_;
  std::unique_ptr<sim::SpinLock> slock_;  // sk_lock.slock, with a local peer
  std::uint64_t rx_bytes_ = 0;
  int rx_from_cpu_ = -1;             // the local sender of the queued data, -1 if none
  std::vector<IoRequest*> pollers_;  // armed async polls waiting for POLLIN (multishot ones stay)
  sim::WaitQueue sleepers_;          // threads in a blocking recv
};

}  // namespace uringsim::models
