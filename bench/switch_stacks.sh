#!/usr/bin/env bash
# Where in the kernel the echo's server and io-wq workers leave their CPU: runs `uringsim host
# ARGS...` with the sched_switch tracepoint on for those threads and a stacktrace trigger on it
# (ftrace, through tracefs), then bench/switch_stacks.py prints, per request, each switch by
# (thread class, blocked S or preempted R, the class that ran next, the kernel call chain):
# a worker preempted at the cond_resched() before an item (io_worker_handle_work) or in the
# schedule_timeout() after handled work (io_wq_worker), the server in io_cqring_wait or between
# task_work items (io_handle_tw_list). A figure, not a test: the stack traces cost each switch a
# few microseconds. Needs root and tracefs (mounted if it is not, and unmounted after); the
# trigger, filter and events are removed on exit, on error and on a signal.
# Usage: bench/switch_stacks.sh SCENARIO [uringsim host options...]   (keeps the trace if KEEP=DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tools/uringsim}
. bench/tracefs.sh
traced_run_begin switch_stacks
EV=sched/sched_switch
COND='prev_comm ~ "iou-wrk*" || prev_comm ~ "io_uring_echo*"'
cleanup() {
  if [ -n "$tracefs_armed" ]; then
    echo "!stacktrace if $COND" >"$T/events/$EV/trigger" 2>/dev/null || true
    echo 0 >"$T/events/$EV/filter" || true
  fi
  tracefs_close
  traced_run_end
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# 64 MiB per CPU: each switch logs about ten lines of stack.
tracefs_open switch_stacks 65536
echo "$COND" >"$T/events/$EV/filter"
echo "stacktrace if $COND" >"$T/events/$EV/trigger"
echo "sched:sched_switch" >>"$T/set_event"
"$BIN" host "$@" --quiet --out "$OUT/host" >"$OUT/host.log" 2>&1 &
host_pid=$!
echo 1 >"$T/tracing_on"
wait "$host_pid" || { cat "$OUT/host.log" >&2; exit 1; }
host_pid=
echo 0 >"$T/tracing_on"
cp "$T/trace" "$OUT/trace.txt"
python3 bench/switch_stacks.py "$OUT/trace.txt" "$OUT/host/results.json"
