#include "host/echo_runner.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <queue>
#include <random>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/input_error.hpp"
#include "host/duration_sampler.hpp"
#include "host/guard.hpp"
#include "host/host_results.hpp"
#include "host/machine_info.hpp"
#include "host/model_fields.hpp"
#include "host/ring_setup.hpp"
#include "host/run_frame.hpp"
#include "host/thread_setup.hpp"

namespace uringsim::host {
namespace {

using Clock = RunGuard::Clock;
constexpr std::uint64_t kStopTag = ~std::uint64_t{0};    // the server's poll on the stop eventfd
constexpr std::uint64_t kCancelTag = ~std::uint64_t{1};  // the teardown's cancel of everything in flight
constexpr std::int64_t kDrainNs = 2'000'000'000;         // how long the teardown waits for it
constexpr std::uint32_t kStopEvent = ~std::uint32_t{0};
// The clients' first messages are spread over this span so they do not all arrive at once (as
// the model does).
constexpr double kFirstSendSpreadNs = 100e3;

struct EchoParams {
  int connections = 0;
  std::uint32_t msg_bytes = 0;
  bool force_async = false, fixed_files = false;
  int wait_nr = 1;         // min_complete of the loop's waits (capped at what is in flight)
  bool multishot = false;  // recv_mode "multishot"
  unsigned buf_ring_entries = 0;
  double work_ns = 0;  // server_work_cycles at the nominal clock
  int nice = 0;
  int client_threads = 1;
  int server_cpu = -1;
  std::vector<int> client_cpus;
  std::uint64_t seed = 0;
};

EchoParams read_params(const config::Scenario& s, const MachineInfo& m) {
  EchoParams p;
  p.connections = s.at("/workload/connections").get<int>();
  p.msg_bytes = s.at("/workload/msg_bytes").get<std::uint32_t>();
  p.force_async = s.at("/workload/force_async").get<bool>();
  p.fixed_files = s.at("/workload/fixed_files").get<bool>();
  p.wait_nr = s.at("/workload/wait_nr").get<int>();
  p.multishot = s.at("/workload/recv_mode").get<std::string>() == "multishot";
  p.buf_ring_entries = s.at("/workload/buf_ring_entries").get<unsigned>();
  p.nice = s.at("/workload/server_nice").get<int>();
  p.client_threads = s.at("/workload/client_threads").get<int>();
  p.server_cpu = s.at("/workload/server_cpu").get<int>();
  p.client_cpus = s.at("/workload/client_cpus").get<std::vector<int>>();
  p.seed = s.at("/seed").get<std::uint64_t>();
  check_cpu_index(s.source, "/workload/server_cpu", p.server_cpu);
  for (std::size_t i = 0; i < p.client_cpus.size(); ++i)
    check_cpu_index(s.source, fmt::format("/workload/client_cpus/{}", i), p.client_cpus[i]);
  check_ring_fields(s);
  const double cycles = s.at("/workload/server_work_cycles").get<double>();
  if (cycles > 0) {
    if (m.ghz_nominal <= 0)
      throw Unavailable(s.source +
                        ": /workload/server_work_cycles: the CPU's nominal clock is unknown (no \"@ GHz\" "
                        "in its model name, no \"cpu MHz\" in /proc/cpuinfo), so cycles cannot be timed");
    p.work_ns = cycles / m.ghz_nominal;
  }
  return p;
}

// Two descriptors per connection (client and server ends) plus a few: raise the soft limit if needed.
void ensure_file_limit(int connections) {
  const rlim_t need = 2 * static_cast<rlim_t>(connections) + 64;
  rlimit r{};
  ::getrlimit(RLIMIT_NOFILE, &r);
  if (r.rlim_cur >= need) return;
  if (r.rlim_max >= need) {
    r.rlim_cur = need;
    if (::setrlimit(RLIMIT_NOFILE, &r) == 0) return;
  }
  throw Unavailable(
      fmt::format("{} connections need {} open files, but RLIMIT_NOFILE allows {} (raise it: ulimit -n)",
                  connections, need, r.rlim_max));
}

double since_ns(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

void set_nodelay(int fd) {
  const int one = 1;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
    throw_errno("setsockopt(TCP_NODELAY)", errno);
}

// Errors the model retries (a cancelled request); anything else ends the connection.
bool transient(int err) {
  return err == ECANCELED || err == EINTR || err == EAGAIN || err == ENOBUFS;
}

// A listening socket on 127.0.0.1 with an ephemeral port.
UniqueFd listen_loopback(int backlog, std::uint16_t& port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) throw_errno("socket", errno);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw_errno("bind 127.0.0.1:0", errno);
  if (::listen(fd.get(), backlog) != 0) throw_errno("listen", errno);
  socklen_t len = sizeof a;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

// ---- the server: one thread, one ring ---------------------------------------------------------------

// The provided buffer ring of a multishot recv: the ring itself (page-aligned, as
// IORING_REGISTER_PBUF_RING requires) and its buffers, buffer id i at data() + i * size.
class BufRing {
 public:
  BufRing() = default;
  BufRing(const BufRing&) = delete;
  BufRing& operator=(const BufRing&) = delete;
  ~BufRing() {
    if (ring_) ::munmap(ring_, ring_bytes_);
  }

  // Maps and registers it as group kGroup of `ring`, every buffer in it. Unregistered when the
  // ring exits (io_uring_queue_exit), which must come before this is destroyed.
  void setup(io_uring& ring, unsigned entries, std::uint32_t size) {
    entries_ = entries;
    size_ = size;
    ring_bytes_ = entries * sizeof(io_uring_buf);
    void* mem = ::mmap(nullptr, ring_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) throw_errno("mmap (the provided buffer ring)", errno);
    ring_ = static_cast<io_uring_buf_ring*>(mem);
    data_.assign(static_cast<std::size_t>(entries) * size, 0);
    io_uring_buf_reg reg{};
    reg.ring_addr = reinterpret_cast<std::uintptr_t>(ring_);
    reg.ring_entries = entries;
    reg.bgid = kGroup;
    if (const int rc = io_uring_register_buf_ring(&ring, &reg, 0); rc < 0)
      throw Unavailable(
          fmt::format("/workload/recv_mode: \"multishot\" needs a provided buffer ring "
                      "(IORING_REGISTER_PBUF_RING, 5.19), "
                      "and registering one of {} buffers (workload.buf_ring_entries) failed: {}",
                      entries, std::strerror(-rc)));
    io_uring_buf_ring_init(ring_);
    for (unsigned i = 0; i < entries; ++i) give_back(static_cast<std::uint16_t>(i));
  }

  char* buffer(std::uint16_t bid) { return data_.data() + static_cast<std::size_t>(bid) * size_; }

  // Buffer bid is the kernel's again (io_uring_buf_ring_advance publishes it with a release store).
  void give_back(std::uint16_t bid) {
    io_uring_buf_ring_add(ring_, buffer(bid), size_, bid, io_uring_buf_ring_mask(entries_), 0);
    io_uring_buf_ring_advance(ring_, 1);
  }

  static constexpr std::uint16_t kGroup = 0;

 private:
  io_uring_buf_ring* ring_ = nullptr;
  std::size_t ring_bytes_ = 0;
  unsigned entries_ = 0;
  std::uint32_t size_ = 0;
  std::vector<char> data_;
};

class Server {
 public:
  Server(const config::Scenario& s, const EchoParams& p, int listen_fd, const RunGuard& guard)
      : s_(s), p_(p), listen_fd_(listen_fd), guard_(guard) {}

  void main(Startup& startup) {
    name_this_thread("io_uring_echo_s");
    if (p_.server_cpu >= 0) pin_this_thread(p_.server_cpu, "/workload/server_cpu");
    if (p_.nice != 0) set_this_thread_nice(p_.nice, "/workload/server_nice");
    // This thread creates the ring and is the only one that submits to it or waits on it, as
    // SINGLE_ISSUER and DEFER_TASKRUN require (the kernel answers another task with -EEXIST).
    init_ring(ring_, s_);
    ring_flags_ = ring_.flags;
    // However the thread ends: the ring goes (cancelling what is in flight, and unregistering the
    // buffer ring), then the sockets.
    struct Teardown {
      Server* s;
      ~Teardown() {
        s->drain_in_flight();
        io_uring_queue_exit(&s->ring_);
        s->conns_.clear();
      }
    } teardown{this};
    if (p_.multishot) bufs_.setup(ring_, p_.buf_ring_entries, p_.msg_bytes);
    if (!accept_all()) return;  // stopped while connections were being made
    if (p_.fixed_files) {
      std::vector<int> fds;
      for (const auto& c : conns_) fds.push_back(c.fd.get());
      if (const int rc = io_uring_register_files(&ring_, fds.data(), static_cast<unsigned>(fds.size()));
          rc < 0)
        throw Unavailable(fmt::format("/workload/fixed_files: io_uring_register_files of {} files: {}",
                                      fds.size(), std::strerror(-rc)));
    }
    startup.ready();
    if (!startup.wait_go()) return;
    loop();
  }

  std::uint64_t failed_ops() const { return failed_; }
  std::uint64_t errors_after_stop() const { return errors_after_stop_; }
  std::int64_t in_flight_at_stop() const { return in_flight_at_stop_; }
  std::int64_t left_in_flight() const { return left_in_flight_; }
  const std::map<std::string, std::uint64_t>& failed_by_error() const { return failed_by_error_; }
  std::uint64_t sqes_submitted() const { return sqes_; }
  std::uint64_t cqes_reaped() const { return cqes_; }
  std::uint64_t multishot_rearms() const { return rearms_; }
  std::uint64_t multishot_enobufs() const { return enobufs_; }
  unsigned ring_flags() const { return ring_flags_; }

 private:
  // A received buffer of the buffer ring, waiting for (or in) its echo.
  struct Segment {
    std::uint16_t bid = 0;
    std::uint32_t len = 0;
  };
  struct Conn {
    UniqueFd fd;
    std::vector<char> buf;           // single recv: the message, and the echo sent from it
    std::uint32_t len = 0, off = 0;  // bytes of the echo to send, bytes sent so far
    bool open = true;
    // Multishot: what arrived, in order, each echoed from its own buffer; the front one is being
    // sent. One send at a time, so that a message that came in two pieces is echoed in order.
    std::deque<Segment> received;
    bool sending = false;
    bool promised = false;  // re-armed, with a buffer counted for it, before its first CQE
  };

  bool accept_all() {
    while (static_cast<int>(conns_.size()) < p_.connections) {
      pollfd pf[2] = {{listen_fd_, POLLIN, 0}, {guard_.stop_fd(), POLLIN, 0}};
      if (::poll(pf, 2, 1000) < 0 && errno != EINTR) throw_errno("poll", errno);
      if (guard_.stop_requested()) return false;
      for (;;) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
          if (errno == EAGAIN || errno == EINTR) break;
          throw_errno("accept", errno);
        }
        Conn c;
        c.fd = UniqueFd(fd);
        set_nodelay(fd);
        if (!p_.multishot) c.buf.resize(p_.msg_bytes);
        conns_.push_back(std::move(c));
        if (static_cast<int>(conns_.size()) == p_.connections) break;
      }
    }
    return true;
  }

