// The design-review checks (issue #7, docs/models/checks.md): violations with their fields, the
// lock-order graph, deadlocks with their wait-for cycle, exit codes, the clean seeds. One
// simulation per TEST_CASE; the CLI cases run the tool as a child process.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "cli_helpers.hpp"
#include "sim/checks.hpp"
#include "sim/engine.hpp"
#include "sim/lock.hpp"
#include "sim/sched.hpp"
#include "sim/waitqueue.hpp"

using namespace uringsim::sim;
using testing::run_cli;
using testing::slurp;
using testing::source_path;

namespace {
PrimitiveCosts zero_costs() {
  return PrimitiveCosts{};
}
nlohmann::json results_of(const std::filesystem::path& dir) {
  return nlohmann::json::parse(slurp(dir / "results.json"));
}
}  // namespace

// --- engine level, hand-built ---

TEST_CASE("checks: lock-order edges name both call sites and count acquisitions") {
  Engine e({1, 1.0}, zero_costs());
  SpinLock a("A"), b("B"), c("C");
  e.spawn("t", "app", 0, [&] {
    for (int i = 0; i < 3; ++i) {
      a.lock(intern("outer"));
      b.lock(intern("inner"));
      b.unlock();
      a.unlock();
    }
    c.lock(intern("alone"));  // nothing held: no edge
    c.unlock();
  });
  e.run_until_ns(1e6);
  const auto edges = e.checks().lock_order();
  REQUIRE(edges.size() == 1);
  CHECK(edges[0].from == "A");
  CHECK(edges[0].to == "B");
  CHECK(edges[0].count == 3);
  REQUIRE(edges[0].sites.size() == 1);
  CHECK(edges[0].sites[0] == std::pair<std::string, std::string>{"outer", "inner"});
  CHECK(e.checks().total() == 0);
}

TEST_CASE("checks: unlock by a non-owner records time, thread, path, locks held and owner") {
  Engine e({2, 1.0}, zero_costs());
  SpinLock l("L");
  Mutex other("O");  // a mutex: the intruder may sleep holding it
  e.spawn("owner", "app", 0, [&] {
    l.lock(intern("owner_path"));
    current().compute(1000, intern("w"));
    l.unlock();
  });
  e.spawn("intruder", "app", 1, [&] {
    other.lock(intern("o_site"));
    current().sleep_ns(300);
    RequestScope rq(77);
    l.unlock(intern("intruder_path"));
    other.unlock();
  });
  e.run_until_ns(1e6);
  REQUIRE(e.checks().total() == 1);
  const Violation& v = e.checks().stored()[0];
  CHECK(v.kind == "unlock_not_owner");
  CHECK(v.thread == "intruder");
  CHECK(v.path == "intruder_path");
  CHECK(v.t_ns == Approx(300.0));
  CHECK(v.request == 77);
  CHECK(v.locks_held == std::vector<std::string>{"O@o_site"});
  CHECK_THAT(v.message, Catch::Contains("held by owner (taken at owner_path)"));
  CHECK_FALSE(l.held());  // the owner released it normally afterwards
}

TEST_CASE("checks: sleeping, parking or taking a mutex while holding a spinlock are violations") {
  Engine e({1, 1.0}, zero_costs());
  SpinLock s("S");
  Mutex m("M");
  e.spawn("t", "app", 0, [&] {
    s.lock(intern("spin_site"));
    current().sleep_ns(10, intern("sleep_path"));
    current().park_for_ns(10, intern("park_path"));
    m.lock(intern("mutex_path"));
    m.unlock();
    s.unlock();
    current().sleep_ns(10, intern("fine"));  // no spinlock held: fine
    m.lock(intern("fine"));
    current().sleep_ns(10, intern("fine"));  // a mutex may be held while sleeping
    m.unlock();
  });
  e.run_until_ns(1e6);
  REQUIRE(e.checks().total() == 3);
  const auto& v = e.checks().stored();
  CHECK(v[0].kind == "sleep_holding_spinlock");
  CHECK(v[0].path == "sleep_path");
  CHECK(v[0].t_ns == Approx(0.0));
  CHECK(v[0].locks_held == std::vector<std::string>{"S@spin_site"});
  CHECK_THAT(v[0].message, Catch::Contains("spinlock S taken at spin_site"));
  CHECK(v[1].path == "park_path");
  CHECK(v[1].t_ns == Approx(10.0));
  CHECK(v[2].path == "mutex_path");
  CHECK_THAT(v[2].message, Catch::Contains("takes mutex M"));
  CHECK(e.checks().by_kind().at("sleep_holding_spinlock") == 3);
}

