// Interrupt time (ThreadOptions::interrupt, sim::CpuScheduler::steal) is the handler's CPU time,
// not the interrupted thread's, as the kernel counts hardirq time with IRQ_TIME_ACCOUNTING: on a
// CPU that a thread keeps busy (working or busy-polling) while a handler takes X ns per period,
// the CPU is 100 % busy and X / period of it is the handler's. The machine runs at 1 GHz (one
// cycle = 1 ns) with zero primitive costs, so the answers follow from the model's rules alone.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "cli_helpers.hpp"
#include "sim/engine.hpp"
#include "sim/label.hpp"
#include "sim/lock.hpp"
#include "sim/thread.hpp"

using namespace uringsim::sim;

namespace {

constexpr TimeNs kUs = 1e3;
constexpr TimeNs kMs = 1e6;

MachineSpec machine(int cores) {
  MachineSpec m;
  m.cores = cores;
  m.ghz = 1.0;
  return m;
}

Cycles total(const Thread& t) {
  const auto& c = t.cycles_by_symbol();
  return std::accumulate(c.begin(), c.end(), 0.0);
}

// A handler on `cpu` that takes `busy` ns at the end of every `period` ns, from the start.
Thread& periodic_irq(Engine& e, int cpu, TimeNs period, TimeNs busy) {
  ThreadOptions o;
  o.interrupt = true;
  o.daemon = true;
  return e.spawn(
      "irq", "[irq] test", cpu,
      [period, busy] {
        for (;;) {
          current().sleep_ns(period - busy);
          current().compute(busy, intern("test_irq"));
        }
      },
      o);
}

}  // namespace

TEST_CASE("irq: a CPU-bound thread and a handler taking 60 us in every 100 us: 40 % and 60 %, 100 % in all") {
  Engine e(machine(1), PrimitiveCosts{});
  // 100 us steps of work: a handler that arrives while the thread waits out an earlier one also
  // delays it (at 60 % that happens at nearly every step).
  Thread& busy = e.spawn("busy", "app", 0, [] {
    for (;;) current().compute(100 * kUs, intern("work"));
  });
  Thread& irq = periodic_irq(e, 0, 100 * kUs, 60 * kUs);
  const TimeNs T = 100 * kMs;
  e.run_until_ns(T);
  // 1000 handlers of 60 us; the thread's work charged so far is within one step of the rest.
  CHECK(total(irq) == Approx(0.6 * T).margin(60 * kUs));
  CHECK(total(busy) == Approx(0.4 * T).margin(200 * kUs));
  CHECK(total(busy) + total(irq) <= T + 100 * kUs);
}

TEST_CASE("irq: a busy-polling thread does not poll while a handler runs, and resumes after it") {
  Engine e(machine(1), PrimitiveCosts{});
  // Handlers over [40, 100] us of every 100 us. The poll's timeout, 50.07 ms, falls in the 501st
  // handler (50.04 to 50.1 ms): the loop resumes when it returns.
  TimeNs returned = -1;
  Thread& poller = e.spawn("poller", "app", 0, [&] {
    current().spin_for_ns(50.07 * kMs, intern("poll"));
    returned = now_ns();
  });
  Thread& irq = periodic_irq(e, 0, 100 * kUs, 60 * kUs);
  e.run_until_ns(60 * kMs);
  CHECK(returned == Approx(50.1 * kMs));
  // 50.1 ms on the CPU, 501 handlers of 60 us of it not polling.
  CHECK(total(poller) == Approx(50.1 * kMs - 501 * 60 * kUs));
  CHECK(total(irq) == Approx(501 * 60 * kUs));  // the run ends with the poller
}

TEST_CASE("irq: a spinlock waiter's spin leaves out the handler that ran on its CPU") {
  Engine e(machine(2), PrimitiveCosts{});
  SpinLock lock("l");
  const Label site = intern("site");
  e.spawn("owner", "app", 1, [&] {
    lock.lock(site);
    current().compute(1 * kMs, intern("cs"));
    lock.unlock();
  });
  Thread& waiter = e.spawn("waiter", "app", 0, [&] {
    current().sleep_ns(1 * kUs);
    lock.lock(site);  // spins until 1 ms
    lock.unlock();
  });
  ThreadOptions o;
  o.interrupt = true;
  o.daemon = true;
  Thread& irq = e.spawn(
      "irq", "[irq] test", 0,
      [] {
        current().sleep_ns(500 * kUs);
        current().compute(200 * kUs, intern("test_irq"));
      },
      o);
  e.run_until_ns(5 * kMs);
  const auto& w = waiter.cycles_by_symbol();
  REQUIRE(w.size() > sym::spin_slowpath());
  CHECK(w[sym::spin_slowpath()] == Approx(1 * kMs - 1 * kUs - 200 * kUs));
  CHECK(total(irq) == Approx(200 * kUs));
}

TEST_CASE("irq: a handler that needs a spinlock its CPU's own thread holds waits without CPU time") {
  Engine e(machine(1), PrimitiveCosts{});
  SpinLock lock("l");
  const Label site = intern("site");
  TimeNs done = -1;
  // The thread holds the lock (interrupts off, in the kernel) for its first 1 ms of work.
  Thread& owner = e.spawn("owner", "app", 0, [&] {
    lock.lock(site);
    current().compute(1 * kMs, intern("cs"));
    lock.unlock();
    current().compute(1 * kMs, intern("work"));
    done = now_ns();
  });
  ThreadOptions o;
  o.interrupt = true;
  o.daemon = true;
  Thread& irq = e.spawn(
      "irq", "[irq] test", 0,
      [&] {
        current().sleep_ns(500 * kUs);
        lock.lock(site);  // only runs once the thread lets it, at 1 ms
        current().compute(10 * kUs, intern("test_irq"));
        lock.unlock();
      },
      o);
  e.run_until_ns(5 * kMs);
  // The CPU was busy 2.01 ms: 2 ms the thread's, 10 us the handler's, its wait none.
  CHECK(total(irq) == Approx(10 * kUs));
  CHECK(total(owner) == Approx(2 * kMs));
  CHECK(done == Approx(2 * kMs + 10 * kUs));
}

TEST_CASE(
    "irq: the fio SQPOLL twin at QD 32 uses at most its 2 CPUs, the SQ thread's handlers counted once") {
  // The drive's interrupts land on the SQ thread's CPU, which the SQ thread keeps busy.
  const auto r =
      testing::run_results("irq-fio-sqpoll", testing::source_path("scenarios/twin/fio-sqpoll.json") +
                                                 " --variant qd32 --set duration_ms=50 --set warmup_ms=10");
  const auto& cpu = r.at("cpu");
  INFO(cpu.dump());
  const double irq = cpu.at("by_thread").at("[irq] nvme_pct").get<double>();
  const double sqp = cpu.at("by_thread").at("iou-sqp_pct").get<double>();
  REQUIRE(irq > 5);  // else there is nothing to count twice
  // Work charged before the window's end and run after it: a few us per thread.
  CHECK(cpu.at("total_pct").get<double>() <= 200.0 + 0.5);
  CHECK(irq + sqp <= 100.0 + 0.5);
}
