// The engine's lookahead (sim/horizon.hpp): a thread takes or releases a free lock at its local
// date without first executing its pending work when no other thread can act before that date.
// These cases check that it changes nothing observable: the same dates and the same lock
// statistics with the lookahead on and off, when another thread does come to the lock before
// the holder's local date and when it comes after. The machine runs at 1 GHz (1 cycle = 1 ns)
// with every primitive cost 0 (unless a case says otherwise), so dates follow from the charged
// work alone.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "sim/atomic_line.hpp"
#include "sim/engine.hpp"
#include "sim/horizon.hpp"
#include "sim/label.hpp"
#include "sim/lock.hpp"
#include "sim/sched.hpp"
#include "sim/thread.hpp"
#include "sim/waitqueue.hpp"

using namespace uringsim::sim;

namespace {

MachineSpec two_cpus() {
  MachineSpec m;
  m.cores = 2;
  m.ghz = 1.0;
  return m;
}

struct Outcome {
  TimeNs a_locked = -1, a_done = -1, b_locked = -1, b_done = -1;
  LockSiteStats stats;
  std::uint64_t events = 0;
};

// A: from 1 ns, 1000 ns of work, then L for 100 ns. B: sleeps `b_start` ns, then L for 300 ns.
Outcome simulate(bool lookahead, TimeNs b_start) {
  Engine e(two_cpus(), PrimitiveCosts{});
  e.set_lookahead(lookahead);
  SpinLock l("L");
  Outcome o;
  e.spawn("a", "app", 0, [&] {
    Thread& self = current();
    self.sleep_ns(1);  // B has started and gone to sleep: its horizon is its wake-up date
    self.charge(1000, intern("work"));
    l.lock(intern("a"));
    o.a_locked = self.local_now_ns();
    self.charge(100, intern("critical"));
    l.unlock();
    o.a_done = now_ns();
  });
  e.spawn("b", "app", 1, [&] {
    Thread& self = current();
    self.sleep_ns(b_start);
    l.lock(intern("b"));
    o.b_locked = self.local_now_ns();
    self.charge(300, intern("critical"));
    l.unlock();
    o.b_done = now_ns();
  });
  e.run_until_ns(1e6);
  o.stats = l.window_total();
  o.events = e.events();
  return o;
}

// One simulation per process: `simulate` runs in a child, which sends its outcome back.
template <class T, class F>
T in_child(F simulate) {
  static_assert(std::is_trivially_copyable_v<T>);
  int fd[2];
  if (pipe(fd) != 0) throw std::runtime_error("pipe");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    const T o = simulate();
    const bool ok = write(fd[1], &o, sizeof o) == static_cast<ssize_t>(sizeof o);
    _exit(ok ? 0 : 1);
  }
  close(fd[1]);
  T o;
  const ssize_t n = read(fd[0], &o, sizeof o);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(n == static_cast<ssize_t>(sizeof o));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return o;
}

Outcome run(bool lookahead, TimeNs b_start) {
  return in_child<Outcome>([&] { return simulate(lookahead, b_start); });
}

void check_same(const Outcome& on, const Outcome& off) {
  CHECK(on.a_locked == Approx(off.a_locked));
  CHECK(on.a_done == Approx(off.a_done));
  CHECK(on.b_locked == Approx(off.b_locked));
  CHECK(on.b_done == Approx(off.b_done));
  CHECK(on.stats.acquisitions == off.stats.acquisitions);
  CHECK(on.stats.contended == off.stats.contended);
  CHECK(on.stats.hold_ns_total == Approx(off.stats.hold_ns_total));
  CHECK(on.stats.wait_ns_total == Approx(off.stats.wait_ns_total));
}

}  // namespace

TEST_CASE(
    "lookahead: another thread that takes the lock before the holder's local date goes first, as without "
    "it") {
  // B takes L at 500 and holds it to 800, before A's work ends at 1001: A may not run ahead.
  const Outcome on = run(true, 500), off = run(false, 500);
  check_same(on, off);
  CHECK(off.b_locked == Approx(500));
  CHECK(off.a_locked == Approx(1001));
  CHECK(off.stats.contended == 0);
}

