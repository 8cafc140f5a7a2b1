#!/usr/bin/env python3
"""Why each thread class left its CPU, host against model, at every point of a twin run: the
mean over the reps of `context_switches.{voluntary,involuntary}_per_request` (blocked, or
preempted) for the server, the io-wq workers and the client, as "host / model". Usage:
bench/twin_switches.py OUT_DIR   (a `uringsim twin` output directory, with host/ and sim/)"""
import collections
import glob
import json
import math
import os
import re
import statistics
import sys

COLUMNS = [
    ("server, blocked", "voluntary_per_request", "io_uring_echo_s"),
    ("worker, preempted", "involuntary_per_request", "iou-wrk"),
    ("worker, blocked", "voluntary_per_request", "iou-wrk"),
    ("client, blocked", "voluntary_per_request", "client"),
    ("client, preempted", "involuntary_per_request", "client"),
]


def load(half_dir):
    points = collections.defaultdict(list)
    for f in glob.glob(os.path.join(half_dir, "points", "*", "results.json")):
        key = re.sub(r",?rep=\d+", "", os.path.basename(os.path.dirname(f)))
        cs = json.load(open(f)).get("context_switches")
        if cs:
            points[key].append(cs)
    return points


def mean(runs, kind, cls):
    values = [r[kind][cls] for r in runs if r.get(kind, {}).get(cls) is not None]
    return statistics.mean(values) if values else math.nan


def order(key):
    n = re.search(r"connections=(\d+)", key)
    return (key.split("variant=")[-1], int(n.group(1)) if n else 0, key)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    host, sim = (load(os.path.join(sys.argv[1], half)) for half in ("host", "sim"))
    print("| point | " + " | ".join(c[0] for c in COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for key in sorted(set(host) & set(sim), key=order):
        cells = []
        for _, kind, cls in COLUMNS:
            h, s = mean(host[key], kind, cls), mean(sim[key], kind, cls)
            cells.append("–" if math.isnan(h) and math.isnan(s) else "%.2f / %.2f" % (h, s))
        print("| %s | %s |" % (key, " | ".join(cells)))


if __name__ == "__main__":
    main()
