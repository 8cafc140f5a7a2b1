// Tests of the sim/ primitives on hand-built cases with known answers. Each TEST_CASE builds its
// own engine, so CTest runs each in its own process (one SimGrid engine per process).
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "sim/engine.hpp"
#include "sim/lock.hpp"
#include "sim/sched.hpp"
#include "sim/waitqueue.hpp"

using namespace uringsim::sim;

namespace {
PrimitiveCosts zero_costs() {
  return PrimitiveCosts{};
}
double cycles_of(const Thread& t, const char* symbol) {
  const Label l = intern(symbol);
  return l < t.cycles_by_symbol().size() ? t.cycles_by_symbol()[l] : 0.0;
}
}  // namespace

TEST_CASE("sim: compute takes cycles / ghz and is accounted to its symbol") {
  Engine e({1, 2.0}, zero_costs());
  double end = -1;
  Thread& t = e.spawn("t", "app", 0, [&] {
    current().compute(2000, intern("work"));
    end = now_ns();
  });
  e.run_until_ns(1e6);
  CHECK(end == Approx(1000.0));
  CHECK(cycles_of(t, "work") == Approx(2000.0));
}

TEST_CASE("sim: lazy charges take the same time as separate executions") {
  Engine e({1, 1.0}, zero_costs());
  double end = -1;
  Thread& t = e.spawn("t", "app", 0, [&] {
    auto& self = current();
    self.charge(100, intern("a"));
    self.charge(250, intern("b"));
    self.charge(650, intern("a"));
    end = now_ns();
  });
  e.run_until_ns(1e6);
  CHECK(end == Approx(1000.0));
  CHECK(cycles_of(t, "a") == Approx(750.0));
  CHECK(cycles_of(t, "b") == Approx(250.0));
  CHECK(e.events() == 1);  // three charges, one execution
}

TEST_CASE("sim: threads on different CPUs do not slow each other") {
  Engine e({2, 1.0}, zero_costs());
  double a = -1, b = -1;
  e.spawn("a", "app", 0, [&] {
    current().compute(1000, intern("w"));
    a = now_ns();
  });
  e.spawn("b", "app", 1, [&] {
    current().compute(1000, intern("w"));
    b = now_ns();
  });
  e.run_until_ns(1e6);
  CHECK(a == Approx(1000.0));
  CHECK(b == Approx(1000.0));
}

TEST_CASE("sim: spinlock hands off in FIFO order of arrival") {
  Engine e({5, 1.0}, zero_costs());
  SpinLock lock("l");
  const Label site = intern("site");
  std::vector<int> order;
  e.spawn("owner", "app", 0, [&] {
    lock.lock(site);
    order.push_back(0);
    current().compute(1000, intern("cs"));
    lock.unlock();
  });
  // Waiters arrive in the order 3, 1, 2 and must get the lock in that order.
  const int arrival_rank[] = {0, 200, 300, 100};
  for (int i = 1; i <= 3; ++i)
    e.spawn("w" + std::to_string(i), "app", i, [&, i] {
      current().sleep_ns(arrival_rank[i]);
      lock.lock(site);
      order.push_back(i);
      current().compute(100, intern("cs"));
      lock.unlock();
    });
  e.run_until_ns(1e6);
  CHECK(order == std::vector<int>{0, 3, 1, 2});
}

TEST_CASE("sim: a spinning waiter burns its CPU, accounted to the slow path") {
  PrimitiveCosts c;
  c.spin_handoff_cycles = 40;
  Engine e({2, 2.0}, c);
  SpinLock lock("l");
  const Label site = intern("site");
  double acquired_at = -1;
  e.spawn("owner", "app", 0, [&] {
    lock.lock(site);
    current().compute(2000, intern("cs"));  // 1000 ns at 2 GHz
    lock.unlock();
  });
  Thread& w = e.spawn("waiter", "app", 1, [&] {
    current().sleep_ns(100);
    lock.lock(site);
    acquired_at = now_ns();  // after paying the hand-off
    lock.unlock();
  });
  e.run_until_ns(1e6);
  // Spun from 100 to 1000 ns at 2 GHz = 1800 cycles, plus the 40-cycle cache-line transfer.
  CHECK(cycles_of(w, "native_queued_spin_lock_slowpath") == Approx(1840.0));
  CHECK(acquired_at == Approx(1020.0));
}

