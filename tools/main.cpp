// uringsim: command-line entry point. Each subcommand lives in tools/app/.
#include <CLI/CLI.hpp>

#include <iostream>

#include "tools/app/cli_suggest.hpp"
#include "tools/app/commands.hpp"
#include "uringsim_version.hpp"

int main(int argc, char** argv) {
  using namespace uringsim::app;
  CLI::App app{"uringsim: a discrete-event simulator of Linux io_uring scheduling"};
  app.set_version_flag("--version", std::string("uringsim ") + URINGSIM_VERSION);
  app.require_subcommand(1);

  RunOptions run;
  auto* run_cmd =
      app.add_subcommand("run", "Simulate one scenario; print a summary and write DIR/results.json");
  add_run_options(*run_cmd, run);

  GraphOptions gr;
  auto* gr_cmd = app.add_subcommand(
      "graph", "Write a scenario's lock-order, wait-for or topology graph as Graphviz dot or JSON");
  add_graph_options(*gr_cmd, gr);

  CompareOptions cmp;
  auto* cmp_cmd = app.add_subcommand(
      "compare",
      "Replicate every variant with independent seeds; means, 95% CIs and differences to the first");
  add_compare_options(*cmp_cmd, cmp);

  ValidateOptions val;
  auto* val_cmd = app.add_subcommand("validate", "Run the validation suite against queueing theory");
  add_validate_options(*val_cmd, val);

  SweepOptions swp;
  auto* swp_cmd = app.add_subcommand(
      "sweep", "Run a scenario over a grid of parameters x variants x reps; resumable, shardable");
  add_sweep_options(*swp_cmd, swp);

  MergeOptions mrg;
  auto* mrg_cmd = app.add_subcommand("merge", "Join the output directories of sweep shards");
  add_merge_options(*mrg_cmd, mrg);

  ReportOptions rep;
  auto* rep_cmd = app.add_subcommand(
      "report", "Write one self-contained HTML page (tables, gnuplot SVG plots) from a compare or sweep DIR");
  add_report_options(*rep_cmd, rep);

  TwinOptions twn;
  auto* twn_cmd = app.add_subcommand(
      "twin",
      "Run a grid on the real kernel and in the simulator; per point host mean +- CI, simulated, error");
  add_twin_options(*twn_cmd, twn);

  ImportFioOptions imp;
  auto* imp_cmd = app.add_subcommand(
      "import-fio",
      "Write the scenario equivalent to a fio job (io_uring engine), from a job file or --cmdline");
  add_import_fio_options(*imp_cmd, imp);

  ExportFioOptions exp;
  auto* exp_cmd = app.add_subcommand(
      "export-fio",
      "Write the fio job file equivalent to a scenario's fio workload (the inverse of import-fio)");
  add_export_fio_options(*exp_cmd, exp);

  HostCommandOptions host;
  auto* host_cmd = app.add_subcommand(
      "host",
      "Run a scenario's workload on this machine's kernel (io_uring); write DIR/results.json like run");
  add_host_options(*host_cmd, host);
  CalibrateOptions cal;
  auto* cal_cmd = app.add_subcommand(
      "calibrate", "Measure this machine's kernel costs with micro-benchmarks; write a calibration file");
  add_calibrate_options(*cal_cmd, cal);

  if (const auto msg = first_word_error(app, argc, argv)) {
    std::cerr << *msg;
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    std::cerr << extras_error(app, e);
    return 2;
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    // CLI11 returns 0 for --help/--version; any real usage error is bad input (exit 2).
    return rc == 0 ? 0 : 2;
  }
  if (*run_cmd) return cmd_run(run);
  if (*val_cmd) return cmd_validate(val);
  if (*gr_cmd) return cmd_graph(gr);
  if (*cmp_cmd) return cmd_compare(cmp);
  if (*swp_cmd) return cmd_sweep(swp);
  if (*mrg_cmd) return cmd_merge(mrg);
  if (*rep_cmd) return cmd_report(rep);
  if (*imp_cmd) return cmd_import_fio(imp);
  if (*twn_cmd) return cmd_twin(twn);
  if (*exp_cmd) return cmd_export_fio(exp);
  if (*host_cmd) return cmd_host(host);
  if (*cal_cmd) return cmd_calibrate(cal);
  return 2;
}