  io_uring_sqe* sqe() {
    io_uring_sqe* e = io_uring_get_sqe(&ring_);
    if (!e) {  // the SQ is full (more connections than SQ entries): submit what is there
      submit(0);
      e = io_uring_get_sqe(&ring_);
    }
    if (!e) throw std::runtime_error("io_uring: no SQE free after a submit");
    return e;
  }

  void submit(unsigned wait) {
    const int rc = wait ? io_uring_submit_and_wait(&ring_, wait) : io_uring_submit(&ring_);
    if (rc >= 0) {
      sqes_ += static_cast<unsigned>(rc);
      return;
    }
    if (rc == -EINTR || rc == -EAGAIN || rc == -EBUSY) return;  // reap what is there, try again
    throw std::runtime_error(fmt::format("io_uring_submit_and_wait: {}", std::strerror(-rc)));
  }

  void target(io_uring_sqe* e) const {
    if (p_.fixed_files) e->flags |= IOSQE_FIXED_FILE;
    if (p_.force_async) e->flags |= IOSQE_ASYNC;
  }

  int file_of(int c) const { return p_.fixed_files ? c : conns_[c].fd.get(); }

  void prep_recv(int c) {
    io_uring_sqe* e = sqe();
    if (p_.multishot) {
      // No buffer and length 0: the kernel picks a buffer of group kGroup for each arrival.
      io_uring_prep_recv_multishot(e, file_of(c), nullptr, 0, 0);
      e->flags |= IOSQE_BUFFER_SELECT;
      e->buf_group = BufRing::kGroup;
    } else {
      io_uring_prep_recv(e, file_of(c), conns_[c].buf.data(), p_.msg_bytes, 0);
    }
    target(e);
    io_uring_sqe_set_data64(e, static_cast<std::uint64_t>(c) << 1);
    ++in_flight_;
  }

