#include "analysis/graphs.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/hawick_circuits.hpp>

#include <fmt/format.h>

#include <map>
#include <set>

namespace uringsim::analysis {
namespace {

using BGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// Stops hawick_unique_circuits once enough cycles are found (it has no other way to stop).
struct Enough {};

struct CycleCollector {
  std::vector<std::vector<std::size_t>>* out;
  std::size_t max;
  template <typename Path, typename G>
  void cycle(const Path& p, const G&) {
    out->emplace_back(p.begin(), p.end());
    if (out->size() >= max) throw Enough{};
  }
};

std::string count_text(std::uint64_t n) {
  return n == 1 ? "1 time" : fmt::format("{} times", n);
}

std::string sites_text(const sim::LockOrderEdge& e) {
  std::string s;
  for (const auto& [a, b] : e.sites)
    s += (s.empty() ? "" : " | ") + b + " (holding " + e.from + " from " + a + ")";
  return s;
}

}  // namespace

std::size_t Graph::node(const std::string& id, const std::string& kind, const std::string& label) {
  if (auto i = find(id)) return *i;
  nodes.push_back({id, label.empty() ? id : label, kind});
  return nodes.size() - 1;
}

std::optional<std::size_t> Graph::find(const std::string& id) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].id == id) return i;
  return std::nullopt;
}

std::vector<std::vector<std::size_t>> elementary_cycles(const Graph& g, std::size_t max_cycles) {
  std::vector<std::vector<std::size_t>> out;
  if (max_cycles == 0) return out;
  BGraph bg(g.nodes.size());
  std::set<std::pair<std::size_t, std::size_t>> seen;
  for (const auto& e : g.edges)
    if (seen.insert({e.from, e.to}).second) boost::add_edge(e.from, e.to, bg);
  try {
    boost::hawick_unique_circuits(bg, CycleCollector{&out, max_cycles});
  } catch (const Enough&) {
  }
  return out;
}

// --- lock order ---

Graph lock_order_graph(const std::vector<sim::LockOrderEdge>& edges) {
  Graph g;
  g.name = "lock-order";
  for (const auto& e : edges) {
    const std::size_t a = g.node(e.from, "lock"), b = g.node(e.to, "lock");
    std::string label;
    for (const auto& [sa, sb] : e.sites)
      label += (label.empty() ? "" : "\n") + e.from + " at " + sa + ", then " + e.to + " at " + sb;
    label += "\n(" + count_text(e.count) + ")";
    g.edges.push_back({a, b, label});
  }
  for (const auto& c : lock_order_cycles(edges)) {
    for (std::size_t i = 0; i < c.locks.size(); ++i) {
      const std::size_t a = *g.find(c.locks[i]), b = *g.find(c.locks[(i + 1) % c.locks.size()]);
      g.nodes[a].highlight = true;
      for (auto& e : g.edges)
        if (e.from == a && e.to == b) e.highlight = true;
    }
  }
  g.notes.push_back(
      "lock-order graph: an edge A -> B when B was taken while A was held, labelled with the call sites; "
      "red: a cycle, a potential deadlock");
  return g;
}

