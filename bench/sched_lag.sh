#!/usr/bin/env bash
# EEVDF's view of the echo's threads on the real kernel: runs `uringsim host ARGS...` under
# bench/sched_lag.bt (bpftrace on the sched_switch and sched_wakeup tracepoints, reading the
# kernel's run queues through BTF), then bench/sched_lag.py prints, per request: each switch by
# (class, blocked / preempted, next class, left delayed or with which lag), each wake-up by
# whether the running thread was still eligible, the wakee's lag, and whether it was told to
# reschedule, and what it did next. A figure, not a test: each traced event costs a fraction of a
# microsecond. Needs root, bpftrace (Debian 12: `apt-get install bpftrace`) and tracefs (mounted
# here if it is not, and unmounted after); bpftrace is stopped on exit, on error and on a signal.
# Usage: bench/sched_lag.sh SCENARIO [uringsim host options...]   (keeps the trace if KEEP=DIR;
#        SEQUENCE=N also prints N events from the middle of the run, in time order)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tools/uringsim}
. bench/tracefs.sh
traced_run_begin sched_lag
command -v bpftrace >/dev/null || { echo "sched_lag: needs bpftrace (apt-get install bpftrace)" >&2; exit 2; }
bt_pid=
# SIGINT makes bpftrace print its maps and exit; SIGTERM if it has not within a minute.
stop_bpftrace() {
  [ -n "$bt_pid" ] || return 0
  kill -INT "$bt_pid" 2>/dev/null || true
  for _ in $(seq 600); do kill -0 "$bt_pid" 2>/dev/null || break; sleep 0.1; done
  kill -TERM "$bt_pid" 2>/dev/null || true
  wait "$bt_pid" 2>/dev/null || true
  bt_pid=
}
cleanup() {
  stop_bpftrace
  tracefs_close
  traced_run_end
}
trap cleanup EXIT
trap 'exit 130' INT TERM
tracefs_open sched_lag 64  # bpftrace needs the tracepoints' ids; ftrace's own buffer stays unused
# Up to 1 M events in each map (about 100 bytes each). bpftrace sets up for a few seconds, much of
# it in the kernel on one CPU: the run starts once sched_lag.bt's interval probe has printed
# "ready" (every probe attached, its SIGINT handler in place), and waits for a quiet CPU if given
# --wait-quiet.
BPFTRACE_MAP_KEYS_MAX=1000000 bpftrace -B line bench/sched_lag.bt >"$OUT/trace.txt" 2>"$OUT/bpftrace.log" &
bt_pid=$!
for _ in $(seq 300); do grep -q '^ready' "$OUT/trace.txt" && break; sleep 0.1; done
grep -q '^ready' "$OUT/trace.txt" || { echo "sched_lag: bpftrace did not start" >&2; cat "$OUT/bpftrace.log" >&2; exit 1; }
"$BIN" host "$@" --quiet --out "$OUT/host" >"$OUT/host.log" 2>&1 &
host_pid=$!
wait "$host_pid" || { cat "$OUT/host.log" >&2; exit 1; }
host_pid=
stop_bpftrace
python3 bench/sched_lag.py "$OUT/trace.txt" "$OUT/host/results.json" ${SEQUENCE:+--sequence "$SEQUENCE"}