  void prep_send(int c) {
    Conn& cn = conns_[c];
    const char* data = p_.multishot ? bufs_.buffer(cn.received.front().bid) : cn.buf.data();
    io_uring_sqe* e = sqe();
    io_uring_prep_send(e, file_of(c), data + cn.off, cn.len - cn.off, MSG_NOSIGNAL);
    target(e);
    io_uring_sqe_set_data64(e, (static_cast<std::uint64_t>(c) << 1) | 1);
    ++in_flight_;
  }

  // server_work_cycles: user-space work per received message, as a timed busy loop.
  void work() const {
    if (p_.work_ns <= 0) return;
    const auto until = Clock::now() + std::chrono::nanoseconds(static_cast<std::int64_t>(p_.work_ns));
    while (Clock::now() < until) {
    }
  }

  void loop() {
    io_uring_sqe* stop = sqe();
    io_uring_prep_poll_add(stop, guard_.stop_fd(), POLLIN);
    io_uring_sqe_set_data64(stop, kStopTag);
    for (int c = 0; c < p_.connections; ++c) prep_recv(c);
    for (;;) {
      // wait_nr CQEs, but never more than the requests in flight can give (each gives at least
      // one more): with fewer connections than wait_nr the loop would otherwise sleep for ever.
      submit(
          static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(p_.wait_nr, in_flight_))));
      bool stopping = false;
      unsigned head, n = 0;
      io_uring_cqe* cqe;
      io_uring_for_each_cqe(&ring_, head, cqe) {
        ++n;
        if (cqe->user_data == kStopTag)
          stopping = true;
        else if ((cqe->user_data & 1) != 0)
          sent(static_cast<int>(cqe->user_data >> 1), cqe->res);
        else if (p_.multishot)
          received_multishot(static_cast<int>(cqe->user_data >> 1), cqe->res, cqe->flags);
        else
          received(static_cast<int>(cqe->user_data >> 1), cqe->res);
      }
      io_uring_cq_advance(&ring_, n);
      cqes_ += n;
      if (stopping) return;
    }
  }

  // Before the buffers go: cancels what is in flight and reaps it, for at most kDrainNs. The ring's
  // exit cancels too, but does not wait; an io-wq worker could still run a queued send from a
  // freed buffer, and a client still reading would take the allocator's bytes for an echo.
  void drain_in_flight() noexcept {
    in_flight_ -= io_uring_sq_ready(&ring_);  // prepared, never submitted: the kernel never saw them
    in_flight_at_stop_ = in_flight_;
    if (in_flight_ <= 0) return;
    if (io_uring_sqe* e = io_uring_get_sqe(&ring_)) {
      io_uring_prep_cancel64(e, 0, IORING_ASYNC_CANCEL_ANY);
      io_uring_sqe_set_data64(e, kCancelTag);
      io_uring_submit(&ring_);
    }
    const auto until = Clock::now() + std::chrono::nanoseconds(kDrainNs);
    while (in_flight_ > 0 && Clock::now() < until) {
      __kernel_timespec ts{0, 10'000'000};
      io_uring_cqe* cqe = nullptr;
      if (io_uring_wait_cqe_timeout(&ring_, &cqe, &ts) != 0 || !cqe) continue;
      // A recv or send ends with its CQE without F_MORE (a multishot recv's last one).
      const std::uint64_t tag = cqe->user_data;
      if (tag != kStopTag && tag != kCancelTag && (cqe->flags & IORING_CQE_F_MORE) == 0) --in_flight_;
      io_uring_cqe_seen(&ring_, cqe);
    }
    left_in_flight_ = in_flight_;
  }

  // An error CQE: true if the request is to be submitted again (the model retries a cancelled
  // one); false if the connection is over (e.g. -ECONNRESET). Once the stop is requested the
  // clients close their sockets, some with an echo unread (which sends a RST): the errors that
  // brings are the teardown's, not the run's, and are counted apart.
  bool retry_after(int res) {
    if (guard_.stop_requested()) {
      ++errors_after_stop_;
    } else {
      ++failed_;
      const char* name = ::strerrorname_np(-res);
      ++failed_by_error_[name ? name : std::to_string(res)];
    }
    return transient(-res);
  }

  // The connection is over: its buffers go back for the others, but not one a send in flight
  // still reads (sent() gives that one back).
  void end_connection(int c) {
    conns_[c].open = false;
    if (!conns_[c].sending) release_buffers(c);
  }

  void release_buffers(int c) {
    Conn& cn = conns_[c];
    cn.sending = false;
    for (const Segment& seg : cn.received) bufs_.give_back(seg.bid);
    held_ -= static_cast<unsigned>(cn.received.size());
    cn.received.clear();
    rearm_waiting();
  }

  // What the model's server does with a CQE (docs/models/echo.md).
  void received(int c, int res) {
    --in_flight_;
    Conn& cn = conns_[c];
    if (res < 0) {
      if (retry_after(res))
        prep_recv(c);
      else
        end_connection(c);
      return;
    }
    if (res == 0) {  // the client closed its end
      end_connection(c);
      return;
    }
    cn.len = static_cast<std::uint32_t>(res);
    cn.off = 0;
    work();
    prep_send(c);
  }

  // A multishot recv's CQE: data in a buffer of the ring (IORING_CQE_F_BUFFER, its id in the
  // upper 16 bits of flags), and without IORING_CQE_F_MORE the end of that recv.
  void received_multishot(int c, int res, unsigned flags) {
    Conn& cn = conns_[c];
    if (cn.promised) {  // a re-armed recv's first CQE: it has had its turn at a free buffer
      cn.promised = false;
      --promised_;
    }
    const bool ended = (flags & IORING_CQE_F_MORE) == 0;
    if (ended) --in_flight_;
    if (res > 0) {
      if ((flags & IORING_CQE_F_BUFFER) == 0)
        throw std::runtime_error("io_uring: a multishot recv's CQE carries data but no buffer id");
      const auto bid = static_cast<std::uint16_t>(flags >> IORING_CQE_BUFFER_SHIFT);
      if (!cn.open) {  // a send of this connection failed for good: nothing more is echoed
        bufs_.give_back(bid);
        rearm_waiting();
        return;
      }
      ++held_;
      cn.received.push_back({bid, static_cast<std::uint32_t>(res)});
      work();
      if (!cn.sending) start_send(c);
    } else if (res == 0) {  // the client closed its end
      end_connection(c);
      return;
    } else if (res == -ENOBUFS) {  // the ring ran dry: the kernel ended the recv
      ++enobufs_;
    } else if (res == -EINVAL && !seen_multishot_) {
      throw Unavailable(
          "/workload/recv_mode: the kernel refuses a multishot recv (IORING_RECV_MULTISHOT with "
          "IOSQE_BUFFER_SELECT, 6.0): -EINVAL");
    } else if (!retry_after(res)) {
      end_connection(c);
      return;
    }
    seen_multishot_ = true;
    if (ended && cn.open) rearm(c);
  }

  void start_send(int c) {
    Conn& cn = conns_[c];
    cn.sending = true;
    cn.len = cn.received.front().len;
    cn.off = 0;
    prep_send(c);
  }

  // Re-arms a multishot recv that ended. One that ended with -ENOBUFS has data waiting, so it takes
  // a buffer as soon as it is armed; with none free it would end again at once, so it waits for a
  // send to give one back. Each re-armed recv is promised a free buffer until its first CQE, so
  // that one returned buffer re-arms one waiting recv, not all of them.
  unsigned unpromised_free() const {
    const unsigned taken = held_ + promised_;
    return taken < p_.buf_ring_entries ? p_.buf_ring_entries - taken : 0;
  }

  void rearm(int c) {
    if (unpromised_free() == 0) {
      waiting_.push_back(c);
      return;
    }
    rearm_now(c);
  }

  void rearm_now(int c) {
    ++rearms_;
    conns_[c].promised = true;
    ++promised_;
    prep_recv(c);
  }

  void rearm_waiting() {
    while (!waiting_.empty() && unpromised_free() > 0) {
      const int c = waiting_.front();
      waiting_.pop_front();
      if (conns_[c].open) rearm_now(c);
    }
  }

  void sent(int c, int res) {
    --in_flight_;
    Conn& cn = conns_[c];
    if (!cn.open) {  // ended while this send was in flight: now its buffer is free too
      release_buffers(c);
      return;
    }
    if (res < 0) {
      if (retry_after(res)) {
        prep_send(c);  // send the rest of the echo again
      } else {
        cn.sending = false;
        end_connection(c);
      }
      return;
    }
    cn.off += static_cast<std::uint32_t>(res);
    if (cn.off < cn.len) {
      prep_send(c);  // a short send: the rest
      return;
    }
    if (!p_.multishot) {
      prep_recv(c);
      return;
    }
    // The echo of this buffer is out: the buffer goes back to the ring, then the next one.
    bufs_.give_back(cn.received.front().bid);
    cn.received.pop_front();
    --held_;
    cn.sending = false;
    if (!cn.received.empty()) start_send(c);
    rearm_waiting();
  }

  const config::Scenario& s_;
  const EchoParams& p_;
  int listen_fd_;
  const RunGuard& guard_;
  io_uring ring_{};
  unsigned ring_flags_ = 0;  // as the ring was set up
  BufRing bufs_;             // unmapped with the Server, after main()'s Teardown exited the ring
  std::vector<Conn> conns_;
  std::int64_t in_flight_ = 0;  // recvs and sends whose last CQE has not come (the stop poll aside)
  std::int64_t in_flight_at_stop_ = 0, left_in_flight_ = 0;  // when the teardown began, and ended
  unsigned held_ = 0;        // buffers of the ring received and not yet given back
  unsigned promised_ = 0;    // re-armed recvs yet to give their first CQE (Conn::promised)
  std::deque<int> waiting_;  // connections whose multishot recv waits for a buffer to re-arm
  bool seen_multishot_ = false;
  std::map<std::string, std::uint64_t> failed_by_error_;  // failed_ by errno name
  std::uint64_t failed_ = 0, errors_after_stop_ = 0, sqes_ = 0, cqes_ = 0, rearms_ = 0, enobufs_ = 0;
};

