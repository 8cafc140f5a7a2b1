#include "tools/app/study_runs.hpp"

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <iostream>

#include "analysis/io.hpp"
#include "tools/app/read_file.hpp"

namespace uringsim::app::study {

namespace fs = std::filesystem;
using nlohmann::json;

std::uint64_t fnv1a(std::string_view data, std::uint64_t h) {
  for (const unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex64(std::uint64_t h) {
  return fmt::format("{:016x}", h);
}

std::string file_hash(const std::string& bytes) {
  return hex64(fnv1a(bytes));
}

std::string run_hash(const std::string& file_hash, const std::string& variant, std::uint64_t seed,
                     const std::vector<std::string>& sets, const Runner& runner) {
  std::string key = "file=" + file_hash + "\nvariant=" + variant + "\nseed=" + std::to_string(seed) + "\n";
  for (const auto& s : sets) key += "set=" + s + "\n";
  if (runner.command != "run") key += "runner=" + runner.command + "\n";
  for (const auto& a : runner.args) key += "runner_arg=" + a + "\n";
  if (!runner.calibration_hash.empty()) key += "calibration=" + runner.calibration_hash + "\n";
  return hex64(fnv1a(key));
}

std::vector<std::string> run_command(const std::string& scenario, const std::string& dir, std::uint64_t seed,
                                     const std::string& variant, const std::vector<std::string>& sets,
                                     bool allow_violations, const Runner& runner) {
  std::vector<std::string> c = {self_exe(), runner.command,      scenario, "--quiet", "--out", dir,
                                "--seed",   std::to_string(seed)};
  c.insert(c.end(), runner.args.begin(), runner.args.end());
  if (!runner.calibration.empty()) c.insert(c.end(), {"--calibration", runner.calibration});
  if (!variant.empty()) c.insert(c.end(), {"--variant", variant});
  for (const auto& s : sets) c.insert(c.end(), {"--set", s});
  if (allow_violations && runner.command == "run") c.push_back("--allow-violations");
  return c;
}

bool run_finished(const fs::path& dir, const std::string& marker, const std::string& hash) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "results.json", ec) || !fs::is_regular_file(dir / marker, ec)) return false;
  try {
    return json::parse(read_text_file(dir / marker)).value("scenario_hash", "") == hash;
  } catch (const std::exception&) {
    return false;
  }
}

void mark_finished(const fs::path& dir, const std::string& marker, const json& content) {
  analysis::write_file_atomic((dir / marker).string(), analysis::dump_json(content));
  std::error_code ec;
  fs::remove(log_path(dir), ec);
}

void remove_stale_temps(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto name = e.path().filename().string();
    if (name.size() > 1 && name[0] == '.' && name.find(".tmp.") != std::string::npos)
      fs::remove(e.path(), ec);
  }
}

std::string log_path(const fs::path& dir) {
  return (dir / "run.log").string();
}

Outcome outcome_of(const ChildResult& r, const fs::path& dir) {
  if (r.signal != 0) return Outcome::NotRun;
  std::error_code ec;
  return r.exit_code == 0 && fs::is_regular_file(dir / "results.json", ec) ? Outcome::Ok : Outcome::Failed;
}

std::string describe_failure(const ChildResult& r, const fs::path& dir) {
  const auto& txt = r.output;
  return fmt::format("failed (exit {}), see {}: {}", r.exit_code, log_path(dir),
                     txt.size() > 400 ? "..." + txt.substr(txt.size() - 400) : txt);
}

Progress::Progress(std::string label, std::size_t total, std::size_t to_run, bool quiet)
    : label_(std::move(label)),
      total_(total),
      to_run_(to_run),
      quiet_(quiet),
      tty_(isatty(2) != 0),
      t0_(std::chrono::steady_clock::now()) {}

void Progress::finished(Outcome o) {
  (o == Outcome::Ok ? ran_ : o == Outcome::Failed ? failed_ : not_run_)++;
}

void Progress::note(const std::string& msg) {
  if (tty_ && drawn_) std::cerr << "\r\033[K";
  std::cerr << msg << "\n";
  if (tty_ && drawn_) draw();
}

void Progress::draw() {
  if (quiet_) return;
  const std::size_t done = skipped_ + ran_ + failed_ + not_run_;
  const std::string counts = fmt::format("{} skipped, {} failed{}", skipped_, failed_,
                                         not_run_ ? fmt::format(", {} not run", not_run_) : std::string());
  const auto eta = eta_text();
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = total_ ? static_cast<int>(kWidth * done / total_) : kWidth;
    std::cerr << fmt::format("\r\033[K{} [{}{}] {}/{} done, {}, eta {}", label_, std::string(filled, '#'),
                             std::string(kWidth - filled, '.'), done, total_, counts, eta);
    drawn_ = true;
  } else {
    std::cerr << fmt::format("{}: {}/{} done ({}) eta {}\n", label_, done, total_, counts, eta);
  }
  std::cerr.flush();
}

void Progress::end() {
  if (tty_ && drawn_) std::cerr << "\n";
  drawn_ = false;
}

std::string Progress::eta_text() const {
  const std::size_t finished = ran_ + failed_ + not_run_;
  if (finished >= to_run_) return "0s";
  if (finished == 0) return "?";
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  return fmt::format("{:.0f}s", el / static_cast<double>(finished) * static_cast<double>(to_run_ - finished));
}

int interrupted_exit(const std::string& label, int signal, std::size_t not_run) {
  std::cerr << fmt::format(
      "{}: interrupted ({}); {} run{} not run; the finished ones are kept: run the same "
      "command again to resume\n",
      label, signal == SIGINT ? "SIGINT" : "SIGTERM", not_run, not_run == 1 ? "" : "s");
  return 128 + signal;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace uringsim::app::study