TEST_CASE("checks: require_held, require_not_held and require_may_sleep") {
  Engine e({1, 1.0}, zero_costs());
  SpinLock l("L");
  Mutex m("M");
  e.spawn("t", "app", 0, [&] {
    require_held(l, intern("needs_L"), 5);        // violation: not held
    require_not_held(l, intern("forbids_L"), 6);  // fine
    require_may_sleep(intern("sleepy"), 7);       // fine
    l.lock(intern("take_L"));
    require_held(l, intern("needs_L"), 5);        // fine
    require_not_held(l, intern("forbids_L"), 6);  // violation
    require_may_sleep(intern("sleepy"), 7);       // violation
    l.unlock();
    m.lock(intern("take_M"));
    require_may_sleep(intern("sleepy"), 7);  // fine: a mutex
    m.unlock();
  });
  e.run_until_ns(1e6);
  REQUIRE(e.checks().total() == 3);
  const auto& v = e.checks().stored();
  CHECK(v[0].kind == "lock_required");
  CHECK(v[0].path == "needs_L");
  CHECK(v[0].request == 5);
  CHECK(v[0].locks_held.empty());
  CHECK(v[1].kind == "lock_forbidden");
  CHECK(v[1].path == "forbids_L");
  CHECK(v[1].request == 6);
  CHECK(v[1].locks_held == std::vector<std::string>{"L@take_L"});
  CHECK(v[2].kind == "sleep_holding_spinlock");
  CHECK(v[2].request == 7);
}

TEST_CASE("checks: re-taking a held lock is a violation and does not hang the run") {
  Engine e({1, 1.0}, zero_costs());
  SpinLock l("L");
  bool finished = false;
  e.spawn("t", "app", 0, [&] {
    l.lock(intern("first"));
    l.lock(intern("again"));
    l.unlock();
    CHECK(l.held());  // the inner release only undoes the recursive acquisition
    l.unlock();
    CHECK_FALSE(l.held());
    finished = true;
  });
  e.run_until_ns(1e6);
  CHECK(finished);
  CHECK_FALSE(e.deadlocked());
  REQUIRE(e.checks().total() == 1);
  CHECK(e.checks().stored()[0].kind == "recursive_lock");
  CHECK(e.checks().stored()[0].path == "again");
  CHECK_THAT(e.checks().stored()[0].message, Catch::Contains("taken at first"));
  CHECK(e.checks().lock_order().empty());  // L -> L is not an ordering
}

TEST_CASE("checks: a thread that ends holding locks is a violation per lock") {
  Engine e({1, 1.0}, zero_costs());
  SpinLock a("A");
  Mutex b("B");
  e.spawn("t", "app", 0, [&] {
    b.lock(intern("take_b"));
    a.lock(intern("take_a"));
    current().compute(500, intern("w"));
  });
  e.run_until_ns(1e6);
  REQUIRE(e.checks().total() == 2);
  const auto& v = e.checks().stored();
  CHECK(v[0].kind == "exit_holding_lock");
  CHECK(v[0].path == "take_b");
  CHECK(v[0].t_ns == Approx(500.0));
  CHECK(v[0].locks_held == std::vector<std::string>{"B@take_b", "A@take_a"});
  CHECK(v[1].path == "take_a");
}

