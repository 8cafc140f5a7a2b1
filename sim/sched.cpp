#include "sim/sched.hpp"

#include "sim/engine.hpp"

namespace uringsim::sim {

void wake_up_process(Thread& target) {
  current().charge(Engine::get().costs().wake_cycles, sym::wake());
  target.unpark();
}

void switch_in_after_sleep() {
  Thread& self = current();
  const auto& c = Engine::get().costs();
  self.sleep_ns(c.wakeup_latency_ns);
  self.charge(c.context_switch_cycles, sym::schedule());
}

void sleep_until_woken() {
  current().park();
  switch_in_after_sleep();
}

}  // namespace uringsim::sim
