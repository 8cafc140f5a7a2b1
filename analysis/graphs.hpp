#pragma once
// The design-review graphs (issue #7), built with Boost.Graph from what the engine recorded
// (sim/checks.hpp): the lock-order graph and its cycles (potential deadlocks, reported like
// lockdep), the wait-for graph of a deadlock and its cycle, and the scenario's topology. Writers
// to Graphviz dot and JSON. See docs/models/checks.md.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/checks.hpp"

namespace uringsim::analysis {

// A labelled directed graph, ready to write. Node ids are unique; labels are free text.
struct Graph {
  struct Node {
    std::string id, label, kind;
    bool highlight = false;  // on a cycle
  };
  struct Edge {
    std::size_t from, to;
    std::string label;
    bool highlight = false;
  };
  std::string name;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<std::string> notes;  // shown as the graph's caption

  // Index of the node `id`, added with `label` (default: the id) and `kind` if new.
  std::size_t node(const std::string& id, const std::string& kind, const std::string& label = "");
  std::optional<std::size_t> find(const std::string& id) const;
};

// Elementary cycles (Boost's hawick_unique_circuits), each as node indices in path order, the
// first `max_cycles` of them in a deterministic order. A self-loop is a cycle of one node.
std::vector<std::vector<std::size_t>> elementary_cycles(const Graph& g, std::size_t max_cycles = 100);

// --- lock order ---
struct LockOrderCycle {
  std::vector<std::string> locks;         // A, B, ...: A -> B -> ... -> A
  std::vector<sim::LockOrderEdge> edges;  // edges[i]: locks[i] -> locks[i+1] (the last closes it)
};
Graph lock_order_graph(const std::vector<sim::LockOrderEdge>& edges);
std::vector<LockOrderCycle> lock_order_cycles(const std::vector<sim::LockOrderEdge>& edges,
                                              std::size_t max_cycles = 100);
std::string cycle_line(const LockOrderCycle& c);      // one line: "A -> B -> A (A->B at x, y; B->A at ...)"
std::string lockdep_report(const LockOrderCycle& c);  // lockdep-style, several lines
nlohmann::json lock_order_json(const std::vector<sim::LockOrderEdge>& edges,
                               const std::vector<LockOrderCycle>& cycles);

// --- wait-for ---
Graph wait_for_graph(const sim::WaitSnapshot& s);
// The threads on a cycle of waits (thread -> lock -> owner -> ...), in order; empty if none.
std::vector<sim::ThreadWait> wait_for_cycle(const sim::WaitSnapshot& s);
// "DEADLOCK: t1 waits for B (held by t2, taken at site_x); t2 waits for A (...)", or, with no
// cycle, what every thread was blocked on.
std::string deadlock_text(const sim::WaitSnapshot& s);
nlohmann::json deadlock_json(const sim::WaitSnapshot& s);

// --- topology ---
Graph topology_graph(const sim::Topology& t);

// --- writers ---
std::string to_dot(const Graph& g);
nlohmann::json to_json(const Graph& g);
std::string dot_escape(const std::string& s);  // for a double-quoted dot string

}  // namespace uringsim::analysis
