#pragma once
// What the calibration micro-benchmarks measured, before any arithmetic: every figure in ns, one
// sample per round (a round times many repetitions and keeps their median or mean) unless said
// otherwise. Filled by host/calibrate_*.cpp, turned into cost entries by calibrate_derive.cpp.
#include <string>
#include <vector>

#include "host/stall_probe.hpp"

namespace uringsim::host::calib {

struct Measurements {
  // Syscalls, one thread (calibrate_syscall.cpp).
  std::vector<double> clock_read;       // one clock_gettime(CLOCK_MONOTONIC), subtracted from timed calls
  std::vector<double> null_syscall;     // getppid()
  std::vector<double> futex_wake_none;  // FUTEX_WAKE on a word nobody waits on
  std::vector<double> enter_null;       // io_uring_enter(fd, 0, 0, 0)
  std::vector<double> sched_yield;      // sched_yield() alone on its CPU: a schedule() that picks the caller
  std::vector<int> nop_batches;         // the n of the NOP batch fit
  std::vector<double> nop_a, nop_b;     // per round: io_uring_submit_and_wait of n NOPs = a + b n
  // The host NOP runner's own code (host/app_loop.hpp) around a batch of app_batch NOPs, per item:
  // preparing each SQE, and reaping each CQE (a clock read and a record).
  int app_batch = 32;
  std::vector<double> app_prep, app_reap;
  // The runner's whole loop (NopBatches::run) over batches of n = nop_batches NOPs, less the
  // io_uring_submit_and_wait inside it, per round fitted as R(n) = a + b n: a is its cost per batch.
  std::vector<double> loop_a, loop_b;

  // Locks and cache lines (calibrate_cacheline.cpp).
  std::vector<double> spin_pair, mutex_pair;  // uncontended pthread spin / mutex lock + unlock
  std::vector<double> line_one_way;           // an atomic bounced between two CPUs, per transfer

  // Wake-ups by futex (calibrate_wake.cpp). Cross-CPU ones are empty with one CPU.
  std::vector<double> wake_call_idle;    // the waker's FUTEX_WAKE of a thread asleep on another, idle CPU
  std::vector<double> wake_idle;         // that wake: from the waker's call to the woken thread running
  std::vector<double> wake_busy;         // the same to a CPU where another thread spins
  std::vector<double> wake_call_busy;    // the waker's FUTEX_WAKE there: it preempts the spinner (an IPI)
  std::vector<double> speed_ns_per_add;  // host/speed_probe.hpp at the start of each pass
  // host/stall_probe.hpp, every CPU spinning at once in each pass: the gaps of all, merged
  StallProbe stalls;
  // The waker's FUTEX_WAKE of a SCHED_IDLE thread asleep on a busy CPU: it preempts nothing, so no IPI
  std::vector<double> wake_call_remote;
  std::string wake_remote_unavailable;  // why wake_call_remote is empty, if it is
  // The same idle wake after the target CPU had nothing to do for each of idle_ladder_ns: one
  // median one-way time per rung and round (wake_by_idle[rung]).
  std::vector<double> idle_ladder_ns;
  std::vector<std::vector<double>> wake_by_idle;
  // The woken thread's own CPU time (its CPU clock) across the FUTEX_WAIT that the wake ends, per
  // rung and round (median of the round), and in the same-CPU ping-pong (median per round).
  std::vector<std::vector<double>> wakee_cpu_by_idle;
  std::vector<double> wakee_cpu_same;
  std::vector<double> pingpong_same;   // futex ping-pong on one CPU, per one-way hand-off (round trip / 2)
  std::vector<double> wake_call_same;  // in that ping-pong, the waker's FUTEX_WAKE call
  std::string cross_cpu_unavailable;   // why the cross-CPU benchmarks did not run; "" = they ran