// ---- a client thread: an epoll loop over its connections ---------------------------------------------

class Client {
 public:
  Client(int index, const EchoParams& p, const nlohmann::json& think, std::uint16_t port,
         const RunGuard& guard, const analysis::MetricsConfig& mc)
      : index_(index),
        p_(p),
        think_(think),
        port_(port),
        guard_(guard),
        rng_(p.seed + static_cast<std::uint64_t>(index)),
        rec_(mc) {}

  void main(Startup& startup) {
    name_this_thread(fmt::format("client-{}", index_));
    if (!p_.client_cpus.empty()) {
      const std::size_t i = static_cast<std::size_t>(index_) % p_.client_cpus.size();
      if (p_.client_cpus[i] >= 0)
        pin_this_thread(p_.client_cpus[i], fmt::format("/workload/client_cpus/{}", i));
    }
    ep_ = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
    if (ep_.get() < 0) throw_errno("epoll_create1", errno);
    for (int c = index_; c < p_.connections; c += p_.client_threads) connect_one();
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = kStopEvent;
    if (::epoll_ctl(ep_.get(), EPOLL_CTL_ADD, guard_.stop_fd(), &ev) != 0) throw_errno("epoll_ctl", errno);
    startup.ready();
    if (!startup.wait_go()) return;
    t0_ = startup.t0();
    loop();
    conns_.clear();  // close the sockets now, not when the run's results are assembled
  }

