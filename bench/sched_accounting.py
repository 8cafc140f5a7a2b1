#!/usr/bin/env python3
"""What the kernel accounts to each thread against the time it ran, from a scheduler trace.

Input: `perf script -F comm,tid,cpu,time,event,trace` of `perf sched record` (sched_switch,
sched_waking, sched_stat_runtime) around a host run. Prints, per thread of the given names,
the sum of sched_stat_runtime (what sum_exec_runtime, and so /proc and the twin's host side,
count) and the sum of its sched_switch intervals (the time it was on a CPU); then, for wake-ups
of THREAD that preempted the thread running on its CPU, the delay from sched_waking to the
switch, split by whether the waker ran on the same CPU (docs/validation.md, session 18).

usage: sched_accounting.py TRACE.txt THREAD [PREEMPTED_PREFIX]
"""
import collections
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+): (.*)$")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, thread = sys.argv[1], sys.argv[2]
    preempted = sys.argv[3] if len(sys.argv) > 3 else "iou-wrk"
    accounted = collections.Counter()  # ns, from sched_stat_runtime
    ran = collections.Counter()  # s, from sched_switch intervals
    on_cpu = {}  # cpu -> (comm, since)
    pending = None  # (date, waker cpu) of the last wake-up of `thread`
    delays = {"remote": [], "local": []}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = LINE.match(line)
            if not m:
                continue
            cpu, t, event, rest = m.group(3), float(m.group(4)), m.group(5), m.group(6)
            if event == "sched_stat_runtime":
                r = re.search(r"comm=(\S+) pid=\d+ runtime=(\d+)", rest)
                if r:
                    accounted[r.group(1)] += int(r.group(2))
            elif event == "sched_waking":
                if f"comm={thread} " in rest:
                    pending = (t, cpu)
            elif event == "sched_switch":
                r = re.search(r"prev_comm=(.*?) prev_pid=\d+ .*prev_state=(\S+) ==> next_comm=(.*?) next_pid", rest)
                if not r:
                    sys.exit(f"{path}:{n}: a sched_switch line without prev_comm/prev_state/next_comm")
                prev, state, nxt = r.group(1), r.group(2), r.group(3)
                if cpu in on_cpu and on_cpu[cpu][0] == prev:
                    ran[prev] += t - on_cpu[cpu][1]
                on_cpu[cpu] = (nxt, t)
                if nxt == thread and pending:
                    if prev.startswith(preempted) and state.startswith("R"):
                        delays["local" if pending[1] == cpu else "remote"].append((t - pending[0]) * 1e6)
                    pending = None
    names = sorted({c for c in accounted if c == thread or c.startswith(preempted)} | {thread})
    print("thread                accounted (sched_stat_runtime)   ran (sched_switch intervals)")
    for c in names:
        print(f"{c:20s}  {accounted[c] / 1e6:10.1f} ms                  {ran[c] * 1e3:10.1f} ms")
    for kind, xs in delays.items():
        if not xs:
            continue
        xs.sort()
        print(f"{kind} wake-ups of {thread} that preempted {preempted}*: {len(xs)}, wake-up to switch "
              f"median {statistics.median(xs):.1f} us, p10 {xs[len(xs) // 10]:.1f}, "
              f"p90 {xs[9 * len(xs) // 10]:.1f}")


if __name__ == "__main__":
    main()
