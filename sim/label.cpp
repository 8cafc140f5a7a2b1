#include "sim/label.hpp"

#include <deque>
#include <unordered_map>

namespace uringsim::sim {
namespace {
struct Table {
  std::deque<std::string> names;  // deque: references stay valid as it grows
  std::unordered_map<std::string_view, Label> ids;
  std::unordered_map<Label, WokeBy> woke_by;
  std::unordered_map<Label, std::string> preempted_by;
};
Table& table() {
  static Table t;
  return t;
}
}  // namespace

Label intern(std::string_view name) {
  Table& t = table();
  if (auto it = t.ids.find(name); it != t.ids.end()) return it->second;
  t.names.emplace_back(name);
  Label id = static_cast<Label>(t.names.size() - 1);
  t.ids.emplace(t.names.back(), id);
  return id;
}

const std::string& label_name(Label id) {
  static const std::string none;
  if (id == kNoLabel) return none;
  return table().names.at(id);
}
std::size_t label_count() {
  return table().names.size();
}

Label woke_by(const std::string& waker_comm, bool on_waker_cpu) {
  const Label l = intern("(woken by " + waker_comm + (on_waker_cpu ? ", on its CPU)" : ", on another CPU)"));
  table().woke_by.try_emplace(l, WokeBy{waker_comm, on_waker_cpu});
  return l;
}
const WokeBy* woke_by_of(Label id) {
  const auto& m = table().woke_by;
  const auto it = m.find(id);
  return it == m.end() ? nullptr : &it->second;
}

Label preempted_by(const std::string& next_comm) {
  const Label l = intern("(preempted by " + next_comm + ")");
  table().preempted_by.try_emplace(l, next_comm);
  return l;
}
const std::string* preempted_by_of(Label id) {
  const auto& m = table().preempted_by;
  const auto it = m.find(id);
  return it == m.end() ? nullptr : &it->second;
}

namespace sym {
Label spin_fast() {
  static const Label l = intern("_raw_spin_lock");
  return l;
}
Label spin_slowpath() {
  static const Label l = intern("native_queued_spin_lock_slowpath");
  return l;
}
Label mutex_lock() {
  static const Label l = intern("mutex_lock");
  return l;
}
Label wake() {
  static const Label l = intern("try_to_wake_up");
  return l;
}
Label wake_ipi() {
  static const Label l = intern("smp_send_reschedule");
  return l;
}
Label reschedule_ipi() {
  static const Label l = intern("sysvec_reschedule_ipi");
  return l;
}
Label schedule() {
  static const Label l = intern("__schedule");
  return l;
}
Label migrate() {
  static const Label l = intern("(cache refill after migration)");
  return l;
}
Label remote_wakee() {
  static const Label l = intern("(first run after a remote wake-up)");
  return l;
}
Label switch_voluntary() {
  static const Label l = intern("(voluntary context switch)");
  return l;
}
Label switch_involuntary() {
  static const Label l = intern("(involuntary context switch)");
  return l;
}
}  // namespace sym
}  // namespace uringsim::sim
