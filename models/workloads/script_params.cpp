#include "models/workloads/script_params.hpp"

#include <set>

namespace uringsim::models {

ScriptParams ScriptParams::from(const config::Scenario& s) {
  ScriptParams p;
  const int cores = s.at("/machine/cores").get<int>();
  std::set<std::string> names;
  for (const auto& l : s.at("/workload/locks")) {
    const auto name = l.at("name").get<std::string>();
    if (!names.insert(name).second)
      throw config::InputError(s.source + ": /workload/locks: lock \"" + name + "\" is declared twice");
    p.locks.push_back({name, l.at("kind").get<std::string>() == "spin"});
  }
  auto lock_index = [&](const nlohmann::json& step, const std::string& where) {
    const auto name = step.at("lock").get<std::string>();
    for (std::size_t i = 0; i < p.locks.size(); ++i)
      if (p.locks[i].name == name) return static_cast<int>(i);
    std::string known;
    for (const auto& l : p.locks) known += (known.empty() ? "" : ", ") + l.name;
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
    Thread spec;
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
    p.threads.push_back(std::move(spec));
  }
  return p;
}

}  // namespace uringsim::models
