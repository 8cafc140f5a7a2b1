// Outputs other tools read: `run --profile` in perf report's layout and `--profile-folded` for
// flame graphs, `run --locks` in /proc/lock_stat's, the run summary's labels, and the CLI's
// did-you-mean for unknown options and subcommands.
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace testing;
using nlohmann::json;

namespace {

const std::string kHybrid = source_path("scenarios/seeds/async-hybrid.json");
const std::string kShort = " --variant hybrid --set warmup_ms=20 --set duration_ms=10";

// The lines of `text`, without the blank ones it starts with (run prints one before a report).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!lines.empty() || !l.empty()) lines.push_back(l);
  return lines;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> w;
  std::istringstream in(s);
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

// stdout only (warnings go to stderr) of `uringsim run ARGS --out DIR/out`, which must succeed.
std::string run_stdout(const std::filesystem::path& dir, const std::string& args) {
  const auto r =
      run_shell(std::string(URINGSIM_EXE) + " run " + args + " --out " + (dir / "out").string(), false);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return r.output;
}

}  // namespace

TEST_CASE("outputs: --profile has perf report's header layout, --profile-folded the folded stacks") {
  const auto dir = fresh_dir("outputs-profile");
  const auto folded = dir / "cpu.folded";
  const auto L =
      lines_of(run_stdout(dir, kHybrid + kShort + " --quiet --profile --profile-folded " + folded.string()));
  const auto res = json::parse(slurp(dir / "out" / "results.json"));
  const auto& p = res.at("profile");
  const auto& entries = p.at("entries");
  const double total = p.at("total_cycles").get<double>();
  REQUIRE(entries.size() > 5);
  REQUIRE(L.size() == 10 + entries.size() + 5);

  // The header: comment lines, sample and event counts, column names and their dotted underline.
  CHECK(L[0].rfind("# ", 0) == 0);
  CHECK(L[1] == "#");
  CHECK(L[2] == "# Total Lost Samples: 0");
  CHECK(L[3] == "#");
  std::smatch m;
  REQUIRE(std::regex_match(L[4], m, std::regex("# Samples: ([0-9]+)([ KMG]) of event 'cycles'")));
  const double unit = m[2] == "K" ? 1e3 : m[2] == "M" ? 1e6 : m[2] == "G" ? 1e9 : 1;
  const double samples = total / 1000;  // one sample per 1000 cycles
  CHECK(std::stod(m[1]) * unit <= samples);
  CHECK(samples < (std::stod(m[1]) + 1) * unit);
  CHECK(L[5] == fmt::format("# Event count (approx.): {}", std::llround(total)));
  CHECK(L[6] == "#");
  REQUIRE(std::regex_match(L[7], m, std::regex("# Overhead  (Command *)  Symbol")));
  const std::size_t comm_w = static_cast<std::size_t>(m[1].length());
  REQUIRE(std::regex_match(L[8], m, std::regex("# (\\.+)  (\\.+)  (\\.+)")));
  CHECK(m[1].length() == 8);
  CHECK(static_cast<std::size_t>(m[2].length()) == comm_w);
  const std::size_t sym_w = static_cast<std::size_t>(m[3].length());
  CHECK(L[9] == "#");

  // One row per entry, in order: overhead right-aligned under "Overhead", the command padded to its
  // column, the symbol marked [k] or [.] and without spaces.
  double pct_sum = 0;
  bool app_loop = false;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string& row = L[10 + i];
    INFO(row);
    REQUIRE(row.size() > 14 + comm_w);
    const std::string overhead = row.substr(0, 10);
    REQUIRE(std::regex_match(overhead, m, std::regex(" *([0-9]+\\.[0-9]{2})%")));
    CHECK(std::stod(m[1]) == Approx(entries[i].at("pct").get<double>()).margin(0.0051));
    pct_sum += std::stod(m[1]);
    CHECK(row.substr(10, 2) == "  ");
    CHECK(words(row.substr(12, comm_w)) ==
          std::vector<std::string>{entries[i].at("comm").get<std::string>()});
    CHECK(row.substr(12 + comm_w, 2) == "  ");
    const std::string sym = row.substr(14 + comm_w);
    CHECK(std::regex_match(sym, std::regex("\\[[k.]\\] [^ ]+")));
    CHECK(sym.size() <= sym_w);
    app_loop = app_loop || sym == "[.] app_event_loop";  // "[app] event loop"
  }
  CHECK(app_loop);
  CHECK(pct_sum == Approx(100).margin(0.01 * entries.size()));
  const std::size_t n = 10 + entries.size();
  CHECK(L[n] == "");
  CHECK(L[n + 1] == "");
  CHECK(L[n + 2] == "#");
  CHECK(L[n + 3].rfind("# spin slow path", 0) == 0);
  CHECK(L[n + 4] == "#");

  // Folded stacks: "frames count" per line, frames split by ';', integer counts summing to the cycles.
  const auto F = lines_of(slurp(folded));
  std::size_t frames = 0;  // entries of at least one cycle once rounded
  for (const auto& e : entries) frames += std::llround(e.at("cycles").get<double>()) > 0;
  REQUIRE(F.size() == frames);
  double sum = 0;
  bool kernel_frame = false;
  for (const auto& line : F) {
    INFO(line);
    REQUIRE(std::regex_match(line, m, std::regex("([^ ;]+);([^ ;]+) ([0-9]+)")));
    sum += std::stod(m[3]);
    kernel_frame = kernel_frame || m[2] == "io_submit_sqes_[k]";
  }
  CHECK(kernel_frame);
  CHECK(std::abs(sum - total) <= 0.5 * F.size());
}