TEST_CASE("sim: a thread woken on a spinlock holder's CPU waits: holding a spinlock disables preemption") {
  Engine e({1, 1.0}, zero_costs());
  SpinLock lock("l");
  const Label site = intern("site");
  double owner_done = -1, other_got = -1;
  e.spawn("other", "app", 0, [&] {
    current().sleep_ns(100);  // leaves the CPU to the owner; runnable again at 100
    lock.lock(site);
    other_got = now_ns();
    lock.unlock();
  });
  e.spawn("owner", "app", 0, [&] {
    lock.lock(site);
    current().compute(1000, intern("cs"));
    owner_done = now_ns();
    lock.unlock();
  });
  e.run_until_ns(1e6);
  // The owner keeps the CPU for its whole critical section; the other thread runs when it ends
  // and finds the lock free.
  CHECK(owner_done == Approx(1000.0));
  CHECK(other_got == Approx(1000.0));
  CHECK(lock.sites().at(site).contended == 0);
}

TEST_CASE("sim: lock statistics on a hand-built contention case") {
  Engine e({3, 1.0}, zero_costs());
  SpinLock lock("l");
  const Label s_owner = intern("site_owner"), s_waiter = intern("site_waiter");
  e.spawn("owner", "app", 0, [&] {
    lock.lock(s_owner);
    current().compute(1000, intern("cs"));
    lock.unlock();
  });
  e.spawn("waiter", "app", 1, [&] {
    current().sleep_ns(200);
    lock.lock(s_waiter);
    current().compute(500, intern("cs"));
    lock.unlock();
  });
  e.spawn("late", "app", 2, [&] {
    current().sleep_ns(5000);
    lock.lock(s_waiter);
    current().compute(300, intern("cs"));
    lock.unlock();
  });
  e.run_until_ns(1e6);
  const auto& o = lock.sites().at(s_owner);
  const auto& w = lock.sites().at(s_waiter);
  CHECK(o.acquisitions == 1);
  CHECK(o.contended == 0);
  CHECK(o.hold_ns_total == Approx(1000.0));
  CHECK(w.acquisitions == 2);
  CHECK(w.contended == 1);
  CHECK(w.wait_ns_total == Approx(800.0));
  CHECK(w.wait_ns_max == Approx(800.0));
  CHECK(w.hold_ns_total == Approx(800.0));
  CHECK(w.hold_ns_max == Approx(500.0));
  // lock_stat's other columns: shortest wait and hold, CPU bounces, the holder's contending site.
  CHECK(o.hold_ns_min == Approx(1000.0));
  CHECK(o.wait_ns_min == 0);  // never waited: no minimum
  CHECK(w.wait_ns_min == Approx(800.0));
  CHECK(w.hold_ns_min == Approx(300.0));
  CHECK(o.acq_bounces == 0);  // the first acquisition moves nothing
  CHECK(w.acq_bounces == 2);  // CPU 0 -> 1 (contended), then 1 -> 2
  CHECK(w.con_bounces == 1);
  CHECK(o.contending == 1);  // the owner's section made the waiter wait
  CHECK(w.contending == 0);
}