  // Wake-up packing (calibrate_pack.cpp): a waker pinned to one CPU, busy for a share of each
  // cycle, wakes by futex a thread that may run on either CPU, in two cases: the wakee last ran on
  // the other CPU (idle at the wake), or on the waker's (the other CPU idle). Per rung of busy
  // share and case, over all passes: the waker's measured busy share (its busy time over the wall
  // time, one sample per pass) and how many wake-ups landed on the waker's CPU, of how many.
  struct PackRung {
    std::vector<double> other_busy, same_busy;
    int other_on = 0, other_n = 0, same_on = 0, same_n = 0;
  };
  std::vector<PackRung> pack;  // in the order of the asked shares

  // io-wq, submitter and its one worker pinned to one CPU (calibrate_iowq.cpp): per round, NOP
  // batches fitted as T(n) = a + b n, inline and with IOSQE_ASYNC.
  std::vector<double> iowq_inline_a, iowq_inline_b, iowq_async_a, iowq_async_b;
  // The submitter's side alone, per round: io_uring_submit of n IOSQE_ASYNC NOPs queued behind the
  // one bound worker while it is blocked in an fsync, fitted as a + b n; samples in which a CQE
  // was posted during the submit (the worker was not held) are dropped and counted.
  std::vector<double> iowq_queued_a, iowq_queued_b;
  // The same with IOSQE_ASYNC sends of 1 byte on a loopback TCP connection, in the same rounds: a
  // send's prep allocates its async header (io_msg_alloc_async), which io-wq never gives back to
  // the ring's cache, so every one of them misses it.
  std::vector<double> iowq_queued_send_a, iowq_queued_send_b;
  int iowq_queued_dropped = 0, iowq_queued_kept = 0;
  std::string iowq_queued_unavailable;     // why that part did not run or was not usable; "" = it was
  std::vector<double> worker_first_extra;  // per fresh thread: first IOSQE_ASYNC NOP minus a warm one
  std::string iowq_unavailable;

  // TCP over loopback, one thread holding both ends (calibrate_tcp.cpp).
  int tcp_small = 64, tcp_large = 16384;                               // message sizes, bytes
  std::vector<double> send_small, send_large, recv_small, recv_large;  // send() / recv() that finds the data
  std::vector<double> recv_eagain;     // recv(MSG_DONTWAIT) on an empty socket
  std::vector<double> epoll_wait_one;  // epoll_wait(64, timeout 0) with one readable socket
  // 12 B round trips, receivers spinning: both ends on one CPU, and the far end on the other one.
  std::vector<double> tcp_rtt_same, tcp_rtt_cross;
  // 64 B send + recv, one thread, rotated over n loopback connections (calibrate_tcp_many.cpp):
  // per rung n = tcp_many_n[k], one ns-per-pair sample per round in tcp_many_pair[k].
  std::vector<int> tcp_many_n;
  std::vector<std::vector<double>> tcp_many_pair;
  std::string tcp_many_limited;  // why fewer connections than wanted were used, if so

  // Poll on a DEFER_TASKRUN ring, one thread (calibrate_poll.cpp); 64-byte messages.
  std::vector<double> poll_add;         // submit of IORING_OP_POLL_ADD(POLLIN) on an empty socket: armed
  std::vector<double> poll_send_armed;  // send() to that socket: the poll wake queues task_work
  std::vector<double> poll_getevents;   // io_uring_enter(GETEVENTS, 1): the task_work runs, posts the CQE
  std::vector<double> poll_enter_null;  // io_uring_enter(GETEVENTS, 0) with nothing to do
  std::vector<double> poll_send_plain;  // send() to the socket with no poll armed
  std::vector<double> poll_recv_arm;    // submit of a recv on an empty socket (-EAGAIN, async poll armed)
  std::vector<double> poll_data;        // submit_and_wait of a recv that finds data
  std::vector<double> poll_data_fixed;  // the same through a registered file
  std::string poll_unavailable;
  // TWA_SIGNAL's kick (calibrate_kick.cpp): send() to a poll armed by a ring whose task spins in
  // user space on the other CPU, the same send() with nothing armed, and how long the task's spin
  // was interrupted (the IPI, the task_work, the return) and when that began after the send() began,
  // each the median of a round; ns.
  std::vector<double> kick_send, kick_send_plain, kick_away, kick_onset;
  std::string kick_unavailable;
};

}  // namespace uringsim::host::calib
