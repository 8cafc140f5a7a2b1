#!/usr/bin/env bash
# Who sends the real kernel's IPIs, and from where: runs `uringsim host ARGS...` with the
# ipi:ipi_send_cpu and ipi:ipi_send_cpumask tracepoints on (ftrace, through tracefs), then counts
# the IPIs by sending thread class, source -> target CPU and kernel call site (task_work_add: a
# TWA_SIGNAL kick; wakeup_preempt: a wake-up that preempts; ttwu_queue_wakelist: a wake-up queued
# on an idle or cache-remote CPU's list). The count covers the whole run (warm-up included); the
# run's own results say how many requests its window had. It also prints how long a task_work
# kick took to arrive: from the sender's ipi_send_cpu to the next reschedule_entry on the target
# CPU (irq_vectors), at the trace clock's 1 us resolution. A figure, not a test.
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
echo irq_vectors:reschedule_entry >>"$T/set_event"
echo 1 >"$T/tracing_on"
"$BIN" host "$@" --quiet --out "$OUT/host"
echo 0 >"$T/tracing_on"
cat "$T/trace" >"$OUT/trace"
python3 - "$OUT/host/results.json" "$OUT/trace" <<'EOF'
import collections, json, re, sys
r = json.load(open(sys.argv[1]))
print(f"host run: {r['throughput']['ops_per_s']:.0f} round trips/s, {r['requests']['completed']} requests in "
      f"the window, {r['per_request']['ipis']} IPIs per request there ({r['per_request_totals'].get('ipis_by_kind')})")
line = re.compile(r"\s*(.+?)-\d+\s+\[(\d+)\]\s+\S+\s+([\d.]+): ipi_send_cpu(?:mask)?: (?:cpu=(\d+)|cpumask=(\S+)) callsite=([^+ ]+)")
entry = re.compile(r"\s*.+?-\d+\s+\[(\d+)\]\s+\S+\s+([\d.]+): reschedule_entry:")
counts = collections.Counter()
kick_sent = {}  # target CPU -> date of its oldest task_work kick not yet arrived
arrival_us = []
for l in open(sys.argv[2]):
    e = entry.match(l)
    if e:
        sent = kick_sent.pop(int(e.group(1)), None)
        if sent is not None:
            arrival_us.append((float(e.group(2)) - sent) * 1e6)
        continue
    m = line.match(l)
    if not m:
        continue
    if m.group(4) is not None and m.group(6) == "task_work_add":
        kick_sent.setdefault(int(m.group(4)), float(m.group(3)))
    comm = re.sub(r"[-/]?\d+(:\d+)?$", "", m.group(1))  # iou-wrk-123 -> iou-wrk, kworker/0:1 -> kworker
    target = m.group(4) if m.group(4) is not None else m.group(5)
    counts[(comm, f"{int(m.group(2))}->{target}", m.group(6))] += 1
print("IPIs over the whole run, by sender, CPUs and call site:")
for (comm, cpus, site), n in counts.most_common(15):
    print(f"  {n:8d}  {comm:16s} {cpus:8s} {site}")
if arrival_us:
    a = sorted(arrival_us)
    q = lambda f: a[min(len(a) - 1, int(f * len(a)))]
    print(f"task_work kicks, sender's ipi_send_cpu to the target's reschedule_entry: {len(a)} kicks, "
          f"p10 {q(0.1):.0f} us, p50 {q(0.5):.0f} us, p90 {q(0.9):.0f} us")
EOF
