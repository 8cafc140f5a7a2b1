#!/usr/bin/env bash
# Who sends the real kernel's IPIs, and from where: runs `uringsim host ARGS...` with the
# ipi:ipi_send_cpu and ipi:ipi_send_cpumask tracepoints on (ftrace, through tracefs), then counts
# the IPIs by sending thread class, source -> target CPU and kernel call site (task_work_add: a
# TWA_SIGNAL kick; wakeup_preempt: a wake-up that preempts; ttwu_queue_wakelist: a wake-up queued
# on an idle or cache-remote CPU's list). The count covers the whole run (warm-up included); the
# run's own results say how many requests its window had. A figure, not a test.
# Needs root and tracefs (mounted here if it is not, and unmounted after). Tracing is switched off
# and the events cleared on exit, on error and on a signal.
# Usage: bench/ipi_trace.sh SCENARIO [uringsim host options...]   (keeps the trace if KEEP=DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tools/uringsim}
. bench/tracefs.sh
traced_run_begin ipi_trace
cleanup() {
  tracefs_close
  traced_run_end
}
trap cleanup EXIT
trap 'exit 130' INT TERM
tracefs_open ipi_trace 16384
echo ipi:ipi_send_cpu >>"$T/set_event"
echo ipi:ipi_send_cpumask >>"$T/set_event"
echo 1 >"$T/tracing_on"
"$BIN" host "$@" --quiet --out "$OUT/host"
echo 0 >"$T/tracing_on"
cat "$T/trace" >"$OUT/trace"
python3 - "$OUT/host/results.json" "$OUT/trace" <<'EOF'
import collections, json, re, sys
r = json.load(open(sys.argv[1]))
print(f"host run: {r['throughput']['ops_per_s']:.0f} round trips/s, {r['requests']['completed']} requests in "
      f"the window, {r['per_request']['ipis']} IPIs per request there ({r['per_request_totals'].get('ipis_by_kind')})")
line = re.compile(r"\s*(.+?)-\d+\s+\[(\d+)\]\s+\S+\s+[\d.]+: ipi_send_cpu(?:mask)?: (?:cpu=(\d+)|cpumask=(\S+)) callsite=([^+ ]+)")
counts = collections.Counter()
for l in open(sys.argv[2]):
    m = line.match(l)
    if not m:
        continue
    comm = re.sub(r"[-/]?\d+(:\d+)?$", "", m.group(1))  # iou-wrk-123 -> iou-wrk, kworker/0:1 -> kworker
    target = m.group(3) if m.group(3) is not None else m.group(4)
    counts[(comm, f"{int(m.group(2))}->{target}", m.group(5))] += 1
print("IPIs over the whole run, by sender, CPUs and call site:")
for (comm, cpus, site), n in counts.most_common(15):
    print(f"  {n:8d}  {comm:16s} {cpus:8s} {site}")
EOF
