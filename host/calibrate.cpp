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
#include "host/quiet.hpp"
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

  if (options.passes < 1 || options.gap_s < 0 || options.quiet_wait_s < 0 || options.max_ns_per_add < 0)
    throw std::invalid_argument(
        "calibrate: --passes must be >= 1, --gap-s and --wait-quiet >= 0, --wait-speed > 0");
  // With a speed bound, a slowed pass is run again: up to twice as many passes in all.
  const bool bounded = options.max_ns_per_add > 0;
  const int attempts = bounded ? 2 * options.passes : options.passes;
  RunGuard guard(((options.quick ? kLimitQuickS : kLimitFullS) + options.gap_s + options.quiet_wait_s) *
                 attempts);
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
      {"wake-up packing", calib::measure_wake_pack},
      {"io-wq", calib::measure_iowq},
      {"loopback TCP", calib::measure_tcp},
      {"loopback TCP over many connections", calib::measure_tcp_many},
      {"async poll", calib::measure_poll},
      {"task_work kick", calib::measure_kick},
  };
  config::CalibrationPasses record;
  record.asked = options.passes;
  if (bounded) record.max_ns_per_add = options.max_ns_per_add;
  auto slow = [&](double ns_per_add) { return bounded && ns_per_add > options.max_ns_per_add; };
  for (int attempt = 0; attempt < attempts && record.kept < options.passes && !guard.stop_requested();
       ++attempt) {
    if (attempt > 0)  // wait out the gap, a signal ends it
      for (double t = 0; t < options.gap_s && !guard.stop_requested(); t += 0.1)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (options.passes > 1 || bounded)
      b.say(fmt::format("pass {} of {}{}", record.kept + 1, options.passes,
                        record.dropped ? fmt::format(" ({} dropped so far)", record.dropped) : ""));
    if (options.quiet_wait_s > 0) {
      const QuietOutcome q =
          wait_for_quiet(options.quiet_wait_s, kQuietOtherCpuPct, guard, options.max_ns_per_add);
      record.waited_s += q.waited_s;
      if (guard.stop_requested()) break;
      if (slow(q.ns_per_add)) {  // the CPU stayed slow: not worth a pass
        ++record.dropped;
        b.say(fmt::format(
            "  dropped: after {:.1f} s the CPU speed probe still read {:.3f} ns per add, over {:.3f}",
            q.waited_s, q.ns_per_add, options.max_ns_per_add));
        continue;
      }
      if (!q.quiet)
        b.say(fmt::format(
            "  not quiet after {:.1f} s: other processes used {:.0f} % of a CPU; measuring anyway",
            q.waited_s, q.other_cpu_pct));
    }
    const calib::Measurements before = m;  // restored if the pass turns out slowed
    double start_speed = 0, end_speed = 0;
    calib::run_pinned(b, b.cpu_a, [&] { start_speed = probe_cpu_speed().ns_per_add; });
    m.speed_ns_per_add.push_back(start_speed);
    b.say(fmt::format("  CPU speed: {:.3f} ns per dependent add", start_speed));
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
    calib::run_pinned(b, b.cpu_a, [&] { end_speed = probe_cpu_speed().ns_per_add; });
    if (slow(start_speed) || slow(end_speed)) {
      m = before;
      ++record.dropped;
      b.say(fmt::format(
          "  dropped: the CPU speed probe read {:.3f} and {:.3f} ns per add at its start and end, "
          "over {:.3f}",
          start_speed, end_speed, options.max_ns_per_add));
      continue;
    }
    ++record.kept;
  }
  guard.throw_if_aborted();
  if (record.kept == 0)
    throw std::runtime_error(fmt::format(
        "every one of {} passes was dropped: the CPU speed probe read over {:.3f} ns per add (--wait-speed) "
        "at the start or end of each; the machine was slowed, calibrate when it is at speed",
        record.dropped, options.max_ns_per_add));
  if (record.kept < options.passes)
    b.say(fmt::format("kept {} of {} passes: {} were dropped as slowed", record.kept, options.passes,
                      record.dropped));
  if (!m.iowq_unavailable.empty()) b.say("  io-wq not measured: " + m.iowq_unavailable);
  if (!m.poll_unavailable.empty()) b.say("  async poll not measured: " + m.poll_unavailable);
  config::Calibration c = calib::derive_calibration(m, info, options.quick);
  if (m.stalls.stalls() > 0 && !calib::stalls_usable(m.stalls))
    b.say(fmt::format(
        "  CPU stalls not recorded: their gaps took {:.0f} % of a busy CPU, {:.0f} a second, which is "
        "other processes' time on these CPUs rather than the machine's stalls (calibrate on a quiet "
        "machine: --wait-quiet)",
        100 * m.stalls.share(), m.stalls.per_s()));
  c.passes = record;
  return c;
}

}  // namespace uringsim::host