  const analysis::RunMetrics& recorded() const { return rec_; }

 private:
  struct Conn {
    UniqueFd fd;
    std::vector<unsigned char> out, in;
    std::uint32_t sent = 0, received = 0;
    double t_sent = 0;
    std::uint8_t seq = 0;  // varies the message so that the echo can be checked
    bool want_out = false;
  };

  void connect_one() {
    Conn c;
    c.fd = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (c.fd.get() < 0) throw_errno("socket", errno);
    set_nodelay(c.fd.get());
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port_);
    while (::connect(c.fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      if (errno == EINTR) continue;
      if (errno == EADDRNOTAVAIL)
        throw Unavailable(
            fmt::format("/workload/connections: out of loopback ephemeral ports after {} connections "
                        "(net.ipv4.ip_local_port_range)",
                        conns_.size()));
      throw_errno("connect 127.0.0.1", errno);
    }
    const int fl = ::fcntl(c.fd.get(), F_GETFL);
    ::fcntl(c.fd.get(), F_SETFL, fl | O_NONBLOCK);
    c.out.resize(p_.msg_bytes);
    c.in.resize(p_.msg_bytes);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<std::uint32_t>(conns_.size());
    if (::epoll_ctl(ep_.get(), EPOLL_CTL_ADD, c.fd.get(), &ev) != 0) throw_errno("epoll_ctl", errno);
    conns_.push_back(std::move(c));
  }

