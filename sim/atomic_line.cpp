#include "sim/atomic_line.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/engine.hpp"
#include "sim/thread.hpp"

namespace uringsim::sim {

AtomicLine::AtomicLine(std::string name) : name_(std::move(name)) {
  Engine::get().register_atomic(this);
}

AtomicLine::~AtomicLine() {
  try {
    Engine::get().unregister_atomic(this);
  } catch (const std::logic_error&) {
  }
}

void AtomicLine::update(Label site) {
  Thread& self = current();
  self.reach_shared();
  const bool moved = last_cpu_ >= 0 && last_cpu_ != self.cpu();
  last_cpu_ = self.cpu();
  auto it = std::find_if(sites_.begin(), sites_.end(), [site](const auto& s) { return s.first == site; });
  if (it == sites_.end()) it = sites_.insert(sites_.end(), {site, Counts{}});
  ++it->second.updates;
  if (moved) ++it->second.bounces;
  const auto& c = Engine::get().costs();
  self.charge(c.spin_lock_fast_cycles + (moved ? c.spin_lock_migrate_cycles : 0), site);
}

std::vector<std::pair<Label, AtomicLine::Counts>> AtomicLine::window_sites() const {
  auto w = sites_;
  for (auto& [site, n] : w)
    for (const auto& [bsite, b] : base_)
      if (bsite == site) {
        n.updates -= b.updates;
        n.bounces -= b.bounces;
      }
  return w;
}

void AtomicLine::mark_window_start() {
  base_ = sites_;
}

}  // namespace uringsim::sim
