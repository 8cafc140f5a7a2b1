// TIF_NOTIFY_SIGNAL and tctx->task_running (models/uring/task.hpp): a task_work add notifies the
// task only when it finds no work pending, and set_notify_signal kicks only when the flag was
// clear; the flag is cleared by io_run_task_work (Task::run) and on the way back to user space
// (Task::exit_to_user), not between the rounds of task_work_run's loop. Hand-built cases at
// 1 GHz (cycles = ns), a peer on its own CPU adding work at chosen dates.
#include <catch2/catch.hpp>

#include <vector>

#include "models/uring/task.hpp"
#include "sim/sched.hpp"
#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::UringWorld;

namespace {
constexpr sim::TimeNs kUs = 1000;

KernelConfig era(const char* name) {
  KernelConfig k = KernelConfig::for_era(name);
  k.sq_entries = 64;
  k.cq_entries = 128;
  return k;
}

struct Seen {
  std::uint64_t ipis = 0;
  std::vector<char> ran;  // the items' names, in the order the owner ran them
  std::vector<sim::TimeNs> ran_at;
};

// The owner runs its list at 20 us; each item takes 20 us. The peer adds A at 10 us (the owner
// in user space), B at 30 us and C at 50 us (while the owner's run loop is busy with A, then
// B), and D at 100 us, after the owner went back to user space at the end of its run.
Seen run_schedule(const char* era_name) {
  UringCosts uc{};
  uc.tw_notify_ipi = 500;
  UringWorld w(3, sim::PrimitiveCosts{}, era(era_name), uc);
  Seen out;
  auto item = [&](char name) {
    return [&out, name] {
      out.ran.push_back(name);
      out.ran_at.push_back(sim::current().local_now_ns());
      sim::current().compute(20 * kUs, sim::intern("[test] item"));
    };
  };
  w.spawn_app([&] {
    auto& self = sim::current();
    self.compute(20 * kUs, sim::intern("[app] work"));
    w.task.exit_to_user();  // a kernel entry at 20 us, its task_work, and back
    self.compute(100 * kUs, sim::intern("[app] work"));
    w.task.exit_to_user();
  });
  w.spawn_peer("peer", [&] {
    auto& self = sim::current();
    self.sleep_ns(10 * kUs);
    w.task.add(&w.ctx, item('A'));
    self.sleep_ns(30 * kUs - self.local_now_ns());
    w.task.add(&w.ctx, item('B'));
    self.sleep_ns(50 * kUs - self.local_now_ns());
    w.task.add(&w.ctx, item('C'));
    self.sleep_ns(100 * kUs - self.local_now_ns());
    w.task.add(&w.ctx, item('D'));
  });
  w.engine.run_until_ns(1e6);
  out.ipis = w.task.ipis();
  return out;
}
// Whatever the notifications, every item runs, in order, and the run loop that took A at 20 us
// picks up B and C without leaving the kernel.
void check_one_loop_ran_a_b_c(const Seen& s) {
  CHECK(s.ran == std::vector<char>{'A', 'B', 'C', 'D'});
  REQUIRE(s.ran_at.size() == 4);
  CHECK(s.ran_at[1] == Approx(40 * kUs).margin(1));
  CHECK(s.ran_at[2] == Approx(60 * kUs).margin(1));
}
}  // namespace

TEST_CASE("notify signal: 6.x kicks once per clear of TIF_NOTIFY_SIGNAL and not once per list refill") {
  const Seen s = run_schedule("6.x");
  // A kicks (flag clear). The run at 20 us clears the flag and takes A; B finds the llist empty
  // and the flag clear: a second kick. C finds the llist empty again (the loop took B) but the
  // flag set by B's kick: no IPI. D comes after the return to user space cleared it: a kick.
  CHECK(s.ipis == 3);
  check_one_loop_ran_a_b_c(s);
}

TEST_CASE("notify signal: up to 5.19 the adds during tctx_task_work's loop notify nobody (task_running)") {
  const Seen s = run_schedule("5.18");
  // A kicks; B and C come while task_running is still set by A's add (the loop has not yet found
  // the list empty): no task_work_add, no IPI. D comes after the loop ended: a kick.
  CHECK(s.ipis == 2);
  check_one_loop_ran_a_b_c(s);
}

TEST_CASE("notify signal: a task that sleeps with the flag still set is woken by the next add") {
  // The kernel's task cannot sleep interruptibly with TIF_NOTIFY_SIGNAL set (signal_pending());
  // the model's can, after a run whose loop took a kicked add, so the add must wake it anyway.
  UringCosts uc{};
  uc.tw_notify_ipi = 500;
  UringWorld w(3, sim::PrimitiveCosts{}, era("6.x"), uc);
  sim::WaitQueue wq("test wait");
  sim::TimeNs woke_at = -1;
  int ran = 0;
  auto item = [&] {
    ++ran;
    sim::current().compute(20 * kUs, sim::intern("[test] item"));
  };
  w.spawn_app([&] {
    auto& self = sim::current();
    self.compute(20 * kUs, sim::intern("[app] work"));
    w.task.run();  // takes A at 20 us; B, added at 30 us, kicks and sets the flag; the loop runs it
    w.task.sleeping_on(&wq);
    wq.wait();
    w.task.sleeping_on(nullptr);
    woke_at = self.local_now_ns();
    w.task.exit_to_user();
  });
  w.spawn_peer("peer", [&] {
    auto& self = sim::current();
    self.sleep_ns(10 * kUs);
    w.task.add(&w.ctx, item);
    self.sleep_ns(30 * kUs - self.local_now_ns());
    w.task.add(&w.ctx, item);
    self.sleep_ns(100 * kUs - self.local_now_ns());
    w.task.add(&w.ctx, item);
  });
  w.engine.run_until_ns(1e6);
  CHECK(w.task.ipis() == 2);  // A and B; C wakes the sleeper instead
  CHECK(woke_at >= 100 * kUs);
  CHECK(ran == 3);
}