  void watch_out(std::uint32_t i, bool on) {
    Conn& c = conns_[i];
    if (c.want_out == on) return;
    c.want_out = on;
    epoll_event ev{};
    ev.events = EPOLLIN | (on ? static_cast<std::uint32_t>(EPOLLOUT) : 0u);
    ev.data.u32 = i;
    if (::epoll_ctl(ep_.get(), EPOLL_CTL_MOD, c.fd.get(), &ev) != 0) throw_errno("epoll_ctl", errno);
  }

  void send_message(std::uint32_t i) {
    Conn& c = conns_[i];
    ++c.seq;
    for (std::uint32_t b = 0; b < p_.msg_bytes; ++b) c.out[b] = static_cast<unsigned char>(c.seq + b);
    c.sent = 0;
    c.received = 0;
    c.t_sent = since_ns(t0_);
    rec_.submitted(c.t_sent);
    send_more(i);
  }

  void send_more(std::uint32_t i) {
    Conn& c = conns_[i];
    while (c.sent < p_.msg_bytes) {
      const ssize_t n = ::send(c.fd.get(), c.out.data() + c.sent, p_.msg_bytes - c.sent, MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<std::uint32_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        watch_out(i, true);  // the socket buffer is full: finish when it drains
        return;
      }
      throw_errno(fmt::format("client-{}: send", index_), errno);
    }
    watch_out(i, false);
  }

