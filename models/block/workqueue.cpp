#include "models/block/workqueue.hpp"

#include <fmt/format.h>

#include "sim/thread.hpp"

namespace uringsim::models {

WorkqueueCosts WorkqueueCosts::from(const config::CostTable& t) {
  WorkqueueCosts c;
  c.queue_work = t.get("queue_work_cycles");
  return c;
}

Workqueue::Workqueue(sim::Engine& engine, std::string name, const WorkqueueCosts& costs)
    : engine_(engine), name_(std::move(name)), c_(costs) {}

const sim::Thread* Workqueue::worker(int cpu) const {
  auto it = pools_.find(cpu);
  return it == pools_.end() ? nullptr : it->second->thread;
}

void Workqueue::queue_work(std::function<void()> fn) {
  static const sim::Label sym = sim::intern("queue_work_on");
  auto& self = sim::current();
  self.charge(c_.queue_work, sym);
  ++stats_.queued;
  const int cpu = self.cpu();  // a bound workqueue runs the work where it was queued
  auto& p = pools_[cpu];
  if (!p) {
    p = std::make_unique<Pool>();
    sim::ThreadOptions o;
    o.daemon = true;
    o.pinned = true;  // kthread_bind to its CPU
    o.kernel = true;
    Pool* pp = p.get();
    p->thread = &engine_.spawn(
        fmt::format("kworker/{}:{}", cpu, name_), "kworker", cpu, [this, pp] { worker_main(*pp); }, o);
    ++stats_.workers;
  }
  p->work.push_back(std::move(fn));
  if (p->idle) {
    p->idle = false;
    ++stats_.wakeups;
    p->thread->unpark();  // wake_up_worker
  }
}

void Workqueue::worker_main(Pool& p) {
  auto& self = sim::current();
  for (;;) {
    while (!p.work.empty()) {
      auto fn = std::move(p.work.front());
      p.work.pop_front();
      ++stats_.run;
      fn();
      self.cond_resched();  // process_one_work, after each item
    }
    p.idle = true;
    self.park();
  }
}

}  // namespace uringsim::models
