#pragma once
// A per-CPU (bound) kernel workqueue, as alloc_workqueue() without WQ_UNBOUND makes one: the
// superblock's dio/<dev> workqueue (fs/super.c sb_init_dio_done_wq: WQ_MEM_RECLAIM, since 6.18
// spelled WQ_PERCPU). queue_work() from CPU c puts the work on CPU c's worker pool; its kworker
// (kworker/c:N, bound to c) runs the items in order, sharing c with whatever else runs there under
// the CPU scheduler. One worker per CPU: the pool starts another only when the running one
// sleeps, and the work modelled here never sleeps. See docs/models/block-completion.md.
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "config/scenario.hpp"
#include "sim/engine.hpp"

namespace uringsim::models {

struct WorkqueueCosts {
  sim::Cycles queue_work = 0;  // __queue_work in the queuing context (the wake-up is the scheduler's)
  static WorkqueueCosts from(const config::CostTable& t);
};

struct WorkqueueStats {
  std::uint64_t queued = 0, run = 0, wakeups = 0;
  int workers = 0;
};

class Workqueue {
 public:
  Workqueue(sim::Engine& engine, std::string name, const WorkqueueCosts& costs);
  // From the current thread (e.g. an interrupt): charges queue_work there; fn runs on the kworker
  // of the current CPU.
  void queue_work(std::function<void()> fn);
  const WorkqueueStats& stats() const { return stats_; }
  // The kworker thread of `cpu`, or nullptr if no work was ever queued there.
  const sim::Thread* worker(int cpu) const;

 private:
  struct Pool {
    sim::Thread* thread = nullptr;
    std::deque<std::function<void()>> work;
    bool idle = false;
  };
  void worker_main(Pool& p);

  sim::Engine& engine_;
  std::string name_;
  WorkqueueCosts c_;
  std::map<int, std::unique_ptr<Pool>> pools_;  // by CPU, created on first use
  WorkqueueStats stats_;
};

}  // namespace uringsim::models