  void receive(std::uint32_t i) {
    Conn& c = conns_[i];
    while (c.received < p_.msg_bytes) {
      const ssize_t n = ::recv(c.fd.get(), c.in.data() + c.received, p_.msg_bytes - c.received, 0);
      if (n > 0) {
        c.received += static_cast<std::uint32_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n == 0 && guard_.stop_requested()) return;  // the server stopped first
      if (n == 0) throw std::runtime_error(fmt::format("client-{}: the server closed a connection", index_));
      throw_errno(fmt::format("client-{}: recv", index_), errno);
    }
    const double t = since_ns(t0_);
    if (c.in != c.out) throw echo_mismatch(i);
    rec_.completed(t, t - c.t_sent);
    c.received = 0;
    const double think = think_.sample_ns(rng_);
    if (think <= 0)
      send_message(i);
    else
      timers_.push({t + think, i});
  }

  // Says where the echo went wrong, so that a rare fault can be told apart from the next one: the
  // first byte that differs, and whether the received bytes are an earlier message's (a stale or
  // doubled echo) or no message's at all.
  std::runtime_error echo_mismatch(std::uint32_t i) const {
    const Conn& c = conns_[i];
    std::uint32_t at = 0;
    while (at < p_.msg_bytes && c.in[at] == c.out[at]) ++at;
    const auto seq_in = static_cast<std::uint8_t>(c.in[0]);  // message k's byte b is k + b
    bool one_message = true;
    for (std::uint32_t b = 0; b < p_.msg_bytes; ++b)
      one_message = one_message && c.in[b] == static_cast<unsigned char>(seq_in + b);
    return std::runtime_error(fmt::format(
        "client-{}: connection {}: the echo differs from the message sent, from byte {} of {}: message "
        "{} was sent ({:02x}), the bytes received are {} ({:02x})",
        index_, i, at, p_.msg_bytes, c.seq, fmt::join(c.out, " "),
        one_message ? fmt::format("message {}", seq_in) : std::string("no single message's"),
        fmt::join(c.in, " ")));
  }

