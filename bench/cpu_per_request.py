#!/usr/bin/env python3
"""Where a point's CPU goes, per thread class, for host or model results alike: CPU time per
request (the class's CPU share over the throughput), time waiting for a CPU per request
(run_delay_us_by_class, schedstat's run delay on the host), and the runnable fraction they add up
to (the average number of the class's threads running or waiting, which PELT's runnable load
follows and wake_affine_weight and the busy balance compare), with each class's IPIs per request
for the whole point. Means over the results files given (one point's seeds or repetitions).
Usage: bench/cpu_per_request.py RESULTS.json [RESULTS.json ...]"""
import collections
import json
import sys

from model_wakeups import CLASS  # results' thread classes, as the trace scripts name them


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    tput, ipis = [], []
    for f in sys.argv[1:]:
        try:
            r = json.load(open(f))
            ops = r["throughput"]["ops_per_s"]
            cpu = r["cpu"]["by_thread"]
            delay = r["per_request"]["run_delay_us_by_class"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"cpu_per_request: {f}: not a results file with throughput, cpu.by_thread and "
                     f"per_request.run_delay_us_by_class ({e})")
        if not ops:
            sys.exit(f"cpu_per_request: {f}: no throughput")
        tput.append(ops)
        ipis.append(r["per_request"].get("ipis") or 0.0)
        for cls, d in delay.items():
            pct = cpu.get(f"{cls}_pct")
            if pct is None or d is None:
                continue
            cpu_us = pct / 100 / ops * 1e6
            rows[cls]["cpu"].append(cpu_us)
            rows[cls]["delay"].append(d)
            rows[cls]["runnable"].append((cpu_us + d) * ops / 1e6)
    mean = lambda v: sum(v) / len(v)
    print(f"{len(tput)} run(s): {mean(tput):.0f} requests/s, {mean(ipis):.3f} IPIs per request")
    print(f"{'class':<8} {'CPU us/req':>10} {'wait us/req':>11} {'runnable':>9}")
    for cls, v in sorted(rows.items(), key=lambda kv: CLASS.get(kv[0], kv[0])):
        print(f"{CLASS.get(cls, cls):<8} {mean(v['cpu']):>10.2f} {mean(v['delay']):>11.2f} {mean(v['runnable']):>9.2f}")


if __name__ == "__main__":
    main()
