#pragma once
// What `compare` and `sweep` share: both run `uringsim run` children, one output directory per
// run. A run is finished when its marker file, written last, holds the hash of the inputs that
// determine its results, so an interrupted study resumes where it stopped and a changed one
// re-runs what changed; a progress line shows how far it is.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tools/app/subprocess.hpp"

namespace uringsim::app::study {

// FNV-1a, 64 bit: small, stable across platforms and releases (std::hash is neither).
std::uint64_t fnv1a(std::string_view data, std::uint64_t h = 0xcbf29ce484222325ULL);
std::string hex64(std::uint64_t h);  // 16 hex digits

// FNV-1a of a scenario file's bytes, in hex.
std::string file_hash(const std::string& bytes);
// What runs each point: `uringsim run` (the simulator) or `uringsim host` (the real kernel, for
// twin), with extra flags and a calibration file for every child.
struct Runner {
  std::string command = "run";
  std::vector<std::string> args;
  std::string calibration;       // --calibration FILE, "" = none
  std::string calibration_hash;  // of that file's bytes
};

// The hash of everything that determines a run's results: the file, the variant, the seed, every
// --set in order, and the runner when it is not a plain `run` (so earlier hashes stay valid).
std::string run_hash(const std::string& file_hash, const std::string& variant, std::uint64_t seed,
                     const std::vector<std::string>& sets, const Runner& runner = {});

// `uringsim COMMAND SCENARIO --quiet --out DIR --seed SEED [ARGS]... [--calibration F] [--variant V]
// [--set S]... [--allow-violations]` (the last only for `run`).
std::vector<std::string> run_command(const std::string& scenario, const std::string& dir, std::uint64_t seed,
                                     const std::string& variant, const std::vector<std::string>& sets,
                                     bool allow_violations, const Runner& runner = {});

// DIR/results.json exists and DIR/MARKER holds "scenario_hash": hash (results.json is renamed into
// place before the marker is written, so this order is safe).
bool run_finished(const std::filesystem::path& dir, const std::string& marker, const std::string& hash);
// After a run that succeeded: writes DIR/MARKER atomically, then removes DIR/run.log.
void mark_finished(const std::filesystem::path& dir, const std::string& marker,
                   const nlohmann::json& content);
// Hidden temporaries of write_file_atomic (".name.tmp.pid.n") that a killed writer left in dir.
void remove_stale_temps(const std::filesystem::path& dir);
// The log a run keeps for diagnosis: DIR/run.log.
std::string log_path(const std::filesystem::path& dir);

// How a run ended. A child killed by a signal did not run to its end: that says nothing about the
// scenario, and the run is done again when the study is resumed.
enum class Outcome { Ok, Failed, NotRun };
Outcome outcome_of(const ChildResult& r, const std::filesystem::path& dir);
std::string describe_failure(const ChildResult& r,
                             const std::filesystem::path& dir);  // exit code and log tail

// One line on a terminal (redrawn with \r), else a plain line per update for logs:
// "LABEL: 3/8 done (2 skipped, 0 failed) eta 4s".
class Progress {
 public:
  Progress(std::string label, std::size_t total, std::size_t to_run, bool quiet);
  void skipped(std::size_t n) { skipped_ += n; }
  void finished(Outcome o);
  void note(const std::string& msg);  // a message on its own line, not mixed into the bar
  void draw();
  void end();
  std::size_t ran() const { return ran_; }
  std::size_t failed() const { return failed_; }
  std::size_t not_run() const { return not_run_; }

 private:
  std::string eta_text() const;
  std::string label_;
  std::size_t total_, to_run_, skipped_ = 0, ran_ = 0, failed_ = 0, not_run_ = 0;
  bool quiet_, tty_, drawn_ = false;
  std::chrono::steady_clock::time_point t0_;
};

// The message after an interrupted study (to stderr), and its exit code: 128 + the signal.
int interrupted_exit(const std::string& label, int signal, std::size_t not_run);

// A CSV field (RFC 4180): quoted, with "" for a quote, when it holds a comma, quote or line break.
std::string csv_field(const std::string& s);

}  // namespace uringsim::app::study