TEST_CASE(
    "lookahead: a thread that comes during the holder's critical section waits for its release, as without "
    "it") {
  // B comes at 1050: A, ahead, took L at 1001 and holds it until 1101; B waits 51 ns.
  const Outcome on = run(true, 1050), off = run(false, 1050);
  check_same(on, off);
  CHECK(off.b_locked == Approx(1101));
  CHECK(off.stats.contended == 1);
  CHECK(off.stats.wait_ns_total == Approx(51));
}

TEST_CASE("lookahead: with nobody else before the holder's local date, the lock costs no simulation event") {
  // B comes at 2000, after A is done: A takes and releases L at 1001 and 1101 without executing
  // its work first; one compute event fewer for each.
  const Outcome on = run(true, 2000), off = run(false, 2000);
  check_same(on, off);
  CHECK(off.a_locked == Approx(1001));
  CHECK(off.b_locked == Approx(2000));
  CHECK(on.events < off.events);
}

namespace {

// A spinning waiter's pending work run inside its wait (Thread::may_wait_ahead). H holds L from 0
// to `hold`; W, from 10 ns, does 500 ns of work and comes to L at 510; C (if c_start >= 0) comes
// to L at c_start. Each holds it 100 (W) or 50 (C) ns.
struct QueueOutcome {
  TimeNs h_released = -1, w_locked = -1, w_done = -1, c_locked = -1;
  LockSiteStats stats;
  std::uint64_t events = 0;
};

QueueOutcome simulate_queue(bool lookahead, TimeNs hold, TimeNs c_start) {
  MachineSpec m = two_cpus();
  m.cores = 3;
  Engine e(m, PrimitiveCosts{});
  e.set_lookahead(lookahead);
  SpinLock l("L");
  QueueOutcome o;
  e.spawn("h", "app", 0, [&] {
    Thread& self = current();
    l.lock(intern("h"));
    self.charge(hold, intern("critical"));
    l.unlock();
    o.h_released = now_ns();
  });
  e.spawn("w", "app", 1, [&] {
    Thread& self = current();
    self.sleep_ns(10);
    self.charge(500, intern("work"));
    l.lock(intern("w"));
    o.w_locked = self.local_now_ns();
    self.charge(100, intern("critical"));
    l.unlock();
    o.w_done = now_ns();
  });
  if (c_start >= 0)
    e.spawn("c", "app", 2, [&] {
      Thread& self = current();
      self.sleep_ns(c_start);
      l.lock(intern("c"));
      o.c_locked = self.local_now_ns();
      self.charge(50, intern("critical"));
      l.unlock();
    });
  e.run_until_ns(1e6);
  o.stats = l.window_total();
  o.events = e.events();
  return o;
}

QueueOutcome run_queue(bool lookahead, TimeNs hold, TimeNs c_start) {
  return in_child<QueueOutcome>([&] { return simulate_queue(lookahead, hold, c_start); });
}

void check_same_queue(const QueueOutcome& on, const QueueOutcome& off) {
  CHECK(on.h_released == Approx(off.h_released));
  CHECK(on.w_locked == Approx(off.w_locked));
  CHECK(on.w_done == Approx(off.w_done));
  CHECK(on.c_locked == Approx(off.c_locked));
  CHECK(on.stats.acquisitions == off.stats.acquisitions);
  CHECK(on.stats.contended == off.stats.contended);
  CHECK(on.stats.contending == off.stats.contending);
  CHECK(on.stats.hold_ns_total == Approx(off.stats.hold_ns_total));
  CHECK(on.stats.wait_ns_total == Approx(off.stats.wait_ns_total));
}

}  // namespace

