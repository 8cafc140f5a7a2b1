#include <fmt/format.h>

#include <iostream>

#include "analysis/format.hpp"
#include "analysis/io.hpp"
#include "config/cost_table.hpp"
#include "host/calibrate.hpp"
#include "host/guard.hpp"
#include "tools/app/commands.hpp"

namespace uringsim::app {
namespace {

std::string render_calibration(const config::Calibration& c) {
  const nlohmann::json table = config::CostTable::defaults().describe();
  std::vector<std::vector<std::string>> rows;
  for (const auto& [key, e] : c.costs)
    rows.push_back({key, fmt::format("{:g}", table.at(key).at("default").get<double>()),
                    fmt::format("{:.4g}", e.value), e.unit, e.spread});
  std::string out = analysis::render_table(
      {"entry", "default", "measured", "unit", "spread (raw, before subtractions)"}, rows);
  auto ns = [](const std::optional<double>& x) {
    return x ? fmt::format("{:.0f} ns", *x) : std::string("-");
  };
  out +=
      fmt::format("machine: {} cores, {:.3g} GHz ({}); one-way wake-up to an idle CPU {}, to a busy CPU {}\n",
                  c.machine.cores, c.machine.ghz, c.machine.ghz_source, ns(c.machine.wake_idle_ns),
                  ns(c.machine.wake_busy_ns));
  if (c.machine.idle_exit_curve) {
    std::string points;
    for (const auto& [idle, exit] : *c.machine.idle_exit_curve)
      points += fmt::format("{}{:.0f} us: +{:.0f} ns", points.empty() ? "" : ", ", idle / 1e3, exit);
    out += fmt::format("idle CPUs: a wake-up after idle of {} (machine.idle_exit_curve)\n", points);
  } else {
    out += fmt::format(
        "idle CPUs: a wake-up after more than {} of idle pays {} more (machine.halt_poll_ns, "
        "machine.idle_exit_ns)\n",
        ns(c.machine.halt_poll_ns), ns(c.machine.idle_exit_ns));
  }
  if (!c.machine.wake_pack_util)
    out += "wake-up packing: not measured (machine.wake_pack_util)\n";
  else if (*c.machine.wake_pack_util > 0)
    out += fmt::format(
        "wake-up packing: a wakee stays with its waker while the waker's CPU is busy under {:.0f} % "
        "(machine.wake_pack_util)\n",
        100 * *c.machine.wake_pack_util);
  else
    out += "wake-up packing: none, upstream placement (machine.wake_pack_util 0)\n";
  out +=
      fmt::format("kernel preemption model: {} (machine.preempt)\n", c.machine.preempt.value_or("not known"));
  if (c.passes && c.passes->dropped > 0)
    out += fmt::format(
        "passes: {} kept of {} asked, {} dropped with the CPU speed probe over {:.3f} ns per add\n",
        c.passes->kept, c.passes->asked, c.passes->dropped, c.passes->max_ns_per_add.value_or(0));
  out += fmt::format("{} entries keep their defaults (listed with the reason in defaults_kept)\n",
                     c.defaults_kept.size());
  return out;
}

}  // namespace

void add_calibrate_options(CLI::App& cmd, CalibrateOptions& o) {
  cmd.add_option("--out", o.out, "Calibration file to write (default: out/calibration.json)");
  cmd.add_flag("--quick", o.quick, "About 10x fewer repetitions: a few seconds, noisier figures");
  cmd.add_flag("--quiet", o.quiet, "Print nothing but errors");
  cmd.add_option(
         "--passes", o.passes,
         "Run every benchmark this many times and take each entry's median over all of them (default 1)")
      ->check(CLI::Range(1, 100));
  cmd.add_option("--gap-s", o.gap_s,
                 "Seconds between passes (default 0): spread them over the time a VM's costs drift")
      ->check(CLI::Range(0.0, 3600.0));
  cmd.add_option("--wait-quiet", o.wait_quiet_s,
                 "Before each pass, wait up to SECONDS for other processes to use less than 10% of a CPU")
      ->check(CLI::Range(0.0, 3600.0));
  cmd.add_option(
         "--wait-speed", o.wait_speed_ns,
         "With --wait-quiet: also wait for the CPU speed probe to read at most NS ns per dependent add, "
         "and drop (and run again) a pass that reads more at its start or end")
      ->check(CLI::PositiveNumber);
}

int cmd_calibrate(const CalibrateOptions& o) {
  if (o.wait_speed_ns > 0 && o.wait_quiet_s <= 0) {
    std::cerr << "error: --wait-speed needs --wait-quiet SECONDS: how long each pass may wait\n";
    return kExitBadInput;
  }
  host::CalibrateOptions ho;
  ho.quick = o.quick;
  ho.passes = o.passes;
  ho.gap_s = o.gap_s;
  ho.quiet_wait_s = o.wait_quiet_s;
  ho.max_ns_per_add = o.wait_speed_ns;
  if (!o.quiet) ho.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  config::Calibration c;
  try {
    c = host::calibrate(ho);
  } catch (const host::Unavailable& e) {
    std::cerr << "error: cannot calibrate on this machine: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const host::Interrupted& e) {
    std::cerr << "calibrate: " << e.what() << "; nothing written\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "; nothing written\n";
    return kExitFailed;
  }
  try {
    analysis::write_file_atomic(o.out, analysis::dump_json(c.to_json()));
  } catch (const std::exception& e) {
    std::cerr << "error: cannot write " << o.out << ": " << e.what() << "\n";
    return kExitFailed;
  }
  if (!o.quiet) std::cout << render_calibration(c) << "wrote " << o.out << "\n";
  return kExitOk;
}

}  // namespace uringsim::app
