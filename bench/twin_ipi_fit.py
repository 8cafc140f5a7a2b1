#!/usr/bin/env python3
"""Time per round trip against IPIs per request over a twin's host runs: the least-squares line
us/round trip = a + b x IPIs/request (`per_request.ipis`, `throughput.ops_per_s`) over every host
rep of one variant at the given connection counts, in one or more `uringsim twin` outputs, with
its correlation; then, for each model results.json given after --model, the model's time per
round trip beside the line's at the model's IPIs per request. A figure, not a test. Usage:
  bench/twin_ipi_fit.py --variant inline --connections 10,100,1000 TWIN.json... [--model RESULTS.json...]"""
import argparse
import json
import statistics


def host_points(twin_files, variant, connections):
    xs, ys = [], []
    for path in twin_files:
        with open(path) as f:
            twin = json.load(f)
        for row in twin["rows"]:
            grid = row["grid"]
            if grid.get("variant", row.get("variant")) != variant:
                continue
            if grid.get("workload.connections") not in connections:
                continue
            m = row["metrics"]
            xs += m["per_request.ipis"]["host"]["values"]
            ys += [1e6 / t for t in m["throughput.ops_per_s"]["host"]["values"]]
    return xs, ys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("twin", nargs="+", help="twin.json files")
    ap.add_argument("--variant", required=True)
    ap.add_argument("--connections", required=True, help="comma-separated connection counts")
    ap.add_argument("--model", nargs="*", default=[], help="model results.json files")
    a = ap.parse_args()
    xs, ys = host_points(a.twin, a.variant, {int(c) for c in a.connections.split(",")})
    if len(xs) < 3:
        raise SystemExit(f"twin_ipi_fit: {len(xs)} host runs of {a.variant} at those points; need 3")
    slope, intercept = statistics.linear_regression(xs, ys)
    print(f"{len(xs)} host runs: us per round trip = {intercept:.2f} + {slope:.2f} x IPIs per request, "
          f"r = {statistics.correlation(xs, ys):.2f}; IPIs per request {min(xs):.2f} to {max(xs):.2f}")
    for path in a.model:
        with open(path) as f:
            r = json.load(f)
        ipis, us = r["per_request"]["ipis"], 1e6 / r["throughput"]["ops_per_s"]
        line = intercept + slope * ipis
        print(f"{path}: {ipis:.3f} IPIs per request, {us:.2f} us per round trip; the line there "
              f"{line:.2f} ({(us / line - 1) * 100:+.1f} %)")


if __name__ == "__main__":
    main()
