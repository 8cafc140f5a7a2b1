#!/usr/bin/env bash
# Where the real kernel puts the echo's threads, and how long they wait for a CPU, millisecond by
# millisecond: runs `uringsim host ARGS...` with bench/placement_sampler.c reading its threads'
# /proc schedstat and last CPU every 1 ms, then prints, per thread class, the run delay, CPU time
# and slices per millisecond, the milliseconds with 0.5 ms or more of waiting (with at most one
# slice: one long wait, longer than sysctl_sched_migration_cost), and how often the client shared
# its CPU with the server or the worker. A figure, not a test; the sampler is a process of its
# own that wakes 1 000 times a second on the same CPUs, so it disturbs what it measures a little.
# Usage: bench/placement.sh SCENARIO [uringsim host options...]   (writes to a temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tools/uringsim}
OUT=$(mktemp -d)
host_pid=
cleanup() {
  [ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null || true
  rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
gcc -O2 -o "$OUT/sampler" bench/placement_sampler.c
"$BIN" host "$@" --quiet --out "$OUT/host" >"$OUT/host.log" 2>&1 &
host_pid=$!
"$OUT/sampler" "$host_pid" "$OUT/samples.csv"
wait "$host_pid" || { cat "$OUT/host.log" >&2; exit 1; }
host_pid=
python3 - "$OUT/samples.csv" "$OUT/host/results.json" <<'PY'
import collections, csv, json, sys
classes = collections.defaultdict(list)
for row in csv.reader(open(sys.argv[1])):
    if len(row) != 7:
        continue
    t, tid, comm, exec_ns, delay_ns, slices, cpu = row
    cls = "server" if comm.startswith("io_uring") else "worker" if comm.startswith("iou-wrk") else "client"
    classes[(cls, tid)].append((float(t), int(exec_ns), int(delay_ns), int(slices), int(cpu)))
r = json.load(open(sys.argv[2]))
print(f"throughput {r['throughput']['ops_per_s']:.0f} round trips/s")
print(f"{'thread':<16} {'ms':>5} {'delay us/ms':>12} {'cpu us/ms':>10} {'slices/ms':>10} {'ms >= 0.5 ms wait':>18} {'... in <= 1 slice':>18}")
by_class = {}
for (cls, tid), v in sorted(classes.items()):
    d = [(b[2] - a[2], b[3] - a[3], b[1] - a[1]) for a, b in zip(v, v[1:]) if b[1] > a[1] or b[2] > a[2]]
    if not d:
        continue
    long_waits = [x for x in d if x[0] >= 500_000]
    print(f"{cls + ' ' + tid:<16} {len(d):>5} {sum(x[0] for x in d) / len(d) / 1e3:>12.0f} "
          f"{sum(x[2] for x in d) / len(d) / 1e3:>10.0f} {sum(x[1] for x in d) / len(d):>10.1f} "
          f"{len(long_waits):>18} {sum(1 for x in long_waits if x[1] <= 1):>18}")
    by_class.setdefault(cls, {})
    for s in v:
        by_class[cls].setdefault(round(s[0], 3), s)
# Placement: at each sample where the client, the server and one worker all ran in the window.
together = collections.Counter()
if {"client", "server", "worker"} <= by_class.keys():
    for t, c in by_class["client"].items():
        s, w = by_class["server"].get(t), by_class["worker"].get(t)
        if not s or not w:
            continue
        cpu = c[4]
        together["client with server" if cpu == s[4] else "client with worker" if cpu == w[4] else "client alone"] += 1
n = sum(together.values())
print("client's CPU (last CPU, per sample): " + ", ".join(f"{k} {v} ({100 * v / n:.0f} %)" for k, v in together.most_common()))
PY
