#!/usr/bin/env python3
"""Who woke whom and who preempted whom in model runs, per request, in the form
bench/sched_trace.py prints for the real kernel: each class's preemptions by the class that ran
next; waker -> wakee, all wake-ups / those that put the wakee on the waker's CPU / on another;
the mean over the results files given (one point's seeds). Thread classes are named as the
trace names them (io_uring_echo_s: server, iou-wrk: worker). Usage:
bench/model_wakeups.py RESULTS.json [RESULTS.json ...]"""
import collections
import json
import sys

CLASS = {"io_uring_echo_s": "server", "iou-wrk": "worker", "client": "client"}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs, preempted = [], []
    for f in sys.argv[1:]:
        r = json.load(open(f))
        w = r.get("wakeups")
        if w is None:
            sys.exit(f"model_wakeups: {f} has no wakeups (results of an older uringsim, or of the host)")
        runs.append(w["per_request"])
        preempted.append(r.get("context_switches", {}).get("involuntary_by_per_request"))
    if None in preempted:  # before the preemptions were counted by class
        print("preemptions per request: not in these results (an older uringsim)")
        preempted = []
    by = collections.defaultdict(float)
    for per in preempted:
        for out, ins in per.items():
            for into, c in ins.items():
                by[(CLASS.get(out, out), CLASS.get(into, into))] += (c or 0.0) / len(preempted)
    if preempted:
        print(f"preemptions per request, mean of {len(preempted)} run(s) (switched out, by the class that ran next):")
    for (a, b), m in sorted(by.items()):
        if m > 0:
            print(f"  {a:<8} preempted by {b:<8} {m:.3f}")
    cells = collections.defaultdict(lambda: collections.defaultdict(list))
    for per in runs:
        for waker, wakees in per.items():
            for wakee, c in wakees.items():
                for k in ("total", "on_waker_cpu", "on_other_cpu"):
                    cells[(CLASS.get(waker, waker), CLASS.get(wakee, wakee))][k].append(c[k] or 0.0)
    print(f"wake-ups per request, mean of {len(runs)} run(s) (waker -> wakee: on the waker's CPU / another):")
    for (a, b), c in sorted(cells.items()):
        # a pair absent from a run counts as 0 there
        m = {k: sum(v) / len(runs) for k, v in c.items()}
        if m["total"] == 0:
            continue
        print(f"  {a:<8} -> {b:<8} {m['total']:.3f}   {m['on_waker_cpu']:.3f} / {m['on_other_cpu']:.3f}")


if __name__ == "__main__":
    main()
