#include "models/net/socket.hpp"

#include <algorithm>

#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
sim::Label sym_recv() {
  static const sim::Label l = sim::intern("tcp_recvmsg");
  return l;
}
sim::Label sym_send() {
  static const sim::Label l = sim::intern("tcp_sendmsg_locked");
  return l;
}
sim::Label site_rcv() {  // the sender's softirq: bh_lock_sock_nested in tcp_v4_rcv
  static const sim::Label l = sim::intern("tcp_v4_rcv");
  return l;
}
sim::Label site_lock_sock() {
  static const sim::Label l = sim::intern("lock_sock_nested");
  return l;
}
}  // namespace

SocketCosts SocketCosts::from(const config::CostTable& t) {
  SocketCosts c;
  c.tcp_send = t.get("tcp_send_cycles");
  c.tcp_recv = t.get("tcp_recv_cycles");
  c.tcp_recv_eagain = t.get("tcp_recv_eagain_cycles");
  c.tcp_byte = t.get("tcp_byte_cycles");
  c.net_one_way_ns = t.get("net_one_way_ns");
  c.epoll_wait = t.get("epoll_wait_cycles");
  c.tcp_cross_cpu_lines = t.get("tcp_cross_cpu_lines");
  c.cacheline_transfer = t.get("spin_lock_migrate_cycles");
  c.tcp_cold = t.get("tcp_cold_cycles");
  c.tcp_cache_connections = t.get("tcp_cache_connections");
  return c;
}

Socket::Socket(int conn, const SocketCosts& costs, std::function<void(int, std::uint32_t)> on_send,
               ConnectionCache* cache, sim::LockClass* slock)
    : conn_(conn),
      costs_(costs),
      on_send_(std::move(on_send)),
      cache_(cache),
      slock_(slock ? std::make_unique<sim::SpinLock>(*slock) : nullptr) {}

void Socket::lock_sock() {
  if (!slock_) return;
  slock_->lock(site_lock_sock());
  slock_->unlock();  // the socket is the caller's (owned) from here; the spinlock is free again
}

sim::Cycles Socket::cold_misses() {
  return cache_ ? cache_->touch(conn_) : 0;
}

void Socket::deliver(std::uint32_t bytes, int from_cpu) {
  // The data is readable from the end of the sender's work (its send, whose softirq queued it):
  // published at the sender's local date, not earlier, whoever reads it next. A local sender's
  // softirq holds the socket's spinlock across the queueing and the wake-ups.
  sim::Thread* sender = sim::current_if();
  const bool locked = slock_ && sender && sender->accounted();
  if (locked)
    slock_->lock(site_rcv());
  else if (sender)
    sender->reach_shared();
  rx_bytes_ += bytes;
  rx_from_cpu_ = from_cpu;
  // sk_data_ready: wake every poll entry (each runs its requester's wake function here) and the
  // blocking readers. One-shot entries leave the queue as they fire; multishot ones stay.
  std::vector<IoRequest*> fired;
  fired.swap(pollers_);
  for (IoRequest* r : fired)
    if (r->poll_multishot()) pollers_.push_back(r);
  for (IoRequest* r : fired) {
    // A wake function can let other threads run; one of them may have removed a multishot entry
    // meanwhile (its request ended), and a removed entry is never woken.
    if (r->poll_multishot() && std::find(pollers_.begin(), pollers_.end(), r) == pollers_.end()) continue;
    r->poll_wake();
  }
  sleepers_.wake_all(sim::Wake::Sync);  // sock_def_readable: wake_up_interruptible_sync_poll
  if (locked) slock_->unlock();
}

void Socket::do_recv(IoRequest& req) {
  const std::uint32_t got = static_cast<std::uint32_t>(std::min<std::uint64_t>(rx_bytes_, req.bytes));
  rx_bytes_ -= got;
  req.result = static_cast<int>(got);
  auto& self = sim::current();
  self.charge(costs_.tcp_recv + costs_.tcp_byte * got + cold_misses(), sym_recv());
  self.charge(costs_.cross_cpu_read(rx_from_cpu_, self.cpu()), sym_recv());  // the sender's lines
  if (rx_bytes_ == 0) rx_from_cpu_ = -1;
}

void Socket::do_send(IoRequest& req) {
  sim::current().charge(costs_.tcp_send + costs_.tcp_byte * req.bytes + cold_misses(), sym_send());
  req.result = static_cast<int>(req.bytes);
  on_send_(conn_, req.bytes);
}

bool Socket::try_issue(IoRequest& req) {
  if (req.op == Op::Send) {
    do_send(req);
    return true;
  }
  lock_sock();
  if (rx_bytes_ == 0) {
    sim::current().charge(costs_.tcp_recv_eagain, sym_recv());
    return false;
  }
  do_recv(req);
  return true;
}

void Socket::issue_blocking(IoRequest& req, BlockHooks* hooks) {
  if (req.op == Op::Send) {
    do_send(req);
    return;
  }
  lock_sock();
  while (rx_bytes_ == 0) {
    sim::current().charge(costs_.tcp_recv_eagain, sym_recv());
    if (hooks) hooks->before_block();
    // The kernel queues the task on the socket before the sleep hook runs, so data that arrives
    // during the hook makes it runnable again and schedule() does not sleep: check again.
    if (rx_bytes_ == 0) sleepers_.wait();
    if (hooks) hooks->after_block();
    lock_sock();  // sk_wait_data gave the socket up while it slept
  }
  do_recv(req);
}

bool Socket::poll_ready(const IoRequest& req) const {
  return req.op == Op::Send || rx_bytes_ > 0;
}

void Socket::add_poll(IoRequest& req) {
  pollers_.push_back(&req);
}

void Socket::remove_poll(IoRequest& req) {
  pollers_.erase(std::remove(pollers_.begin(), pollers_.end(), &req), pollers_.end());
}

}  // namespace uringsim::models