TEST_CASE("sim: wait queue wakes sleepers one at a time, FIFO, after the wake-up latency") {
  PrimitiveCosts c;
  c.wakeup_latency_ns = 500;
  c.wake_cycles = 100;
  c.context_switch_cycles = 200;
  Engine e({3, 1.0}, c);
  WaitQueue wq;
  std::vector<std::pair<int, double>> woke;
  for (int i = 0; i < 2; ++i)
    e.spawn("sleeper" + std::to_string(i), "app", i, [&, i] {
      current().sleep_ns(10 * i);  // sleeper0 queues first
      wq.wait();
      woke.emplace_back(i, now_ns());
    });
  e.spawn("waker", "app", 2, [&] {
    current().sleep_ns(1000);
    CHECK(wq.waiters() == 2);
    CHECK(wq.wake_one());
    current().sleep_ns(5000);
    CHECK(wq.wake_all() == 1);
    CHECK_FALSE(wq.wake_one());
  });
  e.run_until_ns(1e6);
  REQUIRE(woke.size() == 2);
  // The waker's timer ends its sleep and it pays a 200-cycle switch-in (no wake-up latency: the
  // timer fires on its own CPU); it pays 100 cycles to wake, then the sleeper waits 500 ns for its
  // idle CPU and pays its own 200-cycle switch-in.
  CHECK(woke[0].first == 0);
  CHECK(woke[0].second == Approx(1000 + 200 + 100 + 500 + 200));
  CHECK(woke[1].first == 1);
  CHECK(woke[1].second == Approx(1300 + 5000 + 200 + 100 + 500 + 200));
}

TEST_CASE("sim: wait queue timeout") {
  Engine e({2, 1.0}, zero_costs());
  WaitQueue wq;
  bool woken = true;
  double at = -1;
  e.spawn("sleeper", "app", 0, [&] {
    woken = wq.wait_for_ns(2500);
    at = now_ns();
  });
  e.run_until_ns(1e6);
  CHECK_FALSE(woken);
  CHECK(at == Approx(2500.0));
  CHECK(wq.waiters() == 0);
}

TEST_CASE("sim: a mutex waiter sleeps without using CPU and is woken on unlock") {
  PrimitiveCosts c;
  c.wakeup_latency_ns = 300;
  Engine e({2, 1.0}, c);
  Mutex m("uring_lock");
  const Label site = intern("site");
  double got = -1;
  e.spawn("owner", "app", 0, [&] {
    m.lock(site);
    current().compute(1000, intern("cs"));
    m.unlock();
  });
  Thread& w = e.spawn("waiter", "app", 1, [&] {
    current().sleep_ns(100);
    m.lock(site);
    got = now_ns();
    m.unlock();
  });
  e.run_until_ns(1e6);
  CHECK(got == Approx(1300.0));
  CHECK(w.window_cycles() == Approx(0.0));
  CHECK(m.sites().at(site).contended == 1);
}

TEST_CASE("sim: releasing a lock one does not hold is a violation and the release is ignored") {
  // It used to stop the run with an error; now it is recorded so the run can finish and report.
  Engine e({1, 1.0}, zero_costs());
  SpinLock lock("l");
  bool still_free = false;
  e.spawn("bad", "app", 0, [&] {
    lock.unlock(intern("bad_path"));
    still_free = !lock.held();
  });
  e.run_until_ns(1e6);
  REQUIRE(e.checks().total() == 1);
  CHECK(e.checks().stored()[0].kind == "unlock_not_owner");
  CHECK(e.checks().stored()[0].path == "bad_path");
  CHECK_THAT(e.checks().stored()[0].message, Catch::Contains("which nobody holds"));
  CHECK(still_free);
}

TEST_CASE("sim: CPU accounting counts only the measurement window") {
  Engine e({1, 1.0}, zero_costs());
  e.set_window(1000, 3000);
  Thread& t = e.spawn("t", "app", 0, [&] {
    current().compute(500, intern("w"));  // before the window
    current().sleep_ns(1000);
    current().compute(700, intern("w"));  // inside
  });
  e.run_until_ns(3000);
  CHECK(t.window_cycles() == Approx(700.0));
  CHECK(cycles_of(t, "w") == Approx(1200.0));
}

TEST_CASE("sim: a deadlock on two mutexes is detected instead of hanging") {
  Engine e({2, 1.0}, zero_costs());
  Mutex a("a"), b("b");
  const Label site = intern("site");
  e.spawn("t1", "app", 0, [&] {
    a.lock(site);
    current().sleep_ns(100);
    b.lock(site);
  });
  e.spawn("t2", "app", 1, [&] {
    b.lock(site);
    current().sleep_ns(100);
    a.lock(site);
  });
  e.run_until_ns(1e9);
  CHECK(e.deadlocked());
  CHECK(e.deadlock_ns() == Approx(100.0));  // detected when the second lock() blocks, not at the end
}

