#include "models/workloads/script.hpp"

#include <set>
#include <utility>

#include "sim/checks.hpp"
#include "sim/engine.hpp"

namespace uringsim::models {

ScriptModel::ScriptModel(ScriptParams p) : p_(std::move(p)) {}

void ScriptModel::build(sim::Engine& engine, analysis::RunMetrics&) {
  for (const auto& l : p_.locks) {
    if (l.spin)
      locks_.push_back(std::make_unique<sim::SpinLock>(l.name));
    else
      locks_.push_back(std::make_unique<sim::Mutex>(l.name));
  }
  for (const auto& t : p_.threads) {
    sim::ThreadOptions o;
    o.start_ns = t.start_ns;  // it comes into being then, already running
    engine.spawn(
        t.name, "script", t.cpu, [this, &t] { run_thread(t); }, o);
  }
  // Topology: which thread takes which lock, and where.
  std::set<std::tuple<std::string, std::string, std::string>> uses;
  for (const auto& t : p_.threads)
    for (const auto& st : t.steps)
      if (st.op == ScriptParams::Op::Lock)
        uses.insert({t.name, p_.locks[st.lock].name, sim::label_name(st.site)});
  for (const auto& [thread, lock, site] : uses) engine.declare_edge(thread, lock, "takes at " + site);
}

void ScriptModel::run_thread(const ScriptParams::Thread& t) {
  static const sim::Label work = sim::intern("[script] compute");
  auto& self = sim::current();
  sim::Label last_site = sim::kNoLabel;  // an unlock without a site names the last one given
  using Op = ScriptParams::Op;
  for (int r = 0; r < t.repeat; ++r) {
    for (const ScriptParams::Step& st : t.steps) {
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
  results["script"] = {{"threads", p_.threads.size()}, {"threads_finished", finished_}};
}

}  // namespace uringsim::models
