#include "host/nop_runner.hpp"

#include <liburing.h>

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "config/input_error.hpp"
#include "host/app_loop.hpp"
#include "host/host_results.hpp"
#include "host/machine_info.hpp"
#include "host/model_fields.hpp"
#include "host/ring_setup.hpp"
#include "host/run_frame.hpp"
#include "host/thread_setup.hpp"

namespace uringsim::host {
namespace {

using Clock = RunGuard::Clock;

class NopLoop {
 public:
  NopLoop(const config::Scenario& s, const RunGuard& guard)
      : s_(s), guard_(guard), cpu_(s.at("/workload/cpu").get<int>()), rec_(host_metrics_config(s)) {
    batches_.depth = s.at("/workload/depth").get<int>();
    batches_.force_async = s.at("/workload/force_async").get<bool>();
    batches_.wait_nr = s.at("/workload/wait_nr").get<int>();
    batches_.window_start_ns = s.at("/warmup_ms").get<double>() * 1e6;
    batches_.window_end_ns = (s.at("/warmup_ms").get<double>() + s.at("/duration_ms").get<double>()) * 1e6;
  }

  void main(Startup& startup) {
    name_this_thread("nop_test");
    if (cpu_ >= 0) pin_this_thread(cpu_, "/workload/cpu");
    io_uring ring{};
    init_ring(ring, s_);
    ring_flags_ = ring.flags;
    struct RingExit {
      io_uring* r;
      ~RingExit() { io_uring_queue_exit(r); }
    } ring_exit{&ring};
    startup.ready();
    if (!startup.wait_go()) return;
    const auto t0 = startup.t0();
    auto since = [&] { return std::chrono::duration<double, std::nano>(Clock::now() - t0).count(); };
    while (!guard_.stop_requested()) batches_.run(ring, rec_, since);
  }

  const analysis::RunMetrics& recorded() const { return rec_; }
  std::uint64_t batches_window() const { return batches_.batches_window; }
  std::uint64_t failed() const { return batches_.failed; }
  unsigned ring_flags() const { return ring_flags_; }

 private:
  const config::Scenario& s_;
  const RunGuard& guard_;
  int cpu_;
  NopBatches batches_;        // the loop (host/app_loop.hpp), as calibrate times it
  analysis::RunMetrics rec_;  // this thread's requests (host/run_frame.hpp)
  unsigned ring_flags_ = 0;   // as the ring was set up (written before startup.ready())
};

}  // namespace

HostRun run_nop(const config::Scenario& s, const HostOptions& o) {
  const MachineInfo machine = machine_info();
  const nlohmann::json ignored = check_model_fields(s, machine, o.ignore_model_fields);
  check_cpu_index(s.source, "/workload/cpu", s.at("/workload/cpu").get<int>());
  check_ring_fields(s);
  const int depth = s.at("/workload/depth").get<int>(), sq = s.at("/kernel/ring/sq_entries").get<int>();
  if (depth > sq)
    throw config::InputError(fmt::format(
        "{}: /workload/depth: expected at most kernel.ring.sq_entries ({}), got {}", s.source, sq, depth));
  require_io_uring({IORING_OP_NOP});

  RunGuard guard(run_limit_s(s, o));
  NopLoop loop(s, guard);
  auto spawn = [&](Startup& st, std::vector<std::thread>& running) {
    running.push_back(st.spawn([&] { loop.main(st); }));
  };
  const FrameResult run = run_frame(s, o, guard, 1, spawn, {&loop.recorded()});

  HostRun out;
  out.results = host_results(s, o, run, {"nop_test"});
  out.results["nop"] = {{"depth", depth},
                        {"force_async", s.at("/workload/force_async")},
                        {"wait_nr", s.at("/workload/wait_nr")},
                        {"batches_window", loop.batches_window()},
                        {"failed", loop.failed()}};
  out.results["uring"] = {{"setup_flags", setup_flag_names(loop.ring_flags())}};
  out.run_info = host_run_info(s, machine, run, ignored);
  out.summary = host_summary(out.results, out.run_info);
  out.summary.emplace_back(
      "nop",
      fmt::format("depth {}{}, wait_nr {}, {}, {} batches in the window, {} failed, io-wq workers peak {}",
                  depth, s.at("/workload/force_async").get<bool>() ? " IOSQE_ASYNC" : "",
                  s.at("/workload/wait_nr").get<int>(), setup_flag_macros(loop.ring_flags()),
                  loop.batches_window(), loop.failed(), run.window.workers_peak));
  return out;
}

}  // namespace uringsim::host
