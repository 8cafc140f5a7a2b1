// io-wq: NOP batches inline and through one io-wq worker (IOSQE_ASYNC), submitter and worker on
// one CPU, each fitted as T(n) = a + b n: the slopes differ by the per-item io-wq work, the
// wake-ups and switches stay in a. The submitter's share of that work alone: NOPs queued while the
// worker is held in an fsync, and the same with sends, whose prep allocates an async header. And
// the first IOSQE_ASYNC request of a fresh task, which has to create its worker.
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "host/calibrate_bench.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host::calib {
namespace {

// Keeps the ring's io-wq workers on `cpu` (IORING_REGISTER_IOWQ_AFF); "" or why it failed.
std::string pin_workers(io_uring* ring, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = io_uring_register_iowq_aff(ring, sizeof set, &set);
  return rc < 0 ? fmt::format("IORING_REGISTER_IOWQ_AFF: {}", std::strerror(-rc)) : "";
}

// One NOP submitted and waited for; the enter call alone is timed.
double nop_round_trip_ns(const Bench& b, io_uring* ring, bool async) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  io_uring_prep_nop(sqe);
  if (async) sqe->flags |= IOSQE_ASYNC;
  const double t0 = now_ns();
  const int rc = io_uring_submit_and_wait(ring, 1);
  const double t = now_ns() - t0 - b.clock_ns;
  if (rc != 1) b.fail(fmt::format("NOP round trip: io_uring_submit_and_wait returned {}", rc));
  reap_one(b, ring, 0, "NOP round trip");
  return t;
}

double median_round_trip(const Bench& b, io_uring* ring, bool async, int reps) {
  std::vector<double> t;
  for (int i = 0; i < reps && !b.stopping(); ++i) t.push_back(nop_round_trip_ns(b, ring, async));
  return t.empty() ? 0 : median(t);
}

// n NOPs submitted and waited for in one io_uring_enter, which alone is timed.
double nop_batch_ns(const Bench& b, io_uring* ring, unsigned n, bool async) {
  for (unsigned i = 0; i < n; ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    io_uring_prep_nop(sqe);
    if (async) sqe->flags |= IOSQE_ASYNC;
  }
  const double t0 = now_ns();
  const int rc = io_uring_submit_and_wait(ring, n);
  const double t = now_ns() - t0 - b.clock_ns;
  if (rc != static_cast<int>(n)) b.fail(fmt::format("NOP batch: submitted {} of {}", rc, n));
  for (unsigned i = 0; i < n; ++i) reap_one(b, ring, 0, "NOP batch");
  return t;
}

// T(n) = a + b n over batches of n NOPs, inline or through the ring's one io-wq worker.
Line batch_fit(const Bench& b, io_uring* ring, bool async) {
  std::vector<double> x, y;
  for (unsigned n : {1u, 2u, 4u, 8u, 16u, 32u}) {
    std::vector<double> t;
    for (int i = 0; i < 40 && !b.stopping(); ++i) t.push_back(nop_batch_ns(b, ring, n, async));
    if (t.empty()) return {};
    x.push_back(n);
    y.push_back(median(t));
  }
  return fit_line(x, y);
}

// A file on a disk-backed filesystem whose fsync blocks the io-wq worker that runs it (it waits for
// the writeback), in `dir`; unlinked at once, so nothing is left behind. -1 and `why` if none can be
// made.
int fsync_file(const std::string& dir, std::string& why) {
  std::string path = dir + "/uringsim-calibrate-fsync-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    why = fmt::format("cannot create a file in {}: {}", dir, std::strerror(errno));
    return -1;
  }
  ::unlink(path.c_str());
  return fd;
}