TEST_CASE("checks: stored violations are capped, all are counted") {
  Engine e({1, 1.0}, zero_costs());
  SpinLock l("L");
  e.spawn("t", "app", 0, [&] {
    for (int i = 0; i < 150; ++i) l.unlock(intern("bad"));
  });
  e.run_until_ns(1e6);
  CHECK(e.checks().total() == 150);
  CHECK(e.checks().stored().size() == Checks::kMaxStored);
  CHECK(e.checks().by_kind().at("unlock_not_owner") == 150);
}

TEST_CASE("checks: a spinlock ABBA deadlock stops the run at once with its wait-for cycle") {
  Engine e({2, 1.0}, zero_costs());
  SpinLock a("A"), b("B");
  e.spawn("t1", "app", 0, [&] {
    a.lock(intern("x"));
    current().compute(100, intern("w"));
    b.lock(intern("x"));
  });
  e.spawn("t2", "app", 1, [&] {
    b.lock(intern("y"));
    current().compute(100, intern("w"));
    a.lock(intern("y"));
  });
  e.run_until_ns(1e9);
  // Spinning waiters never count as blocked: without the wait-cycle check this ran to 1 s.
  REQUIRE(e.deadlocked());
  CHECK(e.deadlock_ns() == Approx(100.0));
  REQUIRE(e.deadlock_snapshot());
  const auto& snap = *e.deadlock_snapshot();
  CHECK(snap.deadlock);
  REQUIRE(snap.threads.size() == 2);
  for (const auto& w : snap.threads) {
    CHECK(w.on == ThreadWait::On::Lock);
    CHECK(w.holder == (w.thread == "t1" ? "t2" : "t1"));
    CHECK(w.object == (w.thread == "t1" ? "B" : "A"));
    CHECK(w.holder_site == (w.thread == "t1" ? "y" : "x"));
  }
}

TEST_CASE("checks: all threads asleep on wait queues is a deadlock that names the queues") {
  Engine e({2, 1.0}, zero_costs());
  WaitQueue q1("q.one"), q2;
  e.spawn("t1", "app", 0, [&] { q1.wait(intern("wait1")); });
  e.spawn("t2", "app", 1, [&] {
    current().sleep_ns(50);
    q2.wait();
  });
  e.run_until_ns(1e9);
  REQUIRE(e.deadlocked());
  CHECK(e.deadlock_ns() == Approx(50.0));
  const auto& snap = *e.deadlock_snapshot();
  REQUIRE(snap.threads.size() == 2);
  CHECK(snap.threads[0].on == ThreadWait::On::WaitQueue);
  CHECK(snap.threads[0].object == "q.one");
  CHECK(snap.threads[1].object == "waitqueue");
  // Only the named queue is a node of the topology.
  const auto topo = e.topology();
  int queues = 0;
  for (const auto& n : topo.nodes) queues += n.kind == "waitqueue";
  CHECK(queues == 1);
}

TEST_CASE("checks: topology lists threads, locks, named queues and declared components") {
  Engine e({1, 1.0}, zero_costs());
  SpinLock l("L");
  Mutex m("M");
  WaitQueue q("Q");
  e.spawn("t", "app", 0, [] {});
  ThreadOptions daemon;
  daemon.daemon = true;
  e.spawn(
      "helper", "helper", 0, [] {}, daemon);  // daemons are not components
  e.declare("device", "disk");
  e.declare_edge("t", "disk", "reads");
  e.declare_edge("t", "L", "takes");
  const auto topo = e.topology();
  std::vector<std::pair<std::string, std::string>> nodes;
  for (const auto& n : topo.nodes) nodes.emplace_back(n.name, n.kind);
  CHECK(nodes ==
        std::vector<std::pair<std::string, std::string>>{
            {"t", "thread"}, {"L", "spinlock"}, {"M", "mutex"}, {"Q", "waitqueue"}, {"disk", "device"}});
  REQUIRE(topo.edges.size() == 2);
  CHECK(topo.edges[0].label == "reads");
  e.declare_edge("t", "nowhere", "typo");
  CHECK_THROWS_WITH(e.topology(), Catch::Contains("no node named nowhere"));
}

