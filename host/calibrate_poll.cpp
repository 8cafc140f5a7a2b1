// Poll on a socket, one thread. The ring uses DEFER_TASKRUN so that the three steps land in three
// different calls: the submit arms the poll, the send() wakes it and only queues task_work, and
// io_uring_enter(GETEVENTS) runs the task_work. Without it the task_work would run on the way out
// of send() and the wake could not be told from the run. IORING_OP_POLL_ADD arms the same poll as
// a recv's -EAGAIN does (__io_arm_poll_handler) but its task_work posts the CQE without a recv, so
// the ~1 us loopback recv is not in any difference; a recv-armed poll is timed for comparison.
#include <poll.h>
#include <sys/socket.h>

#include <cstring>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "host/calibrate_bench.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host::calib {
namespace {

constexpr int kBytes = 64;

struct Round {
  std::vector<double> poll_add, send_armed, getevents, enter_null, send_plain, recv_arm, data, data_fixed;
};

template <typename F>
double timed(const Bench& b, F f) {
  const double t0 = now_ns();
  f();
  return now_ns() - t0 - b.clock_ns;
}

void submit_one(const Bench& b, io_uring* ring, unsigned wait_for) {
  if (io_uring_submit_and_wait(ring, wait_for) != 1) b.fail("poll: a request was not submitted");
}

void get_events(const Bench& b, io_uring* ring) {
  if (io_uring_enter(ring->ring_fd, 0, 1, IORING_ENTER_GETEVENTS, nullptr) < 0)
    b.fail("poll: io_uring_enter(GETEVENTS) failed");
}

void one_iteration(const Bench& b, io_uring* ring, const LoopbackPair& p, Round& r) {
  char out[kBytes] = {}, in[kBytes];
  auto send = [&] {
    if (::send(p.client(), out, kBytes, 0) != kBytes) b.fail("poll: send on loopback failed");
  };
  // IORING_OP_POLL_ADD: the arm, the wake and the task_work without a recv in any of them.
  io_uring_prep_poll_add(io_uring_get_sqe(ring), p.server(), POLLIN);
  r.poll_add.push_back(timed(b, [&] { submit_one(b, ring, 0); }));
  if (io_uring_cq_ready(ring) != 0) b.fail("poll: POLL_ADD on an empty socket completed at once");
  r.send_armed.push_back(timed(b, send));
  r.getevents.push_back(timed(b, [&] { get_events(b, ring); }));
  io_uring_cqe* cqe = nullptr;
  if (io_uring_peek_cqe(ring, &cqe) != 0 || !(cqe->res & POLLIN))
    b.fail("poll: POLL_ADD did not report POLLIN");
  io_uring_cqe_seen(ring, cqe);
  LoopbackPair::recv_all(b, p.server(), in, kBytes);
  r.enter_null.push_back(
      timed(b, [&] { io_uring_enter(ring->ring_fd, 0, 0, IORING_ENTER_GETEVENTS, nullptr); }));
  // The same send with nothing armed.
  r.send_plain.push_back(timed(b, send));
  LoopbackPair::recv_all(b, p.server(), in, kBytes);
  // A recv on the empty socket: -EAGAIN inline, then async poll armed; completed by a send.
  io_uring_prep_recv(io_uring_get_sqe(ring), p.server(), in, kBytes, 0);
  r.recv_arm.push_back(timed(b, [&] { submit_one(b, ring, 0); }));
  send();
  get_events(b, ring);
  reap_one(b, ring, kBytes, "poll: recv after the wake");
  // Recvs that find their data, by fd and through the registered file.
  for (const bool fixed : {false, true}) {
    send();
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    io_uring_prep_recv(sqe, fixed ? 0 : p.server(), in, kBytes, 0);
    if (fixed) sqe->flags |= IOSQE_FIXED_FILE;
    (fixed ? r.data_fixed : r.data).push_back(timed(b, [&] { submit_one(b, ring, 1); }));
    reap_one(b, ring, kBytes, "poll: recv with data");
  }
}

}  // namespace

void measure_poll(const Bench& b, Measurements& m) {
  run_pinned(b, b.cpu_a, [&] {
    std::optional<Ring> ring;
    try {
      ring.emplace(8, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
    } catch (const std::system_error& e) {
      m.poll_unavailable = fmt::format("a ring with IORING_SETUP_DEFER_TASKRUN: {}", e.code().message());
      return;
    }
    LoopbackPair p;
    const int fd = p.server();
    if (const int rc = io_uring_register_files(ring->get(), &fd, 1); rc < 0) {
      m.poll_unavailable = fmt::format("io_uring_register_files: {}", std::strerror(-rc));
      return;
    }
    Round warm;
    for (int i = 0; i < 100; ++i) one_iteration(b, ring->get(), p, warm);
    for (int round = 0; round < b.rounds(60) && !b.stopping(); ++round) {
      Round r;
      for (int i = 0; i < 200 && !b.stopping(); ++i) one_iteration(b, ring->get(), p, r);
      if (r.poll_add.empty()) break;
      m.poll_add.push_back(median(r.poll_add));
      m.poll_send_armed.push_back(median(r.send_armed));
      m.poll_getevents.push_back(median(r.getevents));
      m.poll_enter_null.push_back(median(r.enter_null));
      m.poll_send_plain.push_back(median(r.send_plain));
      m.poll_recv_arm.push_back(median(r.recv_arm));
      m.poll_data.push_back(median(r.data));
      m.poll_data_fixed.push_back(median(r.data_fixed));
    }
    b.say(fmt::format(
        "  POLL_ADD arm {:.0f} ns (recv on the empty socket {:.0f}); send to the armed socket {:.0f} ns "
        "(plain {:.0f}); GETEVENTS running the task_work {:.0f} ns (nothing to do {:.0f}); recv with "
        "data {:.0f} ns (registered file {:.0f})",
        median(m.poll_add), median(m.poll_recv_arm), median(m.poll_send_armed), median(m.poll_send_plain),
        median(m.poll_getevents), median(m.poll_enter_null), median(m.poll_data), median(m.poll_data_fixed)));
  });
}

}  // namespace uringsim::host::calib
