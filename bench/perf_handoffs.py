#!/usr/bin/env python3
"""How a host echo's io-wq worker hands CPU 0 to the server, from a `perf script` text dump.

Record (root, tracefs mounted) and dump:
  perf record -a -e sched:sched_switch -e io_uring:io_uring_complete -o P.data -- \\
      build/tools/uringsim host scenarios/twin/echo-pinned.json --variant async-1 \\
      --set workload.connections=100 --quiet --out DIR
  perf script -i P.data -F cpu,comm,time,event,trace > P.txt
  bench/perf_handoffs.py P.txt [CPU]

Prints the worker-to-server hand-offs on CPU (default 0), how many CQEs the worker posted
before each, and the batches (hand-offs after more than one CQE): their median size and span,
the share of all CQEs they carry, and the state the worker left the CPU in (R+: preempted;
R: it called schedule() itself; S: it slept).
"""
import collections
import re
import statistics
import sys

SWITCH = re.compile(r"\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch: prev_comm=(\S+) .*prev_state=(\S+) ==> next_comm=(\S+)")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    cpu = f"{int(sys.argv[2]) if len(sys.argv) == 3 else 0:03d}"
    per_handoff, batches, ended = [], [], collections.Counter()
    posted, started, total = 0, None, 0
    with open(sys.argv[1]) as f:
        for line in f:
            if "io_uring:io_uring_complete" in line and line.lstrip().startswith("iou-wrk"):
                posted += 1
                total += 1
                continue
            m = SWITCH.search(line)
            if not m or m.group(1) != cpu:
                continue
            t, prev, state, nxt = float(m.group(2)), m.group(3), m.group(4), m.group(5)
            if prev.startswith("iou-wrk"):
                if nxt.startswith("io_uring_echo"):
                    per_handoff.append(posted)
                    if posted > 1 and started is not None:
                        batches.append((posted, (t - started) * 1e6))
                        ended[state] += 1
                posted = 0
            if nxt.startswith("iou-wrk"):
                started = t
    if not per_handoff:
        sys.exit(f"{sys.argv[1]}: no hand-off from an iou-wrk thread to the server on CPU {cpu}")
    one = sum(1 for n in per_handoff if n == 1)
    print(f"hand-offs from the worker to the server: {len(per_handoff)}, after exactly one CQE: {one}")
    print(f"CQEs posted by workers: {total}")
    if batches:
        in_batches = sum(n for n, _ in batches)
        print(f"batches (more than one CQE): {len(batches)}, median {statistics.median(n for n, _ in batches):g} CQEs "
              f"in {statistics.median(us for _, us in batches):.0f} us, carrying {in_batches} CQEs "
              f"({100.0 * in_batches / total:.0f} %)")
        print("batches ended with the worker's state: " + ", ".join(f"{s} {n}" for s, n in ended.most_common()))


if __name__ == "__main__":
    main()
