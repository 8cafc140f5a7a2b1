#pragma once
// A small hand-built io_uring world for component tests: one engine (1 GHz, so 1 cycle = 1 ns),
// a task with its io-wq and one ring, and a "disk file" double with known service times. Every
// TEST_CASE builds exactly one UringWorld (one SimGrid engine per process).
//
// Assertions never run inside simulated threads (a failed REQUIRE there would unwind through
// SimGrid): threads record what they saw, the test checks after run_until_ns().
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/cpu_placer.hpp"
#include "models/io/file.hpp"
#include "models/uring/ctx.hpp"
#include "models/uring/iowq.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/ring_setup.hpp"
#include "models/uring/task.hpp"
#include "sim/engine.hpp"
#include "sim/thread.hpp"

namespace uringsim::test {

// 5.16 defaults (hybrid IOSQE_ASYNC, poll-ready re-issue through task_work); tests change what
// they exercise. Rings are large unless a test is about the CQ.
inline models::KernelConfig test_kernel() {
  models::KernelConfig k = models::KernelConfig::for_era("5.16");
  k.max_bound = 4;
  k.max_unbound = 4;
  k.worker_idle_timeout_ns = 5e9;
  k.sq_entries = 64;
  k.cq_entries = 128;
  return k;
}

// All io_uring path costs zero: timings come only from what a test sets.
inline models::UringCosts zero_uring_costs() {
  return models::UringCosts{};
}

// Each (user_data, start, end) of a blocking issue on a DiskFile, and the thread that ran it.
struct Span {
  std::uint64_t user_data = 0;
  sim::TimeNs start = 0, end = 0;
  std::string thread;
};

inline bool overlap(const Span& a, const Span& b) {
  return a.start < b.end && b.start < a.end;
}

// A regular file on a disk: not pollable, a non-blocking attempt always gets -EAGAIN (the data is
// not cached), and a blocking issue sleeps for its service time between the scheduler hooks, as a
// worker waiting for the disk does. Buffered writes are hashed by inode.
class DiskFile final : public models::File {
 public:
  DiskFile(std::uint32_t inode, sim::TimeNs service_ns) : inode_(inode), service_ns_(service_ns) {}

  void set_service(std::uint64_t user_data, sim::TimeNs ns) { service_by_ud_[user_data] = ns; }
  int nonblock_attempts() const { return nonblock_attempts_; }
  int max_concurrent() const { return max_concurrent_; }
  const std::vector<Span>& spans() const { return spans_; }  // in order of completion

  bool pollable() const override { return false; }
  std::uint32_t hash_key(models::Op op) const override { return op == models::Op::Write ? inode_ : 0; }
  bool try_issue(models::IoRequest&) override {
    ++nonblock_attempts_;
    return false;
  }
  void issue_blocking(models::IoRequest& io, models::BlockHooks* hooks) override {
    // Only a ring issues here, so the request is the ring's: its user_data names it in the test.
    const auto& req = static_cast<const models::Request&>(io);
    Span s;
    s.user_data = req.user_data;  // the request may be recycled once it completes
    s.start = sim::now_ns();
    s.thread = sim::current().name();
    max_concurrent_ = std::max(max_concurrent_, ++running_);
    auto it = service_by_ud_.find(req.user_data);
    const sim::TimeNs service = it == service_by_ud_.end() ? service_ns_ : it->second;
    if (hooks) hooks->before_block();
    sim::current().sleep_ns(service);
    if (hooks) hooks->after_block();
    --running_;
    s.end = sim::now_ns();
    spans_.push_back(s);
    io.result = static_cast<int>(io.bytes);
  }
  bool poll_ready(const models::IoRequest&) const override { return false; }
  void add_poll(models::IoRequest&) override {
    throw std::logic_error("DiskFile: a regular file cannot be polled");
  }

 private:
  std::uint32_t inode_;
  sim::TimeNs service_ns_;
  std::map<std::uint64_t, sim::TimeNs> service_by_ud_;
  int nonblock_attempts_ = 0, running_ = 0, max_concurrent_ = 0;
  std::vector<Span> spans_;
};

// The cycles a thread spent under a profile symbol (its code path's label).
inline double cycles_of(const sim::Thread& t, const char* symbol) {
  const sim::Label l = sim::intern(symbol);
  return l < t.cycles_by_symbol().size() ? t.cycles_by_symbol()[l] : 0.0;
}

// A CQE as the application read it, and when.
struct SeenCqe {
  std::uint64_t user_data;
  int result;
  sim::TimeNs t;
};

struct UringWorld {
  // `cores` CPUs: the application on CPU 0, peers (e.g. the sender of network data) on the last
  // one, io-wq workers on the others, so no two threads of a test share a CPU.
  UringWorld(int cores, const sim::PrimitiveCosts& pc, const models::KernelConfig& kc,
             const models::UringCosts& uc, const models::RingSetup& setup = models::RingSetup{})
      : engine(sim::MachineSpec{cores, 1.0, 0}, pc),
        k(kc),
        costs(uc),
        placer(cores),
        task(costs, k),
        wq(engine, k, costs, task, placer),
        ctx(k, costs, task, wq, setup) {
    placer.pin(cores - 1);  // the peer's CPU counts as taken: new workers start elsewhere
  }

  // The application thread, owner of the task.
  sim::Thread& spawn_app(std::function<void()> body) {
    sim::Thread& t = engine.spawn("app", "app", placer.pin(0), std::move(body));
    task.set_thread(t);
    return t;
  }
  // A peer thread on the reserved CPU: its CPU work is real (accounted), e.g. a wake callback.
  sim::Thread& spawn_peer(const std::string& name, std::function<void()> body) {
    return engine.spawn(name, "peer", engine.machine().cores - 1, std::move(body));
  }

  models::Request& request(models::Op op, models::File& f, std::uint64_t user_data, std::uint32_t bytes,
                           bool force_async) {
    models::Request& r = ctx.new_request();
    r.op = op;
    r.file = &f;
    r.user_data = user_data;
    r.bytes = bytes;
    r.force_async = force_async;
    return r;
  }

  // Read every CQE now in the CQ (from the application thread).
  void reap(std::vector<SeenCqe>& out) {
    models::Cqe cqe;
    while (ctx.pop_cqe(cqe)) {
      out.push_back({cqe.user_data, cqe.result, sim::now_ns()});
      ctx.release(*cqe.req);
    }
  }

  sim::Engine engine;  // first: the locks below register with it
  models::KernelConfig k;
  models::UringCosts costs;
  models::CpuPlacer placer;
  models::Task task;
  models::IoWq wq;
  models::IoRingCtx ctx;
};

}  // namespace uringsim::test
