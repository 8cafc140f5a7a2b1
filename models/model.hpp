#pragma once
// A model turns a checked scenario into simulated threads, locks and devices, and adds its own
// sections to the results. Models use only sim/ primitives, never SimGrid.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/metrics.hpp"
#include "config/scenario.hpp"
#include "sim/engine.hpp"

namespace uringsim::models {

class Model {
 public:
  virtual ~Model() = default;
  // CPUs the model needs outside the simulated machine (e.g. remote clients).
  virtual int external_cpus() const { return 0; }
  // Create threads, locks and devices. Called once, at simulated time 0.
  virtual void build(sim::Engine& engine, analysis::RunMetrics& metrics) = 0;
  // After the run, before report(): end-of-run invariants (e.g. no request lost).
  virtual void final_checks() const {}
  // Model-specific sections of results.json (e.g. "queue", "iowq").
  virtual void report(nlohmann::json& results) const {}
  // What the latency figures of results.json (`latency_us`) measure, for the run summary.
  virtual std::string latency_measure() const { return "none: this workload completes no requests"; }
  // Extra lines of the human summary: (label, value).
  virtual std::vector<std::pair<std::string, std::string>> summary() const { return {}; }
  // Free-form text printed after the summary table (e.g. fio's own report layout); "" for none.
  virtual std::string text_report() const { return ""; }
};

// The model for the scenario's workload.type. InputError for a type no model implements.
std::unique_ptr<Model> make_model(const config::Scenario& scenario);

}  // namespace uringsim::models
