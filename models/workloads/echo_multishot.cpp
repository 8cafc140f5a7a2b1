#include "models/workloads/echo_multishot.hpp"

#include <algorithm>

#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
// The single-shot loop's profile symbols (the same names: the same labels).
sim::Label sym_app() {
  static const sim::Label l = sim::intern("[app] event loop");
  return l;
}
sim::Label sym_prep() {
  static const sim::Label l = sim::intern("[app] io_uring_prep");
  return l;
}
sim::Label sym_work() {
  static const sim::Label l = sim::intern("[app] server work");
  return l;
}
sim::Label sym_recycle() {
  static const sim::Label l = sim::intern("[app] io_uring_buf_ring_add");
  return l;
}
}  // namespace

EchoMultishotServer::EchoMultishotServer(const EchoParams& p, const UringCosts& costs, IoRingCtx& ctx,
                                         MakeRequest make)
    : p_(p),
      c_(costs),
      ctx_(ctx),
      make_(std::move(make)),
      bufs_(ctx.register_buf_ring(p.buf_ring_entries)),
      conns_(static_cast<std::size_t>(p.connections)) {}

void EchoMultishotServer::run() {
  auto& self = sim::current();
  for (int b = 0; b < p_.buf_ring_entries; ++b) give_back(static_cast<std::uint16_t>(b));
  for (int c = 0; c < p_.connections; ++c) prep_recv(c);
  for (;;) {
    // As the single-shot loop: wait for wait_nr CQEs, at most what is in flight; a multishot
    // recv counts as one until its final CQE.
    const auto in_flight = static_cast<int>(ctx_.in_flight() + sqes_.size());
    ctx_.enter(sqes_, std::min(p_.setup.wait_nr, in_flight));
    Cqe cqe;
    while (ctx_.pop_cqe(cqe)) {
      self.charge(c_.app_cqe, sym_app());
      const int conn = static_cast<int>(cqe.user_data);
      const Op op = cqe.req->op;
      if (!(cqe.flags & kCqeFMore)) ctx_.release(*cqe.req);  // its last CQE
      if (op == Op::Recv)
        on_recv(conn, cqe.result, cqe.flags);
      else
        on_send(conn, cqe.result);
    }
  }
}

void EchoMultishotServer::on_recv(int conn, int res, unsigned flags) {
  Conn& cn = conns_[static_cast<std::size_t>(conn)];
  if (cn.promised) {  // a re-armed recv's first CQE: it has had its turn at a free buffer
    cn.promised = false;
    --promised_;
  }
  if (res > 0) {  // data, in the buffer the CQE names
    ++held_;
    cn.received.push_back(
        {static_cast<std::uint16_t>(flags >> kCqeBufferShift), static_cast<std::uint32_t>(res)});
    sim::current().charge(p_.server_work_cycles, sym_work());
    if (!cn.sending) start_send(conn);
  } else if (res == kENoBufs) {  // the ring ran dry: not a failure
    ++enobufs_;
  } else {  // e.g. -ECANCELED: armed again below
    ++failed_;
  }
  if (!(flags & kCqeFMore)) rearm(conn);
}

void EchoMultishotServer::on_send(int conn, int res) {
  Conn& cn = conns_[static_cast<std::size_t>(conn)];
  if (res < 0) {  // send the rest of the echo again
    ++failed_;
    prep_send(conn);
    return;
  }
  cn.off += static_cast<std::uint32_t>(res);
  if (cn.off < cn.received.front().len) {  // a short send: the rest
    prep_send(conn);
    return;
  }
  // The echo of this buffer is out: the buffer goes back to the ring, then the next one.
  give_back(cn.received.front().bid);
  cn.received.pop_front();
  --held_;
  cn.sending = false;
  if (!cn.received.empty()) start_send(conn);
  rearm_waiting();
}

void EchoMultishotServer::prep_recv(int conn) {
  sim::current().charge(c_.app_sqe_prep, sym_prep());
  Request& r = make_(Op::Recv, conn);
  r.multishot = true;  // io_uring_prep_recv_multishot, IOSQE_BUFFER_SELECT, buffers of msg_bytes
  r.buf_ring = &bufs_;
  r.bytes = p_.msg_bytes;
  sqes_.push_back(&r);
}

void EchoMultishotServer::start_send(int conn) {
  Conn& cn = conns_[static_cast<std::size_t>(conn)];
  cn.sending = true;
  cn.off = 0;
  prep_send(conn);
}

void EchoMultishotServer::prep_send(int conn) {
  const Conn& cn = conns_[static_cast<std::size_t>(conn)];
  sim::current().charge(c_.app_sqe_prep, sym_prep());
  Request& r = make_(Op::Send, conn);
  r.bytes = cn.received.front().len - cn.off;
  sqes_.push_back(&r);
}

void EchoMultishotServer::give_back(std::uint16_t bid) {
  sim::current().charge(c_.app_buf_recycle, sym_recycle());
  bufs_.give_back(bid);
}

unsigned EchoMultishotServer::unpromised_free() const {
  const unsigned entries = static_cast<unsigned>(p_.buf_ring_entries);
  const unsigned taken = held_ + promised_;
  return taken < entries ? entries - taken : 0;
}

// A recv that ended with -ENOBUFS has data waiting, so it takes a buffer as soon as it is armed;
// with none free it would end again at once: it waits for a send to give one back.
void EchoMultishotServer::rearm(int conn) {
  if (unpromised_free() == 0) {
    waiting_.push_back(conn);
    return;
  }
  rearm_now(conn);
}

void EchoMultishotServer::rearm_now(int conn) {
  ++rearms_;
  conns_[static_cast<std::size_t>(conn)].promised = true;
  ++promised_;
  prep_recv(conn);
}

void EchoMultishotServer::rearm_waiting() {
  while (!waiting_.empty() && unpromised_free() > 0) {
    const int conn = waiting_.front();
    waiting_.pop_front();
    rearm_now(conn);
  }
}

}  // namespace uringsim::models