TEST_CASE(
    "lookahead: a spinning waiter that nobody precedes queues at its arrival without executing its work "
    "first") {
  // W comes at 510 to L, held until 2000: it spins from 510 and takes L at 2000 (waited 1490),
  // its 500 ns of work run inside the wait: one compute event fewer.
  const QueueOutcome on = run_queue(true, 2000, -1), off = run_queue(false, 2000, -1);
  check_same_queue(on, off);
  CHECK(off.w_locked == Approx(2000));
  CHECK(off.stats.contended == 1);
  CHECK(off.stats.wait_ns_total == Approx(1490));
  CHECK(on.events < off.events);
}

TEST_CASE(
    "lookahead: a thread that queues before a waiter's local date is ahead of it in the queue, as without "
    "it") {
  // C comes at 300, before W's arrival at 510 (W's work still pending then): C is first in line
  // (2000 to 2050), W second (2050). A waiter queued at its local date regardless would get 2000.
  const QueueOutcome on = run_queue(true, 2000, 300), off = run_queue(false, 2000, 300);
  check_same_queue(on, off);
  CHECK(off.c_locked == Approx(2000));
  CHECK(off.w_locked == Approx(2050));
}

TEST_CASE("lookahead: a thread that queues after a waiter's local date is behind it, as without it") {
  const QueueOutcome on = run_queue(true, 2000, 700), off = run_queue(false, 2000, 700);
  check_same_queue(on, off);
  CHECK(off.w_locked == Approx(2000));
  CHECK(off.c_locked == Approx(2100));
}

TEST_CASE(
    "lookahead: a holder that releases before a waiter's local date leaves the lock free for it, as without "
    "it") {
  // H releases at 400: W finds L free at 510, uncontended.
  const QueueOutcome on = run_queue(true, 400, -1), off = run_queue(false, 400, -1);
  check_same_queue(on, off);
  CHECK(off.w_locked == Approx(510));
  CHECK(off.stats.contended == 0);
}

namespace {

// A waiter queued ahead of its arrival while another thread acts on its CPU before it arrives.
// Times from kT0 = 3 ms, which W (CPU 1) spends running first, so that a woken thread's vruntime
// is far enough behind its own to preempt it (CFS). H holds L from kT0 to kT0 + 2000; W does 500 ns
// of work from kT0 + 10 and comes to L at kT0 + 510 unless delayed; Y (nice -15), parked on W's
// CPU, is woken at kT0 + 200 by Z (CPU 2) and runs 300 ns. With full preemption Y preempts W
// (whose work then ends at kT0 + 810); under PREEMPT_NONE, W a kernel thread, Y waits, but the
// wake's IPI takes 100 ns from W (W comes at kT0 + 610). No tick falls before kT0 + 4 ms.
constexpr TimeNs kT0 = 3e6;

struct PreemptOutcome {
  TimeNs w_locked = -1, y_ran = -1;
  LockSiteStats stats;
  std::uint64_t events = 0;
};

PreemptOutcome simulate_preempt(bool lookahead, PreemptModel preempt) {
  MachineSpec m = two_cpus();
  m.cores = 3;
  m.sched.preempt = preempt;
  m.sched.policy = SchedPolicy::Cfs;  // EEVDF's run to parity would keep W on for its slice
  PrimitiveCosts c;
  c.ipi_receive_cycles = 100;
  Engine e(m, c);
  e.set_lookahead(lookahead);
  SpinLock l("L");
  PreemptOutcome o;
  e.spawn("h", "app", 0, [&] {
    current().sleep_ns(kT0);
    l.lock(intern("h"));
    current().charge(2000, intern("critical"));
    l.unlock();
  });
  ThreadOptions high;  // nice -15; spawned first, it runs first and parks at once
  high.weight = 29154.0 / 1024;
  Thread& y = e.spawn(
      "y", "app", 1,
      [&] {
        Thread& self = current();
        self.park();
        self.charge(300, intern("y"));
        self.flush();
        o.y_ran = now_ns();
      },
      high);
  ThreadOptions kernel;
  kernel.kernel = preempt != PreemptModel::Full;
  e.spawn(
      "w", "app", 1,
      [&] {
        Thread& self = current();
        self.compute(kT0 + 10, intern("before"));
        self.charge(500, intern("work"));
        l.lock(intern("w"));
        o.w_locked = self.local_now_ns();
        self.charge(100, intern("critical"));
        l.unlock();
      },
      kernel);
  e.spawn("z", "app", 2, [&] {
    current().sleep_ns(kT0 + 200);
    y.unpark();
  });
  e.run_until_ns(1e7);
  o.stats = l.window_total();
  o.events = e.events();
  return o;
}

PreemptOutcome run_preempt(bool lookahead, PreemptModel preempt) {
  return in_child<PreemptOutcome>([&] { return simulate_preempt(lookahead, preempt); });
}

// The same dates and statistics with the lookahead on and off; W takes L at its release.
void check_same_preempt(const PreemptOutcome& on, const PreemptOutcome& off) {
  INFO("off: W waited " << off.stats.wait_ns_total << " ns, Y done at " << off.y_ran);
  CHECK(on.w_locked == Approx(off.w_locked));
  CHECK(on.y_ran == Approx(off.y_ran));
  CHECK(on.stats.contended == off.stats.contended);
  CHECK(on.stats.wait_ns_total == Approx(off.stats.wait_ns_total));
  CHECK(off.w_locked == Approx(kT0 + 2000));
}

}  // namespace

