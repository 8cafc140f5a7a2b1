#!/usr/bin/env bash
# Who runs where on the real kernel, event by event: runs `uringsim host ARGS...` with the
# kernel's sched_switch / sched_waking / sched_wakeup tracepoints on (ftrace, through tracefs),
# then bench/sched_trace.py prints, per thread class (client, server, io-wq worker), CPU time
# and slice lengths, switches out per request (blocked or preempted, and by whom), who wakes whom,
# and where the wakee lands (its waker's CPU or another; also while the other CPU was idle), how
# long a waker runs on after a cross-CPU wake-up. A figure, not a test: tracing costs each
# event about a microsecond, so the traced run is slower than an untraced one (the script prints
# both the traced throughput and the trace's own estimate of requests).
# Needs root and tracefs (mounted here if it is not, and unmounted after). Tracing is switched
# off and the events cleared on exit, on error and on a signal.
# With SYSCALLS=1 it also traces the client threads' system calls (raw_syscalls, filtered on the
# thread name) and the softirqs and interrupts on every CPU, and prints how long each call takes on
# the CPU (time switched out excluded), the user-space time between calls, and what the slowest
# tenth of the sends spent in softirqs and interrupts; that tracing slows the client further.
# Usage: bench/sched_trace.sh SCENARIO [uringsim host options...]   (keeps the trace if KEEP=DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tools/uringsim}
. bench/tracefs.sh
traced_run_begin sched_trace
cleanup() {
  [ -n "$tracefs_armed" ] && { echo 0 >"$T/events/raw_syscalls/filter" || true; }
  tracefs_close
  traced_run_end
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# 64 MiB per CPU: a 0.6 s echo run at 20 000 round trips/s logs about 150 000 events (~25 MB).
tracefs_open sched_trace 65536
for e in sched_switch sched_waking sched_wakeup sched_migrate_task; do echo "sched:$e" >>"$T/set_event"; done
if [ "${SYSCALLS:-0}" = 1 ]; then
  echo 'comm ~ "client-*"' >"$T/events/raw_syscalls/filter"
  for e in raw_syscalls:sys_enter raw_syscalls:sys_exit irq:softirq_entry irq:softirq_exit \
    irq_vectors:call_function_single_entry irq_vectors:call_function_single_exit \
    irq_vectors:reschedule_entry irq_vectors:reschedule_exit irq_vectors:local_timer_entry \
    irq_vectors:local_timer_exit; do
    echo "$e" >>"$T/set_event" 2>/dev/null || echo "sched_trace: no event $e here" >&2
  done
fi
echo 1 >"$T/tracing_on"
"$BIN" host "$@" --quiet --out "$OUT/host" >"$OUT/host.log" 2>&1 &
host_pid=$!
wait "$host_pid" || { cat "$OUT/host.log" >&2; host_pid=; exit 1; }
host_pid=
echo 0 >"$T/tracing_on"
cat "$T/trace" >"$OUT/trace.txt"
python3 bench/sched_trace.py "$OUT/trace.txt" "$OUT/host/results.json"
