#!/usr/bin/env python3
"""Who woke whom in model runs, per request, in the form bench/sched_trace.py prints for the real
kernel: waker -> wakee, all wake-ups / those that put the wakee on the waker's CPU / on another,
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
    runs = []
    for f in sys.argv[1:]:
        w = json.load(open(f)).get("wakeups")
        if w is None:
            sys.exit(f"model_wakeups: {f} has no wakeups (results of an older uringsim, or of the host)")
        runs.append(w["per_request"])
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
