// The timeline (`run --trace`): valid trace-event JSON with a track per simulated thread, slices
// inside the window, request flows from submission to CQE that join in Perfetto, and counter tracks.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

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

TEST_CASE(
    "trace: flows join as Perfetto pairs them - one name and category per flow, start first, each on its "
    "step") {
  const auto dir = fresh_dir("trace-flows");
  const auto file = (dir / "trace.json").string();
  const auto r = run_cli("run " + source_path("scenarios/seeds/async-hybrid.json") +
                         " --variant hybrid --quiet --set warmup_ms=50 --set duration_ms=10 --trace " + file +
                         " --trace-window-ms 50:55 --out " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto trace = nlohmann::json::parse(slurp(file));
  const auto& ev = trace.at("traceEvents");

  // ui.perfetto.dev joins flow events by (id, cat, name) and binds each to the slice open on its
  // thread at that time: the zero-length slice named after the step, just before it in the file.
  std::map<std::uint64_t, std::vector<std::string>> phases;
  std::set<std::string> steps;
  double last_ts = 0;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const auto& e = ev[i];
    const std::string ph = e.at("ph");
    if (ph != "M") {
      CHECK(e.at("ts").get<double>() >= last_ts);  // in time order, as the pairing assumes
      last_ts = e.at("ts").get<double>();
    }
    if (ph != "s" && ph != "t" && ph != "f") continue;
    INFO(e.dump());
    CHECK(e.at("cat") == "request");
    CHECK(e.at("name") == "request");
    if (ph != "s") CHECK(e.at("bp") == "e");
    phases[e.at("id").get<std::uint64_t>()].push_back(ph);
    REQUIRE(i > 0);
    const auto& slice = ev[i - 1];
    CHECK(slice.at("ph") == "X");
    CHECK(slice.at("cat") == "request");
    CHECK(slice.at("tid") == e.at("tid"));
    CHECK(slice.at("ts") == e.at("ts"));
    CHECK(slice.at("dur") == 0);
    steps.insert(slice.at("name").get<std::string>());
  }
  // Each flow: begins with its one start, steps, and ends with at most one finish.
  int complete = 0;
  for (const auto& [id, p] : phases) {
    INFO("flow " << id);
    CHECK(p.front() == "s");
    CHECK(std::count(p.begin(), p.end(), "s") == 1);
    const auto finishes = std::count(p.begin(), p.end(), "f");
    CHECK(finishes <= 1);
    if (finishes == 1) CHECK(p.back() == "f");
    complete += finishes == 1 && p.size() > 2;
  }
  CHECK(complete > 100);
  // The step names stay on the timeline, as slices.
  for (const char* s : {"recv", "send", "punt to io-wq", "io-wq worker", "CQE"}) CHECK(steps.count(s));
}

TEST_CASE(
    "trace: recording a timeline does not change the run - results.json is the same bytes as without it") {
  // The timeline must show the run that results.json describes: nothing traced may act on the model
  // (the gauge sampler once woke more often under --trace, which moved the hybrid seed's results).
  const auto dir = fresh_dir("trace-same");
  const std::string scen = source_path("scenarios/seeds/async-hybrid.json") +
                           " --variant hybrid --quiet --set warmup_ms=50 --set duration_ms=30";
  const auto plain = run_cli("run " + scen + " --out " + (dir / "plain").string());
  const auto traced = run_cli("run " + scen + " --trace " + (dir / "t.json").string() +
                              " --trace-window-ms 50:55 --out " + (dir / "traced").string());
  REQUIRE(plain.exit_code == 0);
  REQUIRE(traced.exit_code == 0);
  CHECK(slurp(dir / "plain" / "results.json") == slurp(dir / "traced" / "results.json"));
}
