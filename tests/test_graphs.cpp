// The design-review graphs (analysis/graphs.*): cycle search on hand-built graphs, lock-order and
// wait-for reports, dot/JSON writers, and `uringsim graph` rendered by Graphviz.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "analysis/graphs.hpp"
#include "cli_helpers.hpp"

using namespace uringsim::analysis;
using testing::run_cli;
using testing::run_shell;
using testing::slurp;
using testing::source_path;
using uringsim::sim::LockOrderEdge;
using uringsim::sim::ThreadWait;
using uringsim::sim::WaitSnapshot;

namespace {
Graph chain(std::vector<std::pair<std::size_t, std::size_t>> edges, std::size_t n) {
  Graph g;
  for (std::size_t i = 0; i < n; ++i) g.node(std::string(1, static_cast<char>('a' + i)), "x");
  for (auto [a, b] : edges) g.edges.push_back({a, b, ""});
  return g;
}
// A cycle as a set of its rotations is awkward to compare: rotate so the smallest node is first.
std::vector<std::size_t> canonical(std::vector<std::size_t> c) {
  std::rotate(c.begin(), std::min_element(c.begin(), c.end()), c.end());
  return c;
}
}  // namespace

TEST_CASE("graphs: a 3-cycle is found once, in path order") {
  const Graph g = chain({{0, 1}, {1, 2}, {2, 0}}, 3);
  const auto cycles = elementary_cycles(g);
  REQUIRE(cycles.size() == 1);
  CHECK(canonical(cycles[0]) == std::vector<std::size_t>{0, 1, 2});
}

TEST_CASE("graphs: a DAG has no cycle") {
  // A diamond plus a tail: many paths, no cycle.
  const Graph g = chain({{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}, {0, 4}}, 5);
  CHECK(elementary_cycles(g).empty());
}

TEST_CASE("graphs: two cycles sharing a node, a self-loop, parallel edges, and the cap") {
  Graph g = chain({{0, 1}, {1, 0}, {1, 2}, {2, 1}, {3, 3}, {0, 1}}, 4);
  auto cycles = elementary_cycles(g);
  for (auto& c : cycles) c = canonical(c);
  std::sort(cycles.begin(), cycles.end());
  CHECK(cycles == std::vector<std::vector<std::size_t>>{{0, 1}, {1, 2}, {3}});
  CHECK(elementary_cycles(g, 1).size() == 1);
}

TEST_CASE("graphs: lock-order cycles name their edges' call sites, lockdep style") {
  const std::vector<LockOrderEdge> edges = {{"A", "B", {{"path_x", "path_x"}}, 2},
                                            {"B", "A", {{"path_y", "path_y2"}}, 1},
                                            {"B", "C", {{"s1", "s2"}}, 4}};
  const auto cycles = lock_order_cycles(edges);
  REQUIRE(cycles.size() == 1);
  CHECK(cycles[0].locks == std::vector<std::string>{"A", "B"});
  CHECK(cycles[0].edges[0].from == "A");
  CHECK(cycles[0].edges[1].from == "B");
  CHECK(
      cycle_line(cycles[0]) ==
      "A -> B -> A (B taken at path_x (holding A from path_x); A taken at path_y2 (holding B from path_y))");
  const std::string rep = lockdep_report(cycles[0]);
  CHECK_THAT(rep, Catch::Contains("possible circular locking dependency detected: A -> B -> A"));
  CHECK_THAT(rep, Catch::Contains("[2 times]"));
  CHECK_THAT(rep, Catch::Contains("*** DEADLOCK ***"));
  const auto g = lock_order_graph(edges);
  CHECK(g.nodes.size() == 3);
  int red = 0;
  for (const auto& e : g.edges) red += e.highlight;
  CHECK(red == 2);  // B -> C is not on the cycle
  const auto j = lock_order_json(edges, cycles);
  CHECK(j.at("edges").size() == 3);
  CHECK(j.at("cycles")[0].at("locks") == nlohmann::json({"A", "B"}));
}

TEST_CASE("graphs: the wait-for cycle starts at the first thread and is told in words") {
  WaitSnapshot s;
  s.t_ns = 500;
  s.deadlock = true;
  ThreadWait idle{"idle", ThreadWait::On::WaitQueue, "q", "", "", ""};
  ThreadWait t1{"t1", ThreadWait::On::Lock, "A", "site1", "t2", "y"};
  ThreadWait t2{"t2", ThreadWait::On::Lock, "B", "site2", "t1", "x"};
  s.threads = {idle, t2, t1};  // creation order: idle, t2, t1
  const auto cyc = wait_for_cycle(s);
  REQUIRE(cyc.size() == 2);
  CHECK(cyc[0].thread == "t2");
  CHECK(deadlock_text(s) ==
        "DEADLOCK: t2 waits for B (held by t1, taken at x); t1 waits for A (held by t2, taken at y)");
  const auto g = wait_for_graph(s);
  CHECK(g.nodes.size() == 6);  // 3 threads, 2 locks, 1 queue
  CHECK_THAT(g.notes[0], Catch::Contains("of the deadlock"));

  WaitSnapshot none;
  none.threads = {idle};
  CHECK(wait_for_cycle(none).empty());
  CHECK(deadlock_text(none) == "DEADLOCK: no cycle of lock waits, every thread is blocked: idle sleeps on q");
}