TEST_CASE(
    "lookahead: a waiter queued ahead and preempted before its arrival runs its work later, as without it") {
  const PreemptOutcome on = run_preempt(true, PreemptModel::Full),
                       off = run_preempt(false, PreemptModel::Full);
  check_same_preempt(on, off);
  CHECK(off.y_ran < kT0 + 1000);                // Y ran at once: W was preempted
  CHECK(off.stats.wait_ns_total < 2000 - 510);  // so W came to L later than 510
}

TEST_CASE(
    "lookahead: an IPI that lands on a waiter queued ahead before its arrival delays it, as without it") {
  const PreemptOutcome on = run_preempt(true, PreemptModel::None),
                       off = run_preempt(false, PreemptModel::None);
  check_same_preempt(on, off);
  CHECK(off.stats.wait_ns_total < 2000 - 510);  // the IPI's 100 ns came before W's arrival
  CHECK(on.events < off.events);                // W's work ran inside its wait
}

TEST_CASE("lookahead: the horizon heap's minimum, with and without one member, matches a scan") {
  Horizons h;
  std::vector<TimeNs> keys;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> t(0, 1000);
  for (int i = 0; i < 50; ++i) {
    keys.push_back(t(rng));
    CHECK(h.add(keys.back()) == i);
  }
  for (int step = 0; step < 2000; ++step) {
    const int id = static_cast<int>(rng() % keys.size());
    keys[static_cast<std::size_t>(id)] = step % 7 == 0 ? Horizons::kNever : t(rng);
    h.set(id, keys[static_cast<std::size_t>(id)]);
    const int other = static_cast<int>(rng() % keys.size());
    TimeNs all = Horizons::kNever, excl = Horizons::kNever;
    for (std::size_t k = 0; k < keys.size(); ++k) {
      all = std::min(all, keys[k]);
      if (static_cast<int>(k) != other) excl = std::min(excl, keys[k]);
    }
    REQUIRE(h.min() == all);
    REQUIRE(h.min_excluding(other) == excl);
    REQUIRE(h.get(id) == keys[static_cast<std::size_t>(id)]);
  }
}

TEST_CASE("waitqueue: a wake-up that comes while the waiter's pending work runs is not lost") {
  // prepare_to_wait: the waiter is on the queue before its remaining work runs. W checks its
  // condition at 1 ns with 1000 ns of work pending, then waits; K sets the condition and wakes
  // the queue at 500 ns, inside that work. W must return when its work is done (1001 ns).
  Engine e(two_cpus(), PrimitiveCosts{});
  WaitQueue wq("test");
  bool ready = false;
  TimeNs woke = -1;
  e.spawn("w", "app", 0, [&] {
    Thread& self = current();
    self.sleep_ns(1);
    self.charge(1000, intern("work"));
    if (!ready) wq.wait();
    woke = now_ns();
  });
  e.spawn("k", "app", 1, [&] {
    current().sleep_ns(500);
    ready = true;
    wq.wake_all();
  });
  e.run_until_ns(1e6);
  CHECK(woke == Approx(1001));
}

