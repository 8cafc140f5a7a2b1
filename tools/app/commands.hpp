#pragma once
// Subcommands of the uringsim tool. Exit codes: 0 success; 2 bad input (scenario, flags);
// 1 the simulation failed, an invariant broke, or a design-review check failed (a violation, a
// lock-order cycle, a deadlock; `run --allow-violations` exits 0 for these, results are complete).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace uringsim::app {

constexpr int kExitOk = 0, kExitFailed = 1, kExitBadInput = 2;

struct RunOptions {
  std::string scenario;
  std::string out_dir;  // "" = out/<scenario-name>[/<variant>]
  std::optional<std::uint64_t> seed;
  std::string variant;
  std::vector<std::string> sets;
  bool quiet = false;
  bool profile = false;           // print the perf-style profile
  std::string profile_folded;     // --profile-folded FILE: folded stacks for flame graphs
  bool locks = false;             // print lock statistics
  bool breakdown = false;         // print the request latency breakdown
  std::string trace_file;         // --trace: Chrome/Perfetto timeline
  std::string trace_window;       // --trace-window-ms a:b
  bool allow_violations = false;  // exit 0 even if the design-review checks failed
  std::string calibration;        // --calibration FILE; "" = none
  std::string fio_json;           // --fio-json FILE: a fio workload's results in fio's JSON layout
};
void add_run_options(CLI::App& cmd, RunOptions& o);
int cmd_run(const RunOptions& o);

// `uringsim graph`: the lock-order, wait-for or topology graph of a scenario, as dot or JSON.
struct GraphOptions {
  std::string scenario;
  std::string kind;            // lock-order | wait-for | topology
  std::string format = "dot";  // dot | json
  std::string out;             // "" = stdout
  std::optional<std::uint64_t> seed;
  std::string variant;
  std::vector<std::string> sets;
};
void add_graph_options(CLI::App& cmd, GraphOptions& o);
int cmd_graph(const GraphOptions& o);

struct CompareOptions {
  std::string scenario;
  std::string variants;  // comma-separated; "" = all of the scenario's variants
  int reps = 5;
  int jobs = 0;  // 0 = number of cores
  std::string out_dir;
  std::vector<std::string> sets;
  bool quiet = false;
  bool allow_violations = false;  // passed to each run: a failed design-review check is not a failed point
  std::string calibration;        // --calibration FILE, passed to each run
};
void add_compare_options(CLI::App& cmd, CompareOptions& o);
int cmd_compare(const CompareOptions& o);

struct ValidateOptions {
  bool quick = false;
  bool json = false;
  int jobs = 0;  // 0 = number of cores
};
void add_validate_options(CLI::App& cmd, ValidateOptions& o);
int cmd_validate(const ValidateOptions& o);

struct SweepOptions {
  std::string scenario;
  std::vector<std::string> grids;  // "dotted.path=v1,v2,..." or ranges start:stop:step
  std::string variants;            // comma-separated; "" = all of the scenario's variants
  int reps = 1;
  int jobs = 0;  // 0 = number of cores
  std::vector<std::string> sets;
  std::string shard;  // "i/N", 1-based; "" = all points
  std::string out_dir;
  bool quiet = false;
  bool allow_violations = false;  // passed to each run
  std::string calibration;        // --calibration FILE, passed to each run
  // Not on the command line; twin sets them. "run" simulates each point, "host" runs it on the real
  // kernel (`uringsim host`) with runner_args added to each child's flags.
  std::string runner = "run";
  std::vector<std::string> runner_args;
  bool reps_outer = false;  // run every point's rep 0, then every rep 1, ... (sweep::run_order)
};
void add_sweep_options(CLI::App& cmd, SweepOptions& o);
int cmd_sweep(const SweepOptions& o);

// `uringsim twin`: a grid on the real kernel and in the simulator, joined per point (docs/host.md).
struct TwinOptions {
  std::string scenario;
  std::string calibration;         // for the simulated side
  std::vector<std::string> grids;  // as sweep's; none = the scenario as it is
  std::string variants;
  int reps = 3;
  int jobs = 0;  // simulations at once; host points always run one at a time
  std::vector<std::string> sets;
  double wait_quiet_s = 30;  // per host point
  double max_slowdown = 0;   // --max-slowdown: 0 = not asked
  std::string out_dir;
  bool quiet = false;
};
void add_twin_options(CLI::App& cmd, TwinOptions& o);
int cmd_twin(const TwinOptions& o);

struct MergeOptions {
  std::vector<std::string> dirs;  // shard output directories of one sweep
  std::string out_dir;
  bool quiet = false;
};
void add_merge_options(CLI::App& cmd, MergeOptions& o);
int cmd_merge(const MergeOptions& o);

struct ReportOptions {
  std::string dir;  // a compare or sweep output directory
  std::string out;  // "" = DIR/report.html
};
void add_report_options(CLI::App& cmd, ReportOptions& o);
int cmd_report(const ReportOptions& o);
// The report of a twin directory (DIR/twin.json): host and simulation side by side.
int cmd_twin_report(const ReportOptions& o);

struct ImportFioOptions {
  std::string job_file;           // "" = use cmdline
  std::string cmdline;            // a fio command line
  std::string out;                // "" = standard output
  std::string name;               // scenario name; "" = derived
  std::string job;                // job section to import; "" = the only (or identical) job(s)
  std::vector<std::string> vars;  // NAME=VALUE for ${NAME} placeholders
  bool lenient = false;           // unsupported options are warnings, not errors
};
void add_import_fio_options(CLI::App& cmd, ImportFioOptions& o);
int cmd_import_fio(const ImportFioOptions& o);

// `uringsim export-fio`: the fio job file of a scenario's fio workload (docs/import-fio.md, Export).
struct ExportFioOptions {
  std::string scenario;
  std::string variant;
  std::vector<std::string> sets;
  std::string out;     // "" = standard output
  std::string target;  // filename= (with size= unless a block device); "" = none
};
void add_export_fio_options(CLI::App& cmd, ExportFioOptions& o);
int cmd_export_fio(const ExportFioOptions& o);

// `uringsim host`: the scenario's workload on this machine's kernel (docs/host.md). Exit codes:
// 0 ok; 2 bad input, a model-only field or io_uring unavailable; 1 a failed run; 128 + signal
// when interrupted (SIGINT 130, SIGTERM 143). Nothing is written unless it exits 0.
struct HostCommandOptions {
  std::string scenario;
  std::string out_dir;  // "" = out/<scenario-name>[/<variant>]/host
  std::string variant;
  std::vector<std::string> sets;
  std::optional<std::uint64_t> seed;
  bool ignore_model_fields = false;
  std::string target;        // fio only
  double wait_quiet_s = 0;   // --wait-quiet
  double wait_speed_ns = 0;  // --wait-speed: 0 = not asked
  bool quiet = false;
};
void add_host_options(CLI::App& cmd, HostCommandOptions& o);
int cmd_host(const HostCommandOptions& o);
// `uringsim calibrate`: micro-benchmarks of this machine's kernel costs -> a calibration file.
struct CalibrateOptions {
  std::string out = "out/calibration.json";
  bool quick = false;  // ~10x fewer repetitions: a few seconds
  bool quiet = false;  // no progress lines and no table
  int passes = 1;
  double gap_s = 0;
  double wait_quiet_s = 0;   // --wait-quiet: 0 = do not wait
  double wait_speed_ns = 0;  // --wait-speed: 0 = not asked
};
void add_calibrate_options(CLI::App& cmd, CalibrateOptions& o);
int cmd_calibrate(const CalibrateOptions& o);

}  // namespace uringsim::app
