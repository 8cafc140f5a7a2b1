#pragma once
// The echo server's loop with recv_mode "multishot" (docs/models/multishot.md), as the host's
// server runs it (host/echo_runner.cpp), its twin: one multishot recv per connection, all
// selecting from one provided buffer ring of buf_ring_entries buffers. Each arrival is echoed
// from its own buffer, one send per connection at a time, and the buffer goes back to the ring
// when its send completes. A recv that ends (-ENOBUFS: the ring ran dry) is re-armed once a buffer
// is free; one free buffer re-arms one waiting recv.
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "models/uring/ctx.hpp"
#include "models/workloads/echo_params.hpp"

namespace uringsim::models {

class EchoMultishotServer {
 public:
  // make(op, conn): a fresh request of connection conn (its socket, user_data and SQE flags).
  using MakeRequest = std::function<Request&(Op op, int conn)>;
  EchoMultishotServer(const EchoParams& p, const UringCosts& costs, IoRingCtx& ctx, MakeRequest make);

  void run();  // the server thread's event loop; never returns

  std::uint64_t rearms() const { return rearms_; }    // recvs armed again after they ended
  std::uint64_t enobufs() const { return enobufs_; }  // of those ends, the ones with -ENOBUFS
  std::uint64_t failed() const { return failed_; }    // CQEs with another error (retried)

 private:
  struct Segment {  // a received buffer, waiting for (or in) its echo
    std::uint16_t bid;
    std::uint32_t len;
  };
  struct Conn {
    std::deque<Segment> received;  // in arrival order; the front one is being echoed
    std::uint32_t off = 0;         // bytes of the front one's echo sent so far
    bool sending = false;
    bool promised = false;  // re-armed with a buffer counted for it, until its first CQE
  };

  void on_recv(int conn, int res, unsigned flags);
  void on_send(int conn, int res);
  void prep_recv(int conn);
  void start_send(int conn);
  void prep_send(int conn);
  void give_back(std::uint16_t bid);
  // Free buffers not already counted for a re-armed recv that has not had its first CQE.
  unsigned unpromised_free() const;
  void rearm(int conn);
  void rearm_now(int conn);
  void rearm_waiting();

  const EchoParams& p_;
  const UringCosts& c_;
  IoRingCtx& ctx_;
  MakeRequest make_;
  BufRing& bufs_;
  std::vector<Conn> conns_;
  std::vector<Request*> sqes_;  // prepared, submitted at the next io_uring_enter
  unsigned held_ = 0;           // buffers received and not yet given back
  unsigned promised_ = 0;       // re-armed recvs yet to give their first CQE
  std::deque<int> waiting_;     // connections whose recv waits for a free buffer to be re-armed
  std::uint64_t rearms_ = 0, enobufs_ = 0, failed_ = 0;
};

}  // namespace uringsim::models