namespace {
// T parks for 1000 ns on CPU 1; W, on CPU 0, wakes it at 1000 ns with 500 ns of its work still
// pending, so the wake takes effect at 1500 ns (unpark_at): T's timed park ends at the very date
// the wake releases it. Spawn order decides which SimGrid processes first.
TimeNs timed_park_meets_deferred_wake(bool waker_first) {
  Engine e(two_cpus(), PrimitiveCosts{});
  TimeNs resumed = -1;
  bool woken = false;
  auto waker = [&](Thread*& target) {
    Thread& self = current();
    self.sleep_ns(1000);
    self.charge(500, intern("work"));
    wake_up_process(*target);
    self.flush();
  };
  Thread* t = nullptr;
  auto parker = [&] {
    woken = current().park_for_ns(1000);
    resumed = now_ns();
  };
  if (waker_first) {
    e.spawn("w", "app", 0, [&] { waker(t); });
    t = &e.spawn("t", "app", 1, parker);
  } else {
    t = &e.spawn("t", "app", 1, parker);
    e.spawn("w", "app", 0, [&] { waker(t); });
  }
  e.run_until_ns(1e6);
  // Either the timeout (at 1000 ns) or the wake (at 1500 ns) ended the park; never an error.
  return woken ? resumed : -resumed;
}
}  // namespace

TEST_CASE(
    "lookahead: a timed park that ends when a deferred wake releases it resumes without error (waker "
    "first)") {
  const TimeNs r = timed_park_meets_deferred_wake(true);
  CHECK((r == Approx(1500) || r == Approx(-1000)));
}

TEST_CASE(
    "lookahead: a timed park that ends when a deferred wake releases it resumes without error (parker "
    "first)") {
  const TimeNs r = timed_park_meets_deferred_wake(false);
  CHECK((r == Approx(1500) || r == Approx(-1000)));
}

namespace {

// A lockless list head (sim::AtomicLine). A: from 1 ns, 1000 ns of work, then one update at its
// local date 1001. B: sleeps `b_start`, then one update. An atomic costs 10 cycles, 100 more
// when the line comes from the other CPU.
struct AtomicOutcome {
  TimeNs a_done = -1, b_done = -1;
  int first = 0;  // 1: A updated first, 2: B did
  std::uint64_t updates = 0, bounces = 0, events = 0;
};

AtomicOutcome simulate_atomic(bool lookahead, TimeNs b_start) {
  PrimitiveCosts c;
  c.spin_lock_fast_cycles = 10;
  c.spin_lock_migrate_cycles = 100;
  Engine e(two_cpus(), c);
  e.set_lookahead(lookahead);
  AtomicLine line("head");
  AtomicOutcome o;
  e.spawn("a", "app", 0, [&] {
    Thread& self = current();
    self.sleep_ns(1);
    self.charge(1000, intern("work"));
    line.update(intern("a"));
    if (o.first == 0) o.first = 1;
    o.a_done = now_ns();
  });
  e.spawn("b", "app", 1, [&] {
    current().sleep_ns(b_start);
    line.update(intern("b"));
    if (o.first == 0) o.first = 2;
    o.b_done = now_ns();
  });
  e.run_until_ns(1e6);
  for (const auto& [site, n] : line.window_sites()) {
    o.updates += n.updates;
    o.bounces += n.bounces;
  }
  o.events = e.events();
  return o;
}

AtomicOutcome run_atomic(bool lookahead, TimeNs b_start) {
  return in_child<AtomicOutcome>([&] { return simulate_atomic(lookahead, b_start); });
}

void check_same_atomic(const AtomicOutcome& on, const AtomicOutcome& off) {
  CHECK(on.first == off.first);
  CHECK(on.a_done == Approx(off.a_done));
  CHECK(on.b_done == Approx(off.b_done));
  CHECK(on.updates == off.updates);
  CHECK(on.bounces == off.bounces);
}

}  // namespace