TEST_CASE("graphs: dot labels are escaped and JSON names nodes by id") {
  Graph g;
  g.name = "t\"est";
  const auto a = g.node("a", "thread", "say \"hi\"\\now");
  const auto b = g.node("b", "spinlock", "line1\nline2");
  g.edges.push_back({a, b, "x\"y"});
  const std::string dot = to_dot(g);
  CHECK_THAT(dot, Catch::Contains(R"(digraph "t\"est")"));
  CHECK_THAT(dot, Catch::Contains(R"(label="say \"hi\"\\now")"));
  CHECK_THAT(dot, Catch::Contains(R"(label="line1\nline2")"));
  CHECK_THAT(dot, Catch::Contains(R"(n0 -> n1 [label="x\"y"])"));
  const auto j = to_json(g);
  CHECK(j.at("edges")[0].at("from") == "a");
  CHECK(j.at("nodes")[1].at("label") == "line1\nline2");
  // Graphviz itself accepts it.
  const auto dir = testing::fresh_dir("graphs-escape");
  std::ofstream(dir / "g.dot") << dot;
  CHECK(run_shell("dot -Tsvg " + (dir / "g.dot").string() + " -o " + (dir / "g.svg").string()).exit_code ==
        0);
}

TEST_CASE("graph cli: lock-order dot renders with Graphviz and names the locks and sites") {
  const auto dir = testing::fresh_dir("graph-lock-order");
  const auto r = run_cli("graph " + source_path("tests/scenarios/lock-order-cycle.json") +
                         " --kind lock-order --format dot -o " + (dir / "g.dot").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("2 edges, 1 cycles"));
  const auto svg = run_shell("dot -Tsvg " + (dir / "g.dot").string() + " -o " + (dir / "g.svg").string());
  INFO(svg.output);
  REQUIRE(svg.exit_code == 0);
  const std::string text = slurp(dir / "g.svg");
  CHECK_THAT(text, Catch::Contains("<svg"));
  CHECK_THAT(text, Catch::Contains(">A</text>"));
  CHECK_THAT(text, Catch::Contains(">B</text>"));
  CHECK_THAT(text, Catch::Contains("path_y"));
}

TEST_CASE("graph cli: wait-for JSON of a deadlock has its cycle") {
  const auto dir = testing::fresh_dir("graph-wait-for");
  const auto r = run_cli("graph " + source_path("tests/scenarios/deadlock.json") +
                         " --kind wait-for --format json -o " + (dir / "g.json").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("DEADLOCK: t1 waits for B"));
  const auto j = nlohmann::json::parse(slurp(dir / "g.json"));
  CHECK(j.at("kind") == "wait-for");
  CHECK(j.at("deadlock") == true);
  CHECK(j.at("cycle").size() == 2);
  CHECK(j.at("nodes").size() == 4);  // t1, t2, A, B
  CHECK_THAT(j.at("notes")[0].get<std::string>(), Catch::Contains("of the deadlock"));
}

TEST_CASE("graph cli: wait-for without a deadlock is the state at the end of the run") {
  const auto r =
      run_cli("graph " + source_path("tests/scenarios/lock-order-cycle.json") + " --kind wait-for");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("no deadlock: wait-for graph of the state at the end of the run"));
  CHECK_THAT(r.output, Catch::Contains("digraph \"wait-for\""));
}

TEST_CASE("graph cli: topology of the echo seed renders without running it") {
  const auto dir = testing::fresh_dir("graph-topology");
  const auto r = run_cli("graph " + source_path("scenarios/seeds/async-hybrid.json") +
                         " --kind topology -o " + (dir / "t.dot").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("not run"));
  const auto svg = run_shell("dot -Tsvg " + (dir / "t.dot").string() + " -o " + (dir / "t.svg").string());
  REQUIRE(svg.exit_code == 0);
  const std::string text = slurp(dir / "t.svg");
  for (const char* name :
       {"io_uring_echo_server", "ctx&#45;&gt;uring_lock", "wqe&#45;&gt;lock", "sockets (1000 connections)"})
    CHECK_THAT(text, Catch::Contains(name));
  const auto j =
      run_cli("graph " + source_path("scenarios/validation/mm1.json") + " --kind topology --format json");
  REQUIRE(j.exit_code == 0);
  CHECK_THAT(j.output, Catch::Contains("\"queue.idle_workers\""));
}

TEST_CASE("graph cli: bad kind or format is bad input") {
  CHECK(run_cli("graph " + source_path("tests/scenarios/deadlock.json") + " --kind nope").exit_code == 2);
  CHECK(run_cli("graph " + source_path("tests/scenarios/deadlock.json") + " --kind topology --format png")
            .exit_code == 2);
}
