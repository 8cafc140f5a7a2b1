// uringsim graph: the design-review graphs of a scenario (docs/models/checks.md).
#include <fmt/format.h>

#include <iostream>

#include "analysis/graphs.hpp"
#include "analysis/io.hpp"
#include "config/scenario.hpp"
#include "models/simulation.hpp"
#include "tools/app/commands.hpp"
#include "tools/app/load_scenario.hpp"
#include "uringsim_version.hpp"

namespace uringsim::app {

void add_graph_options(CLI::App& cmd, GraphOptions& o) {
  cmd.add_option("scenario", o.scenario, "Scenario JSON file")->required();
  cmd.add_option("--kind", o.kind,
                 "lock-order (runs the simulation), wait-for (runs it: the deadlock's graph, or the state at "
                 "the end), topology (builds the scenario without running it)")
      ->required()
      ->check(CLI::IsMember({"lock-order", "wait-for", "topology"}));
  cmd.add_option("--format", o.format, "dot (Graphviz) or json")->check(CLI::IsMember({"dot", "json"}));
  cmd.add_option("-o,--out", o.out, "Write to FILE (default: stdout)");
  cmd.add_option("--seed", o.seed, "Override the scenario's seed")->check(CLI::NonNegativeNumber);
  cmd.add_option("--variant", o.variant, "Apply the named variant of the scenario");
  cmd.add_option("--set", o.sets, "Override a field: dotted.path=value (repeatable)")->take_all();
}

int cmd_graph(const GraphOptions& o) {
  const auto loaded = load_for_command(o.scenario, o.variant, o.sets, o.seed);
  if (!loaded) return kExitBadInput;
  const config::Scenario& scenario = *loaded;

  analysis::Graph g;
  nlohmann::json extra;  // kind-specific keys of the JSON output
  std::string note;      // what the graph shows, on stderr
  const int rc = simulate_or_report([&] {
    if (o.kind == "topology") {
      g = analysis::topology_graph(models::build_topology(scenario));
      note = "topology of the scenario as built (not run)";
    } else {
      const models::RunOutput r = models::simulate(scenario, URINGSIM_VERSION);
      if (o.kind == "lock-order") {
        g = analysis::lock_order_graph(r.lock_order);
        const auto cycles = analysis::lock_order_cycles(r.lock_order);
        extra["cycles"] = analysis::lock_order_json(r.lock_order, cycles).at("cycles");
        note = fmt::format("lock-order graph of the run: {} edges, {} cycles", r.lock_order.size(),
                           cycles.size());
      } else {
        g = analysis::wait_for_graph(r.wait_for);
        extra["deadlock"] = r.wait_for.deadlock;
        extra["t_ns"] = r.wait_for.t_ns;
        extra["cycle"] = analysis::deadlock_json(r.wait_for).at("cycle");
        note = r.wait_for.deadlock ? analysis::deadlock_text(r.wait_for)
                                   : fmt::format(
                                         "no deadlock: wait-for graph of the state at the end of the run "
                                         "({:.0f} ns)",
                                         r.wait_for.t_ns);
      }
    }
  });
  if (rc != kExitOk) return rc;

  std::string text;
  if (o.format == "dot") {
    text = analysis::to_dot(g);
  } else {
    nlohmann::json j = analysis::to_json(g);
    j["kind"] = o.kind;
    for (auto& [k, v] : extra.items()) j[k] = v;
    text = analysis::dump_json(j);
  }
  if (o.out.empty()) {
    std::cout << text;
  } else {
    try {
      analysis::write_file_atomic(o.out, text);
    } catch (const std::exception& e) {
      std::cerr << "error: cannot write " << o.out << ": " << e.what() << "\n";
      return kExitFailed;
    }
  }
  std::cerr << note << "\n";
  return kExitOk;
}

}  // namespace uringsim::app
