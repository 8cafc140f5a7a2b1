// TWA_SIGNAL's kick: a send() that fires a poll armed on a ring whose task runs in user space on
// the other CPU. The poll's wake callback queues task_work and, the task running, kick_process()
// sends it a reschedule IPI; the task runs the task_work on its way back to user space, which
// posts the CQE that its spin loop then sees. Against the same send() with nothing armed, and
// against the armed send of calibrate_poll.cpp (a DEFER_TASKRUN ring: the task_work is queued but
// nobody is kicked), the kick's cost to the sender is what is left. The task's spin loop also
// times how long it was away (the interrupt, the task_work, the return) and when that began,
// from the start of the sender's send(): on a VM the two ends' exits overlap.
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
constexpr double kTimeoutNs = 1e9;
// The sender waits this long after the task is back in its spin loop, so that it is running in
// user space (not still on its way out of io_uring_enter) when the wake comes.
constexpr double kSettleNs = 20e3;

}  // namespace

KickRound kick_round(const Bench& b, int iters, std::string& unavailable) {
  struct alignas(64) Shared {
    alignas(64) std::atomic<std::int32_t> armed{0};    // the iteration whose poll the task armed
    alignas(64) std::atomic<std::int32_t> reaped{0};   // the iteration whose CQE it reaped
    alignas(64) std::atomic<std::int32_t> drained{0};  // the iteration whose plain send it read
    alignas(64) std::atomic<std::int32_t> plain{0};    // the iteration whose plain send is queued
    std::atomic<double> away{0}, away_at{0};           // the longest gap, and when it began
    std::atomic<bool> quit{false}, failed{false};
  } s;
  LoopbackPair p;
  KickRound r;
  std::string task_error;
  {
    Joined task([&] {
      try {
        pin_to_cpu(b.cpu_b);
        std::optional<Ring> ring;
        try {
          ring.emplace(8, 0);  // no COOP_TASKRUN: task_work_add(TWA_SIGNAL)
        } catch (const std::system_error& e) {
          task_error = fmt::format("a ring: {}", e.code().message());
          s.failed.store(true);
          return;
        }
        char in[kBytes];
        for (std::int32_t i = 1; i <= iters && !s.quit.load(); ++i) {
          io_uring_prep_poll_add(io_uring_get_sqe(ring->get()), p.server(), POLLIN);
          if (io_uring_submit(ring->get()) != 1 || io_uring_cq_ready(ring->get()) != 0) {
            task_error = "POLL_ADD on an empty socket was not armed";
            s.failed.store(true);
            return;
          }
          s.armed.store(i);
          // User space only until the CQE is there: the gaps in the clock are the kick.
          double prev = now_ns(), longest = 0, longest_at = prev;
          const double end = prev + kTimeoutNs;
          while (io_uring_cq_ready(ring->get()) == 0) {
            const double t = now_ns();
            if (t - prev > longest) {
              longest = t - prev;
              longest_at = prev;
            }
            prev = t;
            if (t > end || s.quit.load(std::memory_order_relaxed)) {
              task_error = "the kicked task_work did not post its CQE within a second";
              s.failed.store(true);
              return;
            }
          }
          // The interrupt may have come after the last clock read: the gap up to now counts too.
          if (const double t = now_ns(); t - prev > longest) {
            longest = t - prev;
            longest_at = prev;
          }
          s.away.store(longest);
          s.away_at.store(longest_at);
          io_uring_cqe* cqe = nullptr;
          if (io_uring_peek_cqe(ring->get(), &cqe) != 0 || !(cqe->res & POLLIN)) {
            task_error = "POLL_ADD did not report POLLIN";
            s.failed.store(true);
            return;
          }
          io_uring_cqe_seen(ring->get(), cqe);
          LoopbackPair::recv_all(b, p.server(), in, kBytes);
          s.reaped.store(i);
          // The plain send: read it once it is queued.
          if (!spin_until(
                  b, [&] { return s.plain.load() == i || s.quit.load(); }, kTimeoutNs) ||
              s.quit.load())
            return;
          LoopbackPair::recv_all(b, p.server(), in, kBytes);
          s.drained.store(i);
        }
      } catch (const std::exception& e) {
        task_error = e.what();
        s.failed.store(true);
      }
    });
    char out[kBytes] = {};
    double t0 = 0;  // when the last send() began (CLOCK_MONOTONIC is the same on every CPU)
    auto send = [&] {
      t0 = now_ns();
      if (::send(p.client(), out, kBytes, 0) != kBytes) b.fail("kick: send on loopback failed");
      return now_ns() - t0 - b.clock_ns;
    };
    for (std::int32_t i = 1; i <= iters; ++i) {
      if (!spin_until(
              b, [&] { return s.armed.load() == i || s.failed.load(); }, kTimeoutNs) ||
          s.failed)
        break;
      const double settle = now_ns() + kSettleNs;
      spin_until(b, [&] { return now_ns() > settle; });
      const double kick = send();
      const double kick_t0 = t0;
      if (!spin_until(
              b, [&] { return s.reaped.load() == i || s.failed.load(); }, kTimeoutNs) ||
          s.failed)
        break;
      const double plain = send();
      s.plain.store(i);
      if (!spin_until(
              b, [&] { return s.drained.load() == i || s.failed.load(); }, kTimeoutNs) ||
          s.failed)
        break;
      r.send_kick.push_back(kick);
      r.send_plain.push_back(plain);
      r.away.push_back(s.away.load());
      r.onset.push_back(s.away_at.load() - kick_t0);
    }
    s.quit.store(true);
  }  // the task joined
  if (s.failed.load()) {
    if (task_error.rfind("a ring:", 0) == 0) {
      unavailable = task_error;
      return {};
    }
    b.fail("kick: " + task_error);
  }
  return r;
}

void measure_kick(const Bench& b, Measurements& m) {
  if (b.cpu_b < 0) {
    m.kick_unavailable = "only one CPU is available to this process";
    return;
  }
  run_pinned(b, b.cpu_a, [&] {
    kick_round(b, 50, m.kick_unavailable);  // warm-up
    for (int round = 0; round < b.rounds(40) && !b.stopping() && m.kick_unavailable.empty(); ++round) {
      const KickRound r = kick_round(b, 50, m.kick_unavailable);
      if (r.send_kick.empty()) break;
      m.kick_send.push_back(median(r.send_kick));
      m.kick_send_plain.push_back(median(r.send_plain));
      m.kick_away.push_back(median(r.away));
      m.kick_onset.push_back(median(r.onset));
    }
    if (!m.kick_unavailable.empty() || m.kick_send.empty()) return;
    b.say(fmt::format(
        "  send to a poll armed by a task running on CPU {}: {:.0f} ns (plain {:.0f}); the task was away "
        "{:.0f} ns from {:.0f} ns after the send() began",
        b.cpu_b, median(m.kick_send), median(m.kick_send_plain), median(m.kick_away), median(m.kick_onset)));
  });
}

}  // namespace uringsim::host::calib
