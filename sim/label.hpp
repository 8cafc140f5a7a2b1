#pragma once
// Interned names for code-path symbols ("io_worker_handle_work") and lock call sites. Models intern
// a name once and pass the small id on hot paths.
#include <cstdint>
#include <string>
#include <string_view>

namespace uringsim::sim {

using Label = std::uint32_t;
inline constexpr Label kNoLabel = ~Label{0};  // "no label given"; label_name() of it is ""

Label intern(std::string_view name);
const std::string& label_name(Label id);
std::size_t label_count();

// A wake-up, counted on its wakee by the waker's thread class and by where the wakee was put: the
// kernel's sched_waking (whose waker is the task running then) with sched_wakeup's target CPU,
// which bench/sched_trace.py counts on the real kernel.
struct WokeBy {
  std::string waker_comm;
  bool on_waker_cpu;
};
Label woke_by(const std::string& waker_comm, bool on_waker_cpu);
const WokeBy* woke_by_of(Label id);  // null for a label that does not count wake-ups

// A preemption, counted on the thread switched out by the class of the thread that ran next:
// sched_switch with prev_state R, which bench/sched_trace.py counts on the real kernel.
Label preempted_by(const std::string& next_comm);
const std::string* preempted_by_of(Label id);  // the next thread's class; null for other labels

// Symbols the primitives themselves charge to; named as `perf` shows them.
namespace sym {
Label spin_fast();           // _raw_spin_lock
Label spin_slowpath();       // native_queued_spin_lock_slowpath
Label mutex_lock();          // mutex_lock
Label wake();                // try_to_wake_up
Label wake_ipi();            // smp_send_reschedule: a wake-up's IPI to another CPU
Label reschedule_ipi();      // sysvec_reschedule_ipi: that IPI's handler, on the CPU it lands on
Label schedule();            // __schedule
Label migrate();             // a thread's move to another CPU: its count, and its first run's cache misses
Label remote_wakee();        // a thread's first run after a wake from another CPU onto its idle one
Label switch_voluntary();    // a thread left its CPU because it blocked (the kernel's nvcsw)
Label switch_involuntary();  // it was preempted for another thread (nivcsw)
}  // namespace sym

}  // namespace uringsim::sim
