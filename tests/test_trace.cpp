// The timeline (`run --trace`): valid trace-event JSON with a track per simulated thread, slices
// inside the window, request flows from submission to CQE, and counter tracks.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "cli_helpers.hpp"

using namespace testing;

TEST_CASE("trace: a 5 ms timeline of the hybrid seed has every thread, request flows and counters") {
  const auto dir = fresh_dir("trace");
  const auto file = (dir / "trace.json").string();
  const auto r = run_cli("run " + source_path("scenarios/seeds/async-hybrid.json") +
                         " --variant hybrid --quiet --set warmup_ms=50 --set duration_ms=10 --trace " + file +
                         " --trace-window-ms 50:55 --out " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto t = nlohmann::json::parse(slurp(file));
  const auto& ev = t.at("traceEvents");
  REQUIRE(ev.size() > 1000);

  std::map<int, std::string> tracks;
  std::set<int> tids_with_slices;
  std::map<std::uint64_t, std::set<std::string>> flow_phases;
  std::set<std::string> counters;
  for (const auto& e : ev) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "thread_name") tracks[e.at("tid")] = e.at("args").at("name");
    if (ph == "X") {
      const double ts = e.at("ts"), dur = e.at("dur");
      CHECK(dur >= 0);
      CHECK(ts >= 50000 - 1e-6);  // microseconds: inside the 50-55 ms window
      CHECK(ts + dur <= 55000 + 1e-6);
      tids_with_slices.insert(e.at("tid").get<int>());
    }
    if (ph == "s" || ph == "t" || ph == "f") flow_phases[e.at("id")].insert(ph);
    if (ph == "C") counters.insert(e.at("name").get<std::string>());
  }
  // A track for the application, each io-wq worker and the clients.
  int workers = 0;
  bool app = false, client = false;
  for (const auto& [tid, name] : tracks) {
    workers += name.rfind("iou-wrk-", 0) == 0;
    app = app || name == "io_uring_echo_server";
    client = client || name.rfind("client-", 0) == 0;
  }
  CHECK(app);
  CHECK(client);
  CHECK(workers >= 4);
  // Busy threads have slices: the application and at least one worker.
  int busy_workers = 0;
  for (int tid : tids_with_slices) busy_workers += tracks[tid].rfind("iou-wrk-", 0) == 0;
  CHECK(busy_workers >= 1);
  // Requests submitted inside the window are followed to their CQE: submit -> punt -> worker -> ... -> CQE.
  int complete_flows = 0;
  for (const auto& [id, phases] : flow_phases)
    complete_flows += phases.count("s") && phases.count("t") && phases.count("f");
  CHECK(complete_flows > 100);
  CHECK(counters.count("iowq.unbound.running"));
  CHECK(counters.count("iowq.unbound.queued"));
}

TEST_CASE("trace: a bad window is refused before anything runs") {
  const auto dir = fresh_dir("trace-bad");
  const auto r =
      run_cli("run " + source_path("scenarios/validation/mm1.json") + " --trace " +
              (dir / "t.json").string() + " --trace-window-ms 5:2 --out " + (dir / "out").string());
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--trace-window-ms") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
}