std::vector<LockOrderCycle> lock_order_cycles(const std::vector<sim::LockOrderEdge>& edges,
                                              std::size_t max_cycles) {
  Graph g;
  std::map<std::pair<std::size_t, std::size_t>, const sim::LockOrderEdge*> by_ends;
  for (const auto& e : edges) {
    const std::size_t a = g.node(e.from, "lock"), b = g.node(e.to, "lock");
    g.edges.push_back({a, b, ""});
    by_ends[{a, b}] = &e;
  }
  std::vector<LockOrderCycle> out;
  for (const auto& cyc : elementary_cycles(g, max_cycles)) {
    LockOrderCycle c;
    for (std::size_t i = 0; i < cyc.size(); ++i) {
      c.locks.push_back(g.nodes[cyc[i]].id);
      c.edges.push_back(*by_ends.at({cyc[i], cyc[(i + 1) % cyc.size()]}));
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string cycle_line(const LockOrderCycle& c) {
  std::string chain, where;
  for (const auto& l : c.locks) chain += l + " -> ";
  chain += c.locks.front();
  for (const auto& e : c.edges) where += (where.empty() ? "" : "; ") + e.to + " taken at " + sites_text(e);
  return chain + " (" + where + ")";
}

std::string lockdep_report(const LockOrderCycle& c) {
  std::string chain;
  for (const auto& l : c.locks) chain += l + " -> ";
  chain += c.locks.front();
  std::string out = "WARNING: possible circular locking dependency detected: " + chain + "\n";
  for (const auto& e : c.edges)
    out += fmt::format("  {} -> {}: {} taken at {} [{}]\n", e.from, e.to, e.to, sites_text(e),
                       count_text(e.count));
  if (c.locks.size() == 2) {
    // lockdep's "possible unsafe locking scenario" for two locks taken in opposite orders.
    const std::string& a = c.locks[0];
    const std::string& b = c.locks[1];
    constexpr int kCol = 32;
    out += " Possible unsafe locking scenario:\n";
    out += fmt::format("       {:<{}}{}\n", "CPU0", kCol, "CPU1");
    out += fmt::format("       {:<{}}{}\n", "----", kCol, "----");
    out += fmt::format("  lock({});\n", a);
    out += fmt::format("       {:<{}}lock({});\n", "", kCol, b);
    out += fmt::format("       {:<{}}lock({});\n", "", kCol, a);
    out += fmt::format("  lock({});\n", b);
    out += "\n *** DEADLOCK ***\n";
  }
  return out;
}

nlohmann::json lock_order_json(const std::vector<sim::LockOrderEdge>& edges,
                               const std::vector<LockOrderCycle>& cycles) {
  auto edge_json = [](const sim::LockOrderEdge& e) {
    nlohmann::json sites = nlohmann::json::array();
    for (const auto& [a, b] : e.sites) sites.push_back({a, b});
    return nlohmann::json{{"from", e.from}, {"to", e.to}, {"sites", sites}, {"count", e.count}};
  };
  nlohmann::json j;
  j["edges"] = nlohmann::json::array();
  for (const auto& e : edges) j["edges"].push_back(edge_json(e));
  j["cycles"] = nlohmann::json::array();
  for (const auto& c : cycles) {
    nlohmann::json ce = nlohmann::json::array();
    for (const auto& e : c.edges) ce.push_back(edge_json(e));
    j["cycles"].push_back({{"locks", c.locks}, {"edges", ce}, {"text", cycle_line(c)}});
  }
  return j;
}

// --- wait-for ---

namespace {
std::string thread_id(const std::string& n) {
  return "thread:" + n;
}

std::string object_id(const sim::ThreadWait& w) {
  return std::string(sim::to_string(w.on)) + ":" + w.object;
}

Graph build_wait_for(const sim::WaitSnapshot& s) {
  Graph g;
  g.name = "wait-for";
  for (const auto& w : s.threads) g.node(thread_id(w.thread), "thread", w.thread);
  for (const auto& w : s.threads) {
    const std::size_t t = *g.find(thread_id(w.thread));
    switch (w.on) {
      case sim::ThreadWait::On::Lock: {
        const std::size_t l = g.node(object_id(w), "lock", w.object);
        g.edges.push_back({t, l, "waits at " + w.site});
        if (!w.holder.empty()) {
          // The holder may be a thread already gone (it ended holding the lock).
          const std::size_t h = g.node(thread_id(w.holder), "thread", w.holder);
          bool dup = false;
          for (const auto& e : g.edges) dup = dup || (e.from == l && e.to == h);
          if (!dup) g.edges.push_back({l, h, "held, taken at " + w.holder_site});
        }
        break;
      }
      case sim::ThreadWait::On::WaitQueue:
        g.edges.push_back({t, g.node(object_id(w), "waitqueue", w.object), "sleeps on"});
        break;
      default:
        g.nodes[t].label += std::string(" (") + sim::to_string(w.on) + ")";
        break;
    }
  }
  return g;
}

std::string wait_text(const sim::ThreadWait& w) {
  switch (w.on) {
    case sim::ThreadWait::On::Lock:
      return w.thread + " waits for " + w.object + " at " + w.site +
             (w.holder.empty() ? " (not held)"
                               : " (held by " + w.holder + ", taken at " + w.holder_site + ")");
    case sim::ThreadWait::On::WaitQueue:
      return w.thread + " sleeps on " + w.object;
    case sim::ThreadWait::On::Park:
      return w.thread + " is parked";
    case sim::ThreadWait::On::Sleep:
      return w.thread + " sleeps (timer)";
    case sim::ThreadWait::On::Running:
      return w.thread + " runs";
  }
  return w.thread;
}

nlohmann::json wait_json(const sim::ThreadWait& w) {
  nlohmann::json j{{"thread", w.thread}, {"on", sim::to_string(w.on)}};
  if (!w.object.empty()) j["object"] = w.object;
  if (w.on == sim::ThreadWait::On::Lock) {
    j["site"] = w.site;
    j["holder"] = w.holder.empty() ? nlohmann::json(nullptr) : nlohmann::json(w.holder);
    j["holder_site"] = w.holder_site;
  }
  return j;
}
}  // namespace

Graph wait_for_graph(const sim::WaitSnapshot& s) {
  Graph g = build_wait_for(s);
  for (const auto& cyc : elementary_cycles(g, 1)) {
    for (std::size_t i = 0; i < cyc.size(); ++i) {
      g.nodes[cyc[i]].highlight = true;
      for (auto& e : g.edges)
        if (e.from == cyc[i] && e.to == cyc[(i + 1) % cyc.size()]) e.highlight = true;
    }
  }
  g.notes.push_back(fmt::format("wait-for graph {} at {:.0f} ns",
                                s.deadlock ? "of the deadlock" : "at the end of the run", s.t_ns));
  return g;
}

std::vector<sim::ThreadWait> wait_for_cycle(const sim::WaitSnapshot& s) {
  const Graph g = build_wait_for(s);
  std::vector<sim::ThreadWait> out;
  const auto cycles = elementary_cycles(g, 1);
  if (cycles.empty()) return out;
  // Start the cycle at its earliest-created thread so the text does not depend on the search.
  std::vector<std::string> names;
  for (std::size_t v : cycles.front())
    if (g.nodes[v].kind == "thread") names.push_back(g.nodes[v].label);
  std::size_t first = names.size();
  for (const auto& w : s.threads) {
    for (std::size_t i = 0; i < names.size() && first == names.size(); ++i)
      if (names[i] == w.thread) first = i;
    if (first != names.size()) break;
  }
  for (std::size_t k = 0; k < names.size(); ++k)
    for (const auto& w : s.threads)
      if (w.thread == names[(first + k) % names.size()]) out.push_back(w);
  return out;
}

std::string deadlock_text(const sim::WaitSnapshot& s) {
  const auto cyc = wait_for_cycle(s);
  std::string out;
  if (!cyc.empty()) {
    for (const auto& w : cyc)
      out += (out.empty() ? "" : "; ") + w.thread + " waits for " + w.object + " (held by " + w.holder +
             ", taken at " + w.holder_site + ")";
    return "DEADLOCK: " + out;
  }
  for (const auto& w : s.threads) out += (out.empty() ? "" : "; ") + wait_text(w);
  return "DEADLOCK: no cycle of lock waits, every thread is blocked: " + out;
}

nlohmann::json deadlock_json(const sim::WaitSnapshot& s) {
  nlohmann::json j;
  j["t_ns"] = s.t_ns;
  j["cycle"] = nlohmann::json::array();
  for (const auto& w : wait_for_cycle(s)) j["cycle"].push_back(wait_json(w));
  j["threads"] = nlohmann::json::array();
  for (const auto& w : s.threads) j["threads"].push_back(wait_json(w));
  j["text"] = deadlock_text(s);
  return j;
}

// --- topology ---

Graph topology_graph(const sim::Topology& t) {
  Graph g;
  g.name = "topology";
  for (const auto& n : t.nodes) g.node(n.name, n.kind);
  for (const auto& e : t.edges) g.edges.push_back({*g.find(e.from), *g.find(e.to), e.label});
  g.notes.push_back("topology: threads, locks, wait queues and the components the model declared");
  return g;
}

// --- writers ---

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (c != '\r')
      out += c;
  }
  return out;
}

std::string to_dot(const Graph& g) {
  auto shape = [](const std::string& kind) -> std::string {
    if (kind == "thread") return "shape=ellipse";
    if (kind == "spinlock" || kind == "lock") return "shape=box";
    if (kind == "mutex") return "shape=box, style=rounded";
    if (kind == "waitqueue") return "shape=hexagon";
    if (kind == "queue") return "shape=cds";
    if (kind == "device") return "shape=box3d";
    return "shape=component";
  };
  std::string out = "digraph \"" + dot_escape(g.name) + "\" {\n";
  std::string caption;
  for (const auto& n : g.notes) caption += (caption.empty() ? "" : "\n") + n;
  if (!caption.empty()) out += "  label=\"" + dot_escape(caption) + "\";\n  labelloc=t;\n";
  out +=
      "  fontname=\"Helvetica\";\n  node [fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", "
      "fontsize=10];\n";
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    out += fmt::format("  n{} [label=\"{}\", {}{}];\n", i, dot_escape(n.label), shape(n.kind),
                       n.highlight ? ", color=red, penwidth=2" : "");
  }
  for (const auto& e : g.edges)
    out += fmt::format("  n{} -> n{} [label=\"{}\"{}];\n", e.from, e.to, dot_escape(e.label),
                       e.highlight ? ", color=red, penwidth=2" : "");
  out += "}\n";
  return out;
}

nlohmann::json to_json(const Graph& g) {
  nlohmann::json j;
  j["name"] = g.name;
  j["notes"] = g.notes;
  j["nodes"] = nlohmann::json::array();
  for (const auto& n : g.nodes)
    j["nodes"].push_back({{"id", n.id}, {"label", n.label}, {"kind", n.kind}, {"highlight", n.highlight}});
  j["edges"] = nlohmann::json::array();
  for (const auto& e : g.edges)
    j["edges"].push_back({{"from", g.nodes[e.from].id},
                          {"to", g.nodes[e.to].id},
                          {"label", e.label},
                          {"highlight", e.highlight}});
  return j;
}

}  // namespace uringsim::analysis