TEST_CASE(
    "outputs: --locks prints /proc/lock_stat's columns, rows matching results.json, contention points") {
  const auto dir = fresh_dir("outputs-locks");
  const auto L = lines_of(run_stdout(dir, kHybrid + kShort + " --quiet --locks"));
  const auto res = json::parse(slurp(dir / "out" / "results.json"));
  const auto& locks = res.at("locks");

  REQUIRE(L.size() > 6);
  CHECK(L[0] == "lock_stat version 0.4");
  CHECK(L[1] == std::string(221, '-'));
  CHECK(L[2].size() == 220);
  CHECK(L[2].substr(0, 40) == fmt::format("{:>40}", "class name"));
  CHECK(words(L[2].substr(40)) == std::vector<std::string>{"con-bounces", "contentions", "waittime-min",
                                                           "waittime-max", "waittime-total", "waittime-avg",
                                                           "acq-bounces", "acquisitions", "holdtime-min",
                                                           "holdtime-max", "holdtime-total", "holdtime-avg"});
  CHECK(L[3] == L[1]);
  CHECK(L[4] == "");

  // The new keys are consistent with the old ones, for every lock and call site.
  std::string most;  // the most contended lock
  for (const auto& [name, l] : locks.items()) {
    for (const json* s : {&l}) {
      CHECK(s->at("wait_ns_min").get<double>() <= s->at("wait_ns_max").get<double>());
      CHECK(s->at("hold_ns_min").get<double>() <= s->at("hold_ns_max").get<double>());
      CHECK(s->at("con_bounces").get<std::uint64_t>() <= s->at("contended").get<std::uint64_t>());
      CHECK(s->at("acq_bounces").get<std::uint64_t>() <= s->at("acquisitions").get<std::uint64_t>());
      CHECK(s->at("con_bounces").get<std::uint64_t>() <= s->at("acq_bounces").get<std::uint64_t>());
      if (s->at("contended").get<std::uint64_t>() > 0) CHECK(s->at("wait_ns_min").get<double>() > 0);
    }
    if (most.empty() || l.at("contended") > locks.at(most).at("contended")) most = name;
  }
  REQUIRE(locks.at(most).at("contended").get<std::uint64_t>() > 0);

  // Its row: the name right-aligned in 40 columns and a colon, then the twelve numbers.
  const auto& l = locks.at(most);
  std::size_t row = 0;
  for (std::size_t i = 0; i < L.size(); ++i)
    if (L[i].rfind(fmt::format("{:>40}:", most), 0) == 0) row = i;
  REQUIRE(row > 4);
  INFO(L[row]);
  CHECK(L[row].size() == 220);
  const auto w = words(L[row].substr(41));
  REQUIRE(w.size() == 12);
  const double con = l.at("contended").get<double>(), acq = l.at("acquisitions").get<double>();
  auto us = [](const json& v) { return v.get<double>() / 1e3; };
  CHECK(std::stod(w[0]) == l.at("con_bounces").get<double>());
  CHECK(std::stod(w[1]) == con);
  CHECK(std::stod(w[2]) == Approx(us(l.at("wait_ns_min"))).margin(0.0051));
  CHECK(std::stod(w[3]) == Approx(us(l.at("wait_ns_max"))).margin(0.0051));
  CHECK(std::stod(w[4]) == Approx(us(l.at("wait_ns_total"))).margin(0.0051));
  CHECK(std::stod(w[5]) == Approx(us(l.at("wait_ns_total")) / con).margin(0.0051));
  CHECK(std::stod(w[6]) == l.at("acq_bounces").get<double>());
  CHECK(std::stod(w[7]) == acq);
  CHECK(std::stod(w[8]) == Approx(us(l.at("hold_ns_min"))).margin(0.0051));
  CHECK(std::stod(w[9]) == Approx(us(l.at("hold_ns_max"))).margin(0.0051));
  CHECK(std::stod(w[10]) == Approx(us(l.at("hold_ns_total"))).margin(0.0051));
  CHECK(std::stod(w[11]) == Approx(us(l.at("hold_ns_total")) / acq).margin(0.0051));

  // Then its contention points: a dashed rule under the name, at most four sites, most waits first,
  // each "name count [<address>] site" with the count results.json has for that site.
  const std::string rule = std::string(40 - most.size(), ' ') + std::string(most.size(), '-');
  REQUIRE(L[row + 1] == rule);
  std::uint64_t max_site = 0;
  for (const auto& [site, s] : l.at("sites").items())
    max_site = std::max(max_site, s.at("contended").get<std::uint64_t>());
  std::uint64_t prev = max_site;
  std::size_t i = row + 2;
  for (; i < L.size() && L[i] != rule && i < row + 6; ++i) {
    INFO(L[i]);
    const auto p = words(L[i]);
    REQUIRE(p.size() == 4);
    CHECK(p[0] == most);
    CHECK(std::regex_match(p[2], std::regex("\\[<0+>\\]")));
    REQUIRE(l.at("sites").contains(p[3]));  // these sites' names have no spaces
    CHECK(std::stoull(p[1]) == l.at("sites").at(p[3]).at("contended").get<std::uint64_t>());
    CHECK(std::stoull(p[1]) <= prev);
    prev = std::stoull(p[1]);
  }
  CHECK(i > row + 2);
  CHECK(std::stoull(words(L[row + 2])[1]) == max_site);
}

