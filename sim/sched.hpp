#pragma once
// Sleeping and waking, with the scheduler's costs: the waker pays try_to_wake_up on its CPU, the
// woken thread runs only after the wake-up latency and pays the switch-in (__schedule).
#include "sim/thread.hpp"

namespace uringsim::sim {

// Charges the waker (the current thread) its try_to_wake_up: wake_local_cycles if `target` would
// run on its CPU; wake_cycles if it goes to an idle CPU (an IPI, counted); wake_remote_cycles if
// to a busy CPU whose thread it does not preempt. One that preempts there (an IPI, counted) costs
// wake_preempt_cycles, of which this charges the enqueue (up to wake_remote_cycles) and returns
// the rest, the IPI's send, for the caller to charge once the wake is made visible.
[[nodiscard]] Cycles charge_wake(Thread& target, Wake how = Wake::Normal);
void wake_up_process(Thread& target, Wake how = Wake::Normal);  // from the current thread
// kick_process(target), from the current thread: a task running on another CPU is sent an IPI
// (true). The sender pays send_cycles (counted under `symbol`); the IPI arrives ipi_delivery_ns
// into that work (at its end at the latest) and takes ipi_receive_cycles of the target's time
// there. A task that is not running, or runs on the caller's CPU, gets none (false) and the
// sender pays nothing; nor does one whose CPU has a kick's IPI pending still (sent, its handler
// not yet run): the second merges into the first (false, counted as "kick_process (IPI already
// pending)").
bool kick_process(Thread& target, Cycles send_cycles, Label symbol);
void sleep_until_woken(Label path = kNoLabel);  // current thread sleeps until wake_up_process()
void switch_in_after_sleep();                   // the woken side's latency and switch-in cost

}  // namespace uringsim::sim
