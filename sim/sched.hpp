#pragma once
// Sleeping and waking, with the scheduler's costs: the waker pays try_to_wake_up on its CPU, the
// woken thread runs only after the wake-up latency and pays the switch-in (__schedule).
#include "sim/thread.hpp"

namespace uringsim::sim {

// Charges the waker (the current thread) its try_to_wake_up: wake_local_cycles if `target` would
// run on its CPU; wake_cycles if it goes to another CPU with an IPI (counted as one); else
// wake_remote_cycles.
void charge_wake(Thread& target);
void wake_up_process(Thread& target);           // from the current thread
void sleep_until_woken(Label path = kNoLabel);  // current thread sleeps until wake_up_process()
void switch_in_after_sleep();                   // the woken side's latency and switch-in cost

}  // namespace uringsim::sim
