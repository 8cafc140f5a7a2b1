#include "sim/checks.hpp"

#include <algorithm>
#include <tuple>

#include "sim/engine.hpp"
#include "sim/lock.hpp"

namespace uringsim::sim {

const char* to_string(ThreadWait::On on) {
  switch (on) {
    case ThreadWait::On::Running:
      return "running";
    case ThreadWait::On::Lock:
      return "lock";
    case ThreadWait::On::WaitQueue:
      return "waitqueue";
    case ThreadWait::On::Park:
      return "park";
    case ThreadWait::On::Sleep:
      return "sleep";
  }
  return "?";
}

void Checks::add(Violation v) {
  ++total_;
  ++by_kind_[v.kind];
  if (stored_.size() < kMaxStored) stored_.push_back(std::move(v));
}

int Checks::add_lock_name(const std::string& name) {
  lock_names_.push_back(name);
  return static_cast<int>(lock_names_.size() - 1);
}

void Checks::order_edge(int from, Label from_site, int to, Label to_site) {
  ++edges_[{static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to), from_site, to_site}];
}

std::vector<LockOrderEdge> Checks::lock_order() const {
  // Merge instances by name (lockdep's lock classes); sort everything so the output is stable.
  std::map<std::pair<std::string, std::string>, std::map<std::pair<std::string, std::string>, std::uint64_t>>
      merged;
  for (const auto& [k, n] : edges_)
    merged[{lock_names_.at(k.from), lock_names_.at(k.to)}]
          [{label_name(k.from_site), label_name(k.to_site)}] += n;
  std::vector<LockOrderEdge> out;
  for (const auto& [ends, sites] : merged) {
    LockOrderEdge e{ends.first, ends.second, {}, 0};
    for (const auto& [pair, n] : sites) {
      e.sites.push_back(pair);
      e.count += n;
    }
    out.push_back(std::move(e));
  }
  return out;
}

void report_violation(const char* kind, Label path, std::uint64_t request, std::string message) {
  Thread& self = current();
  Violation v;
  v.t_ns = self.local_now_ns();  // after the work charged so far, without simulating it now
  v.kind = kind;
  v.thread = self.name();
  v.path = label_name(path);
  v.message = std::move(message);
  v.request = request ? request : self.request();
  for (const auto& h : self.held_locks()) v.locks_held.push_back(h.lock->name() + "@" + label_name(h.site));
  Engine::get().checks().add(std::move(v));
}

void require_held(const Lock& l, Label path, std::uint64_t request) {
  const Thread& self = current();
  if (l.owner() == &self) return;
  report_violation(violation::kLockRequired, path, request,
                   "requires " + l.name() + (l.owner() ? ", held by " + l.owner()->name() : ", not held"));
}

void require_not_held(const Lock& l, Label path, std::uint64_t request) {
  const Thread& self = current();
  if (l.owner() != &self) return;
  report_violation(violation::kLockForbidden, path, request,
                   "must not hold " + l.name() + " (taken at " + label_name(l.owner_site()) + ")");
}

void require_may_sleep(Label path, std::uint64_t request) {
  const Thread& self = current();
  if (self.spinlocks_held() == 0) return;
  std::string spins;
  for (const auto& h : self.held_locks())
    if (h.lock->kind() == Lock::Kind::Spin)
      spins += (spins.empty() ? "" : ", ") + h.lock->name() + " taken at " + label_name(h.site);
  report_violation(violation::kSleepHoldingSpinlock, path, request,
                   "may sleep while holding spinlock " + spins);
}

RequestScope::RequestScope(std::uint64_t request) : previous_(current().request()) {
  current().set_request(request);
}

RequestScope::~RequestScope() {
  current().set_request(previous_);
}

}  // namespace uringsim::sim
