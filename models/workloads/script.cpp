#include "models/workloads/script.hpp"

#include <set>

#include "sim/checks.hpp"
#include "sim/engine.hpp"

namespace uringsim::models {

ScriptModel::ScriptModel(const config::Scenario& s) {
  const int cores = s.at("/machine/cores").get<int>();
  std::set<std::string> names;
  for (const auto& l : s.at("/workload/locks")) {
    const auto name = l.at("name").get<std::string>();
    if (!names.insert(name).second)
      throw config::InputError(s.source + ": /workload/locks: lock \"" + name + "\" is declared twice");
    lock_specs_.push_back({name, l.at("kind").get<std::string>() == "spin"});
  }
  auto lock_index = [&](const nlohmann::json& step, const std::string& where) {
    const auto name = step.at("lock").get<std::string>();
    for (std::size_t i = 0; i < lock_specs_.size(); ++i)
      if (lock_specs_[i].name == name) return static_cast<int>(i);
    std::string known;
    for (const auto& l : lock_specs_) known += (known.empty() ? "" : ", ") + l.name;
    throw config::InputError(s.source + ": " + where + "/lock: unknown lock \"" + name +
                             "\"; expected one of workload.locks: " + known);
  };
  auto site = [](const nlohmann::json& step) {
    const auto it = step.find("site");
    return it == step.end() || it->get<std::string>().empty() ? sim::kNoLabel
                                                              : sim::intern(it->get<std::string>());
  };
  std::set<std::string> thread_names;
  const auto& threads = s.at("/workload/threads");
  for (std::size_t ti = 0; ti < threads.size(); ++ti) {
    const auto& t = threads[ti];
    const std::string where = "/workload/threads/" + std::to_string(ti);
    ThreadSpec spec;
    spec.name = t.at("name").get<std::string>();
    if (!thread_names.insert(spec.name).second)
      throw config::InputError(s.source + ": " + where + "/name: thread \"" + spec.name +
                               "\" is declared twice");
    spec.cpu = t.at("cpu").get<int>();
    if (spec.cpu >= cores)
      throw config::InputError(s.source + ": " + where + "/cpu: expected a CPU below machine.cores (" +
                               std::to_string(cores) + "), got " + std::to_string(spec.cpu));
    spec.start_ns = t.at("start_us").get<double>() * 1e3;
    spec.repeat = t.at("repeat").get<int>();
    const auto& steps = t.at("steps");
    for (std::size_t si = 0; si < steps.size(); ++si) {
      const auto& st = steps[si];
      const std::string swhere = where + "/steps/" + std::to_string(si);
      const auto op = st.at("op").get<std::string>();
      Step step{Op::Compute};
      if (op == "lock") {
        step = {Op::Lock, lock_index(st, swhere), site(st)};
      } else if (op == "unlock") {
        step = {Op::Unlock, lock_index(st, swhere), site(st)};
      } else if (op == "compute") {
        step = {Op::Compute, -1, sim::kNoLabel, st.at("work_cycles").get<double>()};
      } else if (op == "sleep") {
        step = {Op::Sleep, -1, site(st), st.at("time_us").get<double>() * 1e3};
      } else if (op == "require_held") {
        step = {Op::RequireHeld, lock_index(st, swhere), site(st)};
      } else if (op == "require_not_held") {
        step = {Op::RequireNotHeld, lock_index(st, swhere), site(st)};
      } else {  // may_sleep: the schema allows no other op
        step = {Op::MaySleep, -1, site(st)};
      }
      spec.steps.push_back(step);
    }
    threads_.push_back(std::move(spec));
  }
}

void ScriptModel::build(sim::Engine& engine, analysis::RunMetrics&) {
  for (const auto& l : lock_specs_) {
    if (l.spin)
      locks_.push_back(std::make_unique<sim::SpinLock>(l.name));
    else
      locks_.push_back(std::make_unique<sim::Mutex>(l.name));
  }
  for (const auto& t : threads_) {
    sim::ThreadOptions o;
    o.start_ns = t.start_ns;  // it comes into being then, already running
    engine.spawn(
        t.name, "script", t.cpu, [this, &t] { run_thread(t); }, o);
  }
  // Topology: which thread takes which lock, and where.
  std::set<std::tuple<std::string, std::string, std::string>> uses;
  for (const auto& t : threads_)
    for (const auto& st : t.steps)
      if (st.op == Op::Lock) uses.insert({t.name, lock_specs_[st.lock].name, sim::label_name(st.site)});
  for (const auto& [thread, lock, site] : uses) engine.declare_edge(thread, lock, "takes at " + site);
}

void ScriptModel::run_thread(const ThreadSpec& t) {
  static const sim::Label work = sim::intern("[script] compute");
  auto& self = sim::current();
  sim::Label last_site = sim::kNoLabel;  // an unlock without a site names the last one given
  for (int r = 0; r < t.repeat; ++r) {
    for (const Step& st : t.steps) {
      if (st.site != sim::kNoLabel) last_site = st.site;
      sim::Lock* l = st.lock >= 0 ? locks_[static_cast<std::size_t>(st.lock)].get() : nullptr;
      switch (st.op) {
        case Op::Lock:
          l->lock(st.site);
          break;
        case Op::Unlock:
          l->unlock(st.site != sim::kNoLabel ? st.site : last_site);
          break;
        case Op::Compute:
          self.charge(st.value, work);
          break;
        case Op::Sleep:
          self.sleep_ns(st.value, st.site != sim::kNoLabel ? st.site : last_site);
          break;
        case Op::RequireHeld:
          sim::require_held(*l, st.site);
          break;
        case Op::RequireNotHeld:
          sim::require_not_held(*l, st.site);
          break;
        case Op::MaySleep:
          sim::require_may_sleep(st.site);
          break;
      }
    }
  }
  self.flush();
  ++finished_;
}

void ScriptModel::report(nlohmann::json& results) const {
  results["script"] = {{"threads", threads_.size()}, {"threads_finished", finished_}};
}

}  // namespace uringsim::models
