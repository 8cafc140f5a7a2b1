#!/usr/bin/env python3
"""Host runs against the task_work kick probe taken just before each (run_info.kick.before,
host/kick_probe.hpp): per run its kick delivery, the sender's extra time, the CPU speed probe, the
kicks (IPIs) per request and the throughput; then, over the runs whose CPU speed probe was at most
--max-speed ns per add (a slow CPU is another state, see docs/validation.md session 38), the
correlation of IPIs per request with the delivery and the median IPIs and throughput of the runs
below and above --split ns. A figure, not a test.

usage: kick_levels.py [--split NS] [--max-speed NS] RUN_DIR_OR_TWIN_DIR...
  A twin directory stands for its host runs (host/points/*/); filter them with --match TEXT.
"""
import argparse
import glob
import json
import os
import statistics


def runs_of(path, match):
    if os.path.exists(os.path.join(path, "run_info.json")):
        return [path]
    found = sorted(glob.glob(os.path.join(path, "host", "points", "*")))
    return [d for d in found if not match or all(m in os.path.basename(d) for m in match)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--split", type=float, default=9500, help="kick delivery, ns, dividing the runs (default 9500)")
    ap.add_argument("--max-speed", type=float, default=0.45,
                    help="CPU speed probe, ns per add, above which a run counts as slow (default 0.45)")
    ap.add_argument("--match", action="append", default=[], help="keep a twin's runs whose name holds TEXT")
    a = ap.parse_args()
    rows = []
    for d in a.dirs:
        for run in runs_of(d, a.match):
            try:
                info = json.load(open(os.path.join(run, "run_info.json")))
                res = json.load(open(os.path.join(run, "results.json")))
            except FileNotFoundError:
                continue
            kick = (info.get("kick") or {}).get("before")
            if not kick:
                continue
            rows.append((run, kick["delivery_ns"], kick["send_extra_ns"],
                         info["cpu_speed"]["before"]["ns_per_add"], res["per_request"]["ipis"],
                         res["throughput"]["ops_per_s"]))
    if not rows:
        raise SystemExit("kick_levels: no host run with a kick probe (run_info.kick.before) in " + " ".join(a.dirs))
    print("run | kick delivery ns | sender extra ns | CPU speed ns/add | IPIs/request | round trips/s")
    for r in sorted(rows, key=lambda r: r[1]):
        print("%s | %.0f | %.0f | %.3f | %.2f | %.0f" % (os.path.relpath(r[0]), *r[1:]))
    ok = [r for r in rows if r[3] <= a.max_speed]
    print("runs: %d, with the CPU speed probe at most %.2f ns per add: %d" % (len(rows), a.max_speed, len(ok)))
    if len(ok) >= 3:
        try:
            r = statistics.correlation([x[1] for x in ok], [x[4] for x in ok])
        except statistics.StatisticsError:
            r = float("nan")
        print("correlation of IPIs per request with the kick delivery: r = %.2f" % r)
    for label, part in (("below", [x for x in ok if x[1] < a.split]), ("at or above", [x for x in ok if x[1] >= a.split])):
        if part:
            print("delivery %s %.0f ns: %d runs, IPIs per request median %.2f (%.2f-%.2f), round trips/s median %.0f" % (
                label, a.split, len(part), statistics.median(x[4] for x in part), min(x[4] for x in part),
                max(x[4] for x in part), statistics.median(x[5] for x in part)))


if __name__ == "__main__":
    main()