TEST_CASE("outputs: the run summary says what latency is measured and shows the overrides") {
  const auto dir = fresh_dir("outputs-summary");
  auto row = [](const std::string& out, const std::string& label) {
    for (const auto& l : lines_of(out))
      if (l.rfind(label, 0) == 0) return l;
    return std::string();
  };
  const auto mm1 = run_stdout(
      dir, source_path("scenarios/validation/mm1.json") + " --variant rho09 --set duration_ms=200 --seed 3");
  INFO(mm1);
  CHECK(row(mm1, "scenario").find("mm1 (--variant rho09 --set duration_ms=200 --seed 3)") !=
        std::string::npos);
  CHECK(row(mm1, "latency is").find("response time") != std::string::npos);

  const auto echo = run_stdout(dir, kHybrid + kShort);
  INFO(echo);
  CHECK(row(echo, "scenario").find("(--variant hybrid --set warmup_ms=20 --set duration_ms=10)") !=
        std::string::npos);
  CHECK(row(echo, "latency is").find("client round trip") != std::string::npos);

  const auto nop = run_stdout(dir, source_path("scenarios/validation/iowq-nop.json") +
                                       " --variant split --set warmup_ms=5 --set duration_ms=5");
  INFO(nop);
  CHECK(row(nop, "latency is").find("SQE -> CQE") != std::string::npos);
  // No override: the name alone.
  const auto plain = run_stdout(dir, source_path("scenarios/validation/mm1.json") + " --set duration_ms=50");
  CHECK(row(plain, "scenario").find("mm1 (--set duration_ms=50)") != std::string::npos);
}

TEST_CASE("outputs: unknown options and subcommands get a did-you-mean, exit 2, nothing written") {
  const auto dir = fresh_dir("outputs-cli");
  const std::string mm1 = source_path("scenarios/validation/mm1.json");
  const std::string out = " --out " + (dir / "out").string();

  auto r = run_cli("run " + mm1 + " --varient rho09" + out);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--varient: unknown option (did you mean --variant?)") != std::string::npos);
  r = run_cli("run " + mm1 + " --profile-foldd=x.folded" + out);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("did you mean --profile-folded?") != std::string::npos);
  r = run_cli("swep " + mm1 + out);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("'swep' is not a subcommand (did you mean 'sweep'?)") != std::string::npos);
  r = run_cli("--verison");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("did you mean --version?") != std::string::npos);
  // Nothing close: the list of subcommands; an unknown option with no near name is still named.
  r = run_cli("frobnicate");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("subcommands: run graph compare") != std::string::npos);
  r = run_cli("run " + mm1 + " --zzzzzzzz" + out);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--zzzzzzzz: unknown option") != std::string::npos);
  // A folded-stacks path that cannot be a file is refused before the run.
  r = run_cli("run " + mm1 + " --profile-folded " + dir.string() + out);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--profile-folded " + dir.string() + ": is a directory") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
  CHECK_FALSE(std::filesystem::exists("x.folded"));
}