TEST_CASE("lookahead: an atomic update by another thread before the updater's local date comes first") {
  // B updates at 500 (10 ns: the line's first update), A at its local date 1001, after its work:
  // the line comes from B's CPU (10 + 100 ns).
  const AtomicOutcome on = run_atomic(true, 500), off = run_atomic(false, 500);
  check_same_atomic(on, off);
  CHECK(off.first == 2);
  CHECK(off.b_done == Approx(510));
  CHECK(off.a_done == Approx(1111));
  CHECK(off.updates == 2);
  CHECK(off.bounces == 1);
}

TEST_CASE("lookahead: an atomic update with nobody before the updater's local date costs no event") {
  // B comes at 2000, after A: A updates at 1001 without executing its work first, B pays the
  // line's transfer from A's CPU.
  const AtomicOutcome on = run_atomic(true, 2000), off = run_atomic(false, 2000);
  check_same_atomic(on, off);
  CHECK(off.first == 1);
  CHECK(off.a_done == Approx(1011));
  CHECK(off.b_done == Approx(2110));
  CHECK(on.events < off.events);
}

namespace {

struct Causes {
  std::uint64_t compute = 0, lock_busy = 0, other_first = 0, by_ay = 0, by_bee = 0, always = 0;
};

// A ("ay"): from 1 ns, 1000 ns of work, then L for 100 ns. B ("bee"): sleeps `b_start` ns,
// 50 ns of work, then L for 300 ns.
Causes simulate_causes(bool lookahead, TimeNs b_start) {
  Engine e(two_cpus(), PrimitiveCosts{});
  e.set_lookahead(lookahead);
  SpinLock l("L");
  auto body = [&](TimeNs start, Cycles before, Cycles critical) {
    Thread& self = current();
    self.sleep_ns(start);
    self.charge(before, intern("work"));
    l.lock(intern("site"));
    self.charge(critical, intern("critical"));
    l.unlock();
    now_ns();
  };
  e.spawn("a", "ay", 0, [&] { body(1, 1000, 100); });
  e.spawn("b", "bee", 1, [&] { body(b_start, 50, 300); });
  e.run_until_ns(1e6);
  using C = SyncCause;
  Causes c;
  c.compute = e.events(Engine::EventKind::Compute);
  c.lock_busy = e.syncs(C::LockBusy);
  c.other_first = e.syncs(C::OtherThreadFirst);
  const auto by = e.syncs_other_first_by_comm();
  c.by_ay = by.count("ay") ? by.at("ay") : 0;
  c.by_bee = by.count("bee") ? by.at("bee") : 0;
  c.always = e.syncs(C::Always);
  CHECK(e.syncs(C::Tick) == 0);
  CHECK(e.syncs(C::Resched) == 0);
  return c;
}

}  // namespace

TEST_CASE("lookahead: run_info's compute_by_cause names the thread that could act first") {
  // A's lock (local 1001) waits for B's wake-up at 1000; B's (1050) for A's flush to 1001; A's
  // release (1101) for B's flush to 1050. B then finds L held with nothing pending, and gets it
  // at 1101 before A has exited: its release (1401) waits for A, whose horizon is that hand-off.
  const Causes c = in_child<Causes>([] { return simulate_causes(true, 1000); });
  CHECK(c.other_first == 4);
  CHECK(c.by_bee == 2);
  CHECK(c.by_ay == 2);
  CHECK(c.lock_busy == 0);
  CHECK(c.always == 0);
  CHECK(c.compute == c.lock_busy + c.other_first + c.always);
}

TEST_CASE("lookahead: without it, a held lock reached with pending work counts as lock_busy") {
  // B reaches L at 1070 while A holds it (1001-1101): it executes its 50 ns first. A's lock and
  // release and B's release execute theirs because the lookahead is off.
  const Causes c = in_child<Causes>([] { return simulate_causes(false, 1050); });
  CHECK(c.lock_busy == 1);
  CHECK(c.other_first == 0);
  CHECK(c.always == 3);
  CHECK(c.compute == 4);
}