// The sends' side: a loopback TCP connection to send 1 byte at a time on (its peer emptied after
// each sample), and two pipes for a splice that holds the unbound account's one worker. Sockets
// are unbound work (unbound_nonreg_file), so the fsync, which holds the bound worker, does not hold
// them up; a splice from an empty pipe blocks in its worker (no poll: splice is not pollin or
// pollout) until a byte is written to that pipe.
class SendQueue {
 public:
  SendQueue() {
    if (::pipe(in_) != 0 || ::pipe(out_) != 0)
      throw std::runtime_error(fmt::format("io-wq queueing: pipe: {}", std::strerror(errno)));
    ::fcntl(out_[0], F_SETFL, O_NONBLOCK);
  }
  ~SendQueue() {
    for (int fd : {in_[0], in_[1], out_[0], out_[1]})
      if (fd >= 0) ::close(fd);
  }
  SendQueue(const SendQueue&) = delete;
  SendQueue& operator=(const SendQueue&) = delete;
  int send_fd() const { return pair_.client(); }
  void hold(io_uring_sqe* sqe) const { io_uring_prep_splice(sqe, in_[0], -1, out_[1], -1, 1, 0); }
  void release(const Bench& b) const {
    if (::write(in_[1], "x", 1) != 1)
      b.fail(fmt::format("io-wq queueing: pipe write: {}", std::strerror(errno)));
  }
  void drain() const {
    char buf[64];
    while (::recv(pair_.server(), buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
    while (::read(out_[0], buf, sizeof buf) > 0) {
    }
  }

 private:
  LoopbackPair pair_;
  int in_[2] = {-1, -1}, out_[2] = {-1, -1};
};

// One sample: an IOSQE_ASYNC request takes the worker of the account the queued work goes to and
// blocks there (NOPs: an fsync of freshly written data, until the writeback ends, in the bound
// account; sends: the splice above, in the unbound one); then n IOSQE_ASYNC NOPs (or sends) are
// submitted (not waited for) and the submit alone is timed. They queue behind it: no free worker to
// wake, none may be created. false if a CQE was already posted when the submit returned (the
// worker was not held).
bool queued_submit_ns(const Bench& b, io_uring* ring, int fd, const SendQueue* sends, unsigned n,
                      double& ns) {
  static const char byte = 'x';
  static char data[1 << 20];  // enough writeback to outlast the submit by far
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (sends) {
    sends->hold(sqe);
  } else {
    if (::pwrite(fd, data, sizeof data, 0) != static_cast<ssize_t>(sizeof data))
      b.fail(fmt::format("io-wq queueing: pwrite: {}", std::strerror(errno)));
    io_uring_prep_fsync(sqe, fd, 0);
  }
  sqe->flags |= IOSQE_ASYNC;
  sqe->user_data = 1;
  if (io_uring_submit(ring) != 1) b.fail("io-wq queueing: the holding request was not submitted");
  ::usleep(100);  // the CPU is idle while this thread sleeps: the worker takes the request and blocks
  for (unsigned i = 0; i < n; ++i) {
    sqe = io_uring_get_sqe(ring);
    if (sends)
      io_uring_prep_send(sqe, sends->send_fd(), &byte, 1, MSG_NOSIGNAL);
    else
      io_uring_prep_nop(sqe);
    sqe->flags |= IOSQE_ASYNC;
    sqe->user_data = 0;
  }
  const double t0 = now_ns();
  const int rc = io_uring_submit(ring);
  ns = now_ns() - t0 - b.clock_ns;
  if (rc != static_cast<int>(n)) b.fail(fmt::format("io-wq queueing: submitted {} of {}", rc, n));
  const bool held = io_uring_cq_ready(ring) == 0;
  if (sends) sends->release(b);
  for (unsigned i = 0; i <= n; ++i) {
    io_uring_cqe* cqe = nullptr;
    __kernel_timespec ts{30, 0};  // an fsync of 1 MiB: seconds only on a broken disk
    if (io_uring_wait_cqe_timeout(ring, &cqe, &ts) != 0 || !cqe)
      b.fail("io-wq queueing: a CQE did not come within 30 s");
    if (cqe->res < 0) b.fail(fmt::format("io-wq queueing: a request failed: {}", std::strerror(-cqe->res)));
    io_uring_cqe_seen(ring, cqe);
  }
  if (sends) sends->drain();
  return held;
}

enum class QueuedMiss { NotHeld, TooLong };

// T(n) = a + b n over the submit of n NOPs and of n sends queued behind the held worker, the two
// kinds alternating sample by sample; each depth's median over the samples in which the worker was
// held. None, and `why`, if fewer than half of a depth's samples were, or if the samples ran past
// `deadline` (a slow disk's fsyncs).
struct QueuedLines {
  Line nop, send;
};
std::optional<QueuedLines> queued_fit(const Bench& b, io_uring* ring, int fd, const SendQueue& sends,
                                      double deadline, Measurements& m, QueuedMiss& why) {
  std::vector<double> x, nop_y, send_y;
  for (unsigned n : {1u, 2u, 4u, 8u, 16u, 32u}) {
    std::vector<double> t[2];
    constexpr int kReps = 11;
    for (int i = 0; i < 2 * kReps && !b.stopping(); ++i) {
      if (now_ns() > deadline) {
        why = QueuedMiss::TooLong;
        return std::nullopt;
      }
      const int kind = i % 2;  // 0: NOPs, 1: sends
      double ns = 0;
      if (queued_submit_ns(b, ring, fd, kind == 0 ? nullptr : &sends, n, ns)) {
        t[kind].push_back(ns);
        ++m.iowq_queued_kept;
      } else {
        ++m.iowq_queued_dropped;
      }
    }
    if (2 * t[0].size() < kReps || 2 * t[1].size() < kReps) {
      why = QueuedMiss::NotHeld;
      return std::nullopt;
    }
    x.push_back(n);
    nop_y.push_back(median(t[0]));
    send_y.push_back(median(t[1]));
  }
  return QueuedLines{fit_line(x, nop_y), fit_line(x, send_y)};
}

// The submitter's side of queueing, per round (m.iowq_queued_*), or why it was left out. A few
// seconds at most a pass: this disk's fsyncs set the pace, not the kernel's queueing.
void measure_queued(const Bench& b, io_uring* ring, Measurements& m) {
  if (!m.iowq_queued_unavailable.empty()) return;  // an earlier pass found it unusable here
  const std::string dir = std::filesystem::temp_directory_path().string();
  const int fd = fsync_file(dir, m.iowq_queued_unavailable);
  if (fd < 0) return;
  const SendQueue sends;
  const double budget_s = b.quick ? 3 : 10, deadline = now_ns() + budget_s * 1e9;
  for (int r = 0; r < b.rounds(8) && !b.stopping(); ++r) {
    QueuedMiss why = QueuedMiss::NotHeld;
    const std::optional<QueuedLines> q = queued_fit(b, ring, fd, sends, deadline, m, why);
    if (!q) {
      m.iowq_queued_unavailable =
          why == QueuedMiss::TooLong
              ? fmt::format("the fsyncs in {} holding the io-wq worker took over {:.0f} s for the samples",
                            dir, budget_s)
              : fmt::format(
                    "the fsync in {} did not hold the io-wq worker while NOPs were queued ({} of {} "
                    "samples had a CQE posted during the submit): a filesystem whose fsync does not "
                    "wait?",
                    dir, m.iowq_queued_dropped, m.iowq_queued_dropped + m.iowq_queued_kept);
      m.iowq_queued_a.clear();
      m.iowq_queued_b.clear();
      m.iowq_queued_send_a.clear();
      m.iowq_queued_send_b.clear();
      break;
    }
    m.iowq_queued_a.push_back(q->nop.a);
    m.iowq_queued_b.push_back(q->nop.b);
    m.iowq_queued_send_a.push_back(q->send.a);
    m.iowq_queued_send_b.push_back(q->send.b);
  }
  ::close(fd);
  if (m.iowq_queued_unavailable.empty() && !m.iowq_queued_b.empty())
    b.say(fmt::format(
        "  IOSQE_ASYNC NOPs queued behind a worker held in an fsync: submit {:.0f} + {:.1f} ns x n, "
        "sends {:.0f} + {:.1f} ns x n ({} samples kept, {} dropped)",
        median(m.iowq_queued_a), median(m.iowq_queued_b), median(m.iowq_queued_send_a),
        median(m.iowq_queued_send_b), m.iowq_queued_kept, m.iowq_queued_dropped));
}

// In a new thread (a new io_uring task, hence a new io-wq with no worker yet): the first
// IOSQE_ASYNC NOP minus the median of the next few, which find the worker idle.
double first_worker_extra_ns(const Bench& b, std::string& unavailable) {
  double extra = 0;
  std::exception_ptr error;
  {
    Joined t([&] {
      try {
        pin_to_cpu(b.cpu_a);
        Ring ring(8);
        if (unavailable = pin_workers(ring.get(), b.cpu_a); !unavailable.empty()) return;
        nop_round_trip_ns(b, ring.get(), false);  // the task's io_uring context is set up by now
        const double first = nop_round_trip_ns(b, ring.get(), true);
        extra = first - median_round_trip(b, ring.get(), true, 7);
      } catch (...) {
        error = std::current_exception();
      }
    });
  }
  if (error) std::rethrow_exception(error);
  return extra;
}

}  // namespace

void measure_iowq(const Bench& b, Measurements& m) {
  run_pinned(b, b.cpu_a, [&] {
    Ring ring(64);
    if (m.iowq_unavailable = pin_workers(ring.get(), b.cpu_a); !m.iowq_unavailable.empty()) return;
    // One worker: a batch is worked through by it alone, after the submitter has queued all of it.
    unsigned limits[2] = {1, 1};
    if (const int rc = io_uring_register_iowq_max_workers(ring.get(), limits); rc < 0) {
      m.iowq_unavailable = fmt::format("IORING_REGISTER_IOWQ_MAX_WORKERS: {}", std::strerror(-rc));
      return;
    }
    median_round_trip(b, ring.get(), true, 200);  // the worker exists from here on
    for (int r = 0; r < b.rounds(60) && !b.stopping(); ++r) {
      const Line in = batch_fit(b, ring.get(), false), wq = batch_fit(b, ring.get(), true);
      m.iowq_inline_a.push_back(in.a);
      m.iowq_inline_b.push_back(in.b);
      m.iowq_async_a.push_back(wq.a);
      m.iowq_async_b.push_back(wq.b);
    }
    b.say(
        fmt::format("  NOP batches on CPU {} (one io-wq worker, same CPU): inline {:.0f} + {:.1f} ns x n, "
                    "IOSQE_ASYNC {:.0f} + {:.1f} ns x n",
                    b.cpu_a, median(m.iowq_inline_a), median(m.iowq_inline_b), median(m.iowq_async_a),
                    median(m.iowq_async_b)));
    measure_queued(b, ring.get(), m);
    for (int s = 0; s < b.rounds(100) && !b.stopping(); ++s) {
      m.worker_first_extra.push_back(first_worker_extra_ns(b, m.iowq_unavailable));
      if (!m.iowq_unavailable.empty()) return;
    }
    b.say(fmt::format("  first IOSQE_ASYNC NOP of a new task: +{:.0f} ns (worker creation)",
                      median(m.worker_first_extra)));
  });
}

}  // namespace uringsim::host::calib
