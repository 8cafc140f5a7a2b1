#include "host/calibrate.hpp"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

#include "host/calibrate_bench.hpp"
#include "host/calibrate_derive.hpp"
#include "host/calibrate_fit.hpp"
#include "host/guard.hpp"
#include "host/machine_info.hpp"
#include "host/speed_probe.hpp"
#include "host/stall_probe.hpp"

namespace uringsim::host {
namespace {

// Far above a full run (under a minute on an idle machine): only a hang reaches it.
constexpr double kLimitQuickS = 90, kLimitFullS = 300;

// One clock read, the part of every individually timed call that is not the call.
double clock_read_ns(calib::Measurements& m) {
  for (int r = 0; r < 20; ++r) {
    std::vector<double> d;
    for (int i = 0; i < 1000; ++i) {
      const double t0 = calib::now_ns();
      d.push_back(calib::now_ns() - t0);
    }
    m.clock_read.push_back(calib::median(d));
  }
  return calib::median(m.clock_read);
}

}  // namespace

config::Calibration calibrate(const CalibrateOptions& options) {
  const MachineInfo info = machine_info();
  if (!(info.ghz_nominal > 0))
    throw Unavailable(
        "cannot tell the CPU's nominal clock: /proc/cpuinfo has neither \"@ x.xxGHz\" in its model "
        "name nor \"cpu MHz\"");
  require_io_uring({IORING_OP_NOP, IORING_OP_RECV});
  const std::vector<int> cpus = calib::allowed_cpus();
  if (cpus.empty()) throw Unavailable("sched_getaffinity: no CPU to pin the benchmarks to");

  if (options.passes < 1 || options.gap_s < 0)
    throw std::invalid_argument("calibrate: --passes must be >= 1 and --gap-s >= 0");
  RunGuard guard((options.quick ? kLimitQuickS : kLimitFullS) * options.passes +
                 options.gap_s * (options.passes - 1));
  calib::Bench b{guard, options.quick, cpus[0], cpus.size() > 1 ? cpus[1] : -1, 0, options.progress};
  calib::Measurements m;
  if (b.cpu_b < 0) m.cross_cpu_unavailable = "only one CPU is available to this process";
  b.say(fmt::format("calibrate: {} on {} ({} CPUs, {:.3g} GHz from {}); benchmarks on CPU {}{}{}",
                    info.kernel_release, info.cpu_model.empty() ? "an unnamed CPU" : info.cpu_model,
                    info.nproc, info.ghz_nominal, info.ghz_source, b.cpu_a, b.cpu_b >= 0 ? " and " : "",
                    b.cpu_b >= 0 ? std::to_string(b.cpu_b) : ""));
  calib::run_pinned(b, b.cpu_a, [&] { b.clock_ns = clock_read_ns(m); });

  const std::pair<const char*, void (*)(const calib::Bench&, calib::Measurements&)> steps[] = {
      {"syscalls and NOP batches", calib::measure_syscalls},
      {"locks and cache lines", calib::measure_locks},
      {"futex wake-ups", calib::measure_wakeups},
      {"io-wq", calib::measure_iowq},
      {"loopback TCP", calib::measure_tcp},
      {"loopback TCP over many connections", calib::measure_tcp_many},
      {"async poll", calib::measure_poll},
      {"task_work kick", calib::measure_kick},
  };
  for (int pass = 0; pass < options.passes && !guard.stop_requested(); ++pass) {
    if (options.passes > 1) b.say(fmt::format("pass {} of {}", pass + 1, options.passes));
    calib::run_pinned(b, b.cpu_a, [&] { m.speed_ns_per_add.push_back(probe_cpu_speed().ns_per_add); });
    b.say(fmt::format("  CPU speed: {:.3f} ns per dependent add", m.speed_ns_per_add.back()));
    // Every CPU spins at once, as under load: a VM's host takes a busy vCPU away for
    // milliseconds far more often when its other vCPUs are busy too. A second per pass, for
    // the rare long stalls.
    calib::run_pinned(b, b.cpu_a, [&] {
      const double seconds = b.quick ? 0.1 : 1.0;
      StallProbe mine, other;
      {
        std::optional<calib::Joined> t;
        if (b.cpu_b >= 0)
          t.emplace([&] {
            calib::pin_to_cpu(b.cpu_b);
            other = probe_cpu_stalls(seconds);
          });
        mine = probe_cpu_stalls(seconds);
      }  // joins the other CPU's spin
      mine.merge(other);
      m.stalls.merge(mine);
      b.say(fmt::format("  CPU stalls, all CPUs busy: {:.1f} us every {:.0f} us, {} of them over 100 us",
                        mine.mean_ns() / 1e3, mine.every_ns() / 1e3, mine.stalls_over(1e5)));
    });
    for (const auto& [name, step] : steps) {
      b.say(fmt::format("- {}", name));
      step(b, m);
    }
    if (pass + 1 < options.passes)  // wait out the gap, a signal ends it
      for (double t = 0; t < options.gap_s && !guard.stop_requested(); t += 0.1)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!m.iowq_unavailable.empty()) b.say("  io-wq not measured: " + m.iowq_unavailable);
  if (!m.poll_unavailable.empty()) b.say("  async poll not measured: " + m.poll_unavailable);
  guard.throw_if_aborted();
  return calib::derive_calibration(m, info, options.quick);
}

}  // namespace uringsim::host