  void loop() {
    std::uniform_real_distribution<double> spread(0.0, kFirstSendSpreadNs);
    for (std::uint32_t i = 0; i < conns_.size(); ++i) timers_.push({spread(rng_), i});
    std::vector<epoll_event> evs(64);
    for (;;) {
      timespec ts{}, *timeout = nullptr;
      if (!timers_.empty()) {
        const double wait = std::max(0.0, timers_.top().first - since_ns(t0_));
        ts.tv_sec = static_cast<time_t>(wait / 1e9);
        ts.tv_nsec = static_cast<long>(wait - ts.tv_sec * 1e9);
        timeout = &ts;
      }
      const int n = ::epoll_pwait2(ep_.get(), evs.data(), static_cast<int>(evs.size()), timeout, nullptr);
      if (n < 0 && errno != EINTR) throw_errno("epoll_pwait2", errno);
      for (int k = 0; k < n; ++k) {
        const std::uint32_t i = evs[k].data.u32;
        if (i == kStopEvent) return;
        if (evs[k].events & EPOLLOUT) send_more(i);
        if (evs[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) receive(i);
      }
      const double now = since_ns(t0_);
      while (!timers_.empty() && timers_.top().first <= now) {
        const std::uint32_t i = timers_.top().second;
        timers_.pop();
        send_message(i);
      }
    }
  }

  int index_;
  const EchoParams& p_;
  DurationSampler think_;
  std::uint16_t port_;
  const RunGuard& guard_;
  std::mt19937_64 rng_;
  UniqueFd ep_;
  std::vector<Conn> conns_;
  Clock::time_point t0_{};
  using Timer = std::pair<double, std::uint32_t>;  // (due, connection)
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  analysis::RunMetrics rec_;  // this thread's round trips (host/run_frame.hpp)
};

}  // namespace

HostRun run_echo(const config::Scenario& s, const HostOptions& o) {
  const MachineInfo machine = machine_info();
  const nlohmann::json ignored = check_model_fields(s, machine, o.ignore_model_fields);
  const EchoParams p = read_params(s, machine);
  require_io_uring({IORING_OP_RECV, IORING_OP_SEND, IORING_OP_POLL_ADD});
  ensure_file_limit(p.connections);

  RunGuard guard(run_limit_s(s, o));
  std::uint16_t port = 0;
  const UniqueFd listener = listen_loopback(std::min(p.connections, 4096), port);
  Server server(s, p, listener.get(), guard);
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < p.client_threads; ++i)
    clients.push_back(
        std::make_unique<Client>(i, p, s.at("/workload/think"), port, guard, host_metrics_config(s)));
  std::vector<const analysis::RunMetrics*> recorded;
  for (auto& c : clients) recorded.push_back(&c->recorded());

  auto spawn = [&](Startup& st, std::vector<std::thread>& running) {
    running.push_back(st.spawn([&] { server.main(st); }));
    for (auto& c : clients) running.push_back(st.spawn([&st, c = c.get()] { c->main(st); }));
  };
  const FrameResult run = run_frame(s, o, guard, 1 + p.client_threads, spawn, recorded);

  HostRun out;
  out.results = host_results(s, o, run, {"io_uring_echo_s"});
  out.results["echo"] = {{"connections", p.connections},
                         {"client_threads", p.client_threads},
                         {"round_trips_window", run.metrics->window_completions()},
                         {"failed_ops", server.failed_ops()},
                         {"failed_by_error", server.failed_by_error()},
                         {"errors_after_stop", server.errors_after_stop()},
                         {"in_flight_at_stop", server.in_flight_at_stop()},
                         {"left_in_flight", server.left_in_flight()},
                         {"wait_nr", p.wait_nr},
                         {"recv_mode", p.multishot ? "multishot" : "single"}};
  if (p.multishot) {
    out.results["echo"]["buf_ring_entries"] = p.buf_ring_entries;
    out.results["echo"]["multishot_rearms"] = server.multishot_rearms();
    out.results["echo"]["multishot_enobufs"] = server.multishot_enobufs();
  }
  out.results["uring"] = {{"sqes_submitted", server.sqes_submitted()},
                          {"cqes_reaped", server.cqes_reaped()},
                          {"setup_flags", setup_flag_names(server.ring_flags())}};
  out.run_info = host_run_info(s, machine, run, ignored);
  out.summary = host_summary(out.results, out.run_info);
  out.summary.emplace_back(
      "echo", fmt::format("{} connections, {} client threads, {} failed ops, io-wq workers peak {}",
                          p.connections, p.client_threads, server.failed_ops(), run.window.workers_peak));
  std::string recv = "single recv";
  if (p.multishot)
    recv = fmt::format("multishot recv, {} buffers: {} re-arms ({} after -ENOBUFS)", p.buf_ring_entries,
                       server.multishot_rearms(), server.multishot_enobufs());
  out.summary.emplace_back(
      "ring", fmt::format("{}, wait_nr {}, {}", setup_flag_macros(server.ring_flags()), p.wait_nr, recv));
  return out;
}

}  // namespace uringsim::host