// --- the tool, on the scenarios under tests/scenarios ---

TEST_CASE("checks cli: two locks in opposite orders give a lock-order cycle naming both call sites") {
  const auto dir = testing::fresh_dir("checks-lock-order");
  const auto r =
      run_cli("run " + source_path("tests/scenarios/lock-order-cycle.json") + " --out " + dir.string());
  INFO(r.output);
  CHECK(r.exit_code == 1);  // a potential deadlock fails the checks
  CHECK_THAT(r.output, Catch::Contains("LOCK-ORDER CYCLE"));
  CHECK_THAT(r.output, Catch::Contains("possible circular locking dependency detected: A -> B -> A"));
  CHECK_THAT(r.output, Catch::Contains("B taken at path_x (holding A from path_x)"));
  CHECK_THAT(r.output, Catch::Contains("A taken at path_y (holding B from path_y)"));
  const auto res = results_of(dir);
  const auto& c = res.at("checks");
  CHECK(c.at("violations_total") == 0);
  CHECK(c.at("deadlock").is_null());
  CHECK_FALSE(res.at("deadlock").get<bool>());  // t2 comes later: it never actually deadlocks
  REQUIRE(c.at("lock_order").at("cycles").size() == 1);
  const auto& cyc = c.at("lock_order").at("cycles")[0];
  CHECK(cyc.at("locks") == nlohmann::json({"A", "B"}));
  CHECK(cyc.at("edges")[0].at("sites") == nlohmann::json::array({{"path_x", "path_x"}}));
  CHECK(cyc.at("edges")[1].at("sites") == nlohmann::json::array({{"path_y", "path_y"}}));
  CHECK(res.at("script").at("threads_finished") == 2);
}

TEST_CASE("checks cli: a real deadlock is reported with its wait-for cycle and ends the run there") {
  const auto dir = testing::fresh_dir("checks-deadlock");
  const auto r = run_cli("run " + source_path("tests/scenarios/deadlock.json") + " --out " + dir.string());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("DEADLOCK: t1 waits for B (held by t2, taken at path_y); "
                                       "t2 waits for A (held by t1, taken at path_x)"));
  const auto res = results_of(dir);
  CHECK(res.at("deadlock").get<bool>());
  // Both take their first lock at 0 (60 cycles of fast path at 3 GHz = 20 ns), compute 3000 cycles
  // (1000 ns) and block on the other lock at 1020 ns; the duration is 1 s.
  CHECK(res.at("simulated_ns").get<double>() == Approx(1020.0));
  const auto& d = res.at("checks").at("deadlock");
  CHECK(d.at("t_ns").get<double>() == Approx(1020.0));
  REQUIRE(d.at("cycle").size() == 2);
  CHECK(d.at("cycle")[0].at("thread") == "t1");
  CHECK(d.at("cycle")[0].at("object") == "B");
  CHECK(d.at("cycle")[0].at("holder") == "t2");
  CHECK(d.at("cycle")[1].at("thread") == "t2");
  CHECK(d.at("cycle")[1].at("object") == "A");
  CHECK(d.at("cycle")[1].at("holder") == "t1");
}

TEST_CASE("checks cli: violations exit 1 and with --allow-violations 0, with the same complete results") {
  const auto d1 = testing::fresh_dir("checks-exit-1"), d0 = testing::fresh_dir("checks-exit-0");
  const std::string scen = source_path("tests/scenarios/lock-rules.json");
  const auto r1 = run_cli("run " + scen + " --out " + d1.string());
  const auto r0 = run_cli("run " + scen + " --allow-violations --out " + d0.string());
  INFO(r1.output);
  CHECK(r1.exit_code == 1);
  CHECK_THAT(r1.output, Catch::Contains("--allow-violations"));
  CHECK(r0.exit_code == 0);
  CHECK(slurp(d1 / "results.json") == slurp(d0 / "results.json"));
  const auto c = results_of(d0).at("checks");
  CHECK(c.at("violations_total") == 4);
  CHECK(c.at("violations_by_kind") == nlohmann::json({{"lock_forbidden", 1},
                                                      {"lock_required", 1},
                                                      {"recursive_lock", 1},
                                                      {"sleep_holding_spinlock", 1}}));
  for (const char* kind : {"lock_required", "lock_forbidden", "recursive_lock", "sleep_holding_spinlock"})
    CHECK_THAT(r1.output, Catch::Contains(std::string("VIOLATION ") + kind));
}