TEST_CASE("sim: threads that all finish are not a deadlock") {
  Engine e({1, 1.0}, zero_costs());
  WaitQueue wq;
  e.spawn("a", "app", 0, [&] { current().compute(10, intern("w")); });
  e.spawn("b", "app", 0, [&] { CHECK_FALSE(wq.wait_for_ns(50)); });
  e.run_until_ns(1e6);
  CHECK_FALSE(e.deadlocked());
}

TEST_CASE("sim: only one engine per process") {
  Engine e({1, 1.0}, zero_costs());
  CHECK_THROWS_AS(Engine({1, 1.0}, zero_costs()), std::logic_error);
}

TEST_CASE("sim: a lock knows when it came from another CPU (its data must move too)") {
  Engine e({2, 1.0}, zero_costs());
  SpinLock lock("l");
  const Label site = intern("site");
  std::vector<bool> moved;
  auto take = [&](Cycles hold) {  // at 1 GHz, one cycle is 1 ns
    lock.lock(site);
    moved.push_back(lock.moved());
    current().compute(hold, intern("cs"));
    lock.unlock();
  };
  // a (CPU 0) takes it twice, then b (CPU 1) uncontended, then a again while b holds it
  // (a contended hand-off from CPU 1 to CPU 0).
  e.spawn("a", "app", 0, [&] {
    take(10);
    take(10);
    current().sleep_ns(100);  // t = 120: b holds it from 50 to 250
    take(10);
  });
  e.spawn("b", "app", 1, [&] {
    current().sleep_ns(50);
    take(200);
  });
  e.run_until_ns(1e6);
  CHECK(moved == std::vector<bool>{false, false, true, true});
}

// sim::current() comes from a pointer kept up to date at actor switches (sim/sg_impl.hpp), and
// clock_ns() from a copy of SimGrid's clock: after every kind of blocking call, each thread must
// still see itself and the exact date. Four threads on four CPUs (so a sleep ends exactly when
// due), sharing locks and a wait queue, so spins, hand-offs, parks, timeouts and wake-ups all
// interleave.
TEST_CASE("sim: current() and the clock stay right across every blocking primitive") {
  PrimitiveCosts c;
  c.wakeup_latency_ns = 50;
  c.wake_cycles = 10;
  c.spin_handoff_cycles = 20;
  Engine e({4, 1.0}, c);
  SpinLock spin("spin");
  Mutex mutex("mutex");
  WaitQueue wq;
  CHECK_THROWS_AS(current(), std::logic_error);  // before the run: outside any simulated thread
  int mismatches = 0, rounds = 0;
  std::vector<Thread*> threads(4, nullptr);
  for (int i = 0; i < 4; ++i)
    threads[i] = &e.spawn("t" + std::to_string(i), "app", i, [&, i] {
      auto same = [&] {
        if (&current() != threads[i]) ++mismatches;
      };
      for (int r = 0; r < 20; ++r) {
        current().charge(100 + 10 * i, intern("work"));
        spin.lock(intern("s"));
        same();
        current().charge(30, intern("cs"));
        spin.unlock();
        same();
        mutex.lock(intern("m"));
        same();
        current().sleep_ns(5);
        same();
        mutex.unlock();
        same();
        if (i == 0) {
          wq.wake_all();
          same();
        } else {
          wq.wait_for_ns(300);
          same();
        }
        current().flush();  // pending work done first, so the sleep alone follows
        const double before = e.clock_ns();
        current().sleep_ns(7);
        if (e.clock_ns() != Approx(before + 7)) ++mismatches;
        same();
        ++rounds;
      }
    });
  e.run_until_ns(1e9);
  CHECK(rounds == 80);
  CHECK(mismatches == 0);
  CHECK_THROWS_AS(current(), std::logic_error);  // after the run: outside again
}