TEST_CASE("checks cli: unlock by a non-owner and sleeping under a spinlock, from scenarios") {
  const auto d1 = testing::fresh_dir("checks-unlock"), d2 = testing::fresh_dir("checks-sleep");
  const auto r1 = run_cli("run " + source_path("tests/scenarios/unlock-not-owner.json") + " --quiet --out " +
                          d1.string());
  const auto r2 = run_cli("run " + source_path("tests/scenarios/sleep-holding-spinlock.json") +
                          " --quiet --out " + d2.string());
  CHECK(r1.exit_code == 1);
  CHECK(r2.exit_code == 1);
  const auto v1 = results_of(d1).at("checks").at("violations");
  REQUIRE(v1.size() == 1);
  CHECK(v1[0].at("kind") == "unlock_not_owner");
  CHECK(v1[0].at("thread") == "t2");
  CHECK(v1[0].at("path") == "path_wrong");
  CHECK(v1[0].at("t_ns").get<double>() == Approx(2000.0));  // start_us = 2
  const auto v2 = results_of(d2).at("checks").at("violations");
  REQUIRE(v2.size() == 2);
  CHECK(v2[0].at("kind") == "sleep_holding_spinlock");
  CHECK(v2[0].at("path") == "path_sleep");
  CHECK(v2[0].at("locks_held") == nlohmann::json({"S@path_spin"}));
  CHECK(v2[1].at("path") == "path_mutex");
}

TEST_CASE("checks cli: the seed scenario runs clean (hybrid io-wq, short)") {
  const auto dir = testing::fresh_dir("checks-seed-clean");
  const auto r = run_cli("run " + source_path("scenarios/seeds/async-hybrid.json") +
                         " --variant hybrid --set duration_ms=20 --quiet --out " + dir.string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const auto c = results_of(dir).at("checks");
  CHECK(c.at("violations_total") == 0);
  CHECK(c.at("lock_order").at("cycles").empty());
  CHECK(c.at("deadlock").is_null());
  CHECK_FALSE(c.at("lock_order").at("edges").empty());  // io_uring nests locks: the graph is not empty
}

TEST_CASE("checks cli: the queue model runs clean") {
  const auto dir = testing::fresh_dir("checks-queue-clean");
  const auto r = run_cli("run " + source_path("scenarios/validation/mmc.json") +
                         " --set duration_ms=50 --set warmup_ms=5 --quiet --out " + dir.string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const auto c = results_of(dir).at("checks");
  CHECK(c.at("violations_total") == 0);
  CHECK(c.at("lock_order").at("edges").empty());  // one lock, never nested
}

TEST_CASE("checks cli: a script naming an unknown lock is bad input") {
  const auto dir = testing::fresh_dir("checks-bad-script");
  const auto scen = dir / "bad.json";
  std::ofstream(scen) << R"({"name": "bad", "workload": {"type": "script",
    "locks": [{"name": "A", "kind": "spin"}],
    "threads": [{"name": "t", "steps": [{"op": "lock", "lock": "Z", "site": "s"}]}]}})";
  const auto r = run_cli("run " + scen.string() + " --out " + (dir / "out").string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output,
             Catch::Contains(
                 "/workload/threads/0/steps/0/lock: unknown lock \"Z\"; expected one of workload.locks: A"));
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "results.json"));
}
