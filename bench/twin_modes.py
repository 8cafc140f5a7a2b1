#!/usr/bin/env python3
"""Modes of a twin's throughput over time, host against model. A point whose threads can settle in
two layouts (which thread shares a CPU with which) runs in phases, and the twin's per-run mean is
a mixture whose weight the mean alone does not show. For each variant and grid point this pools
the 10 ms samples of every rep's `timeseries.throughput_ops_per_s` (the first and last interval of
each run left out: warm-up edge, partial interval) and splits them in two at the threshold that
leaves the least variance within each side (Otsu's method on the sorted samples). The point is
called two-mode when both sides hold at least 10 % of the samples and their means differ by more
than 25 % of the higher one; then it prints both means, the share of time in the high mode and the
switches between modes per second of run.

With --runs it then lists every host run of a two-mode point: its time in the point's high mode,
its IPIs and context switches per request, and the machine probes taken around it (CPU speed before
and after, the idle vCPU's one-way wake-up before), so that a phase the machine caused (a probe far
from the others) can be told from a layout the threads settled in (the per-request counts move, the
probes do not). Usage: bench/twin_modes.py [--runs] OUT_DIR/twin.json"""
import json
import os
import statistics
import sys


def point_dirs(half_dir, variant, grid):
    """The run directories of one variant at one grid point, in rep order, found through the half's
    sweep_spec.json (each point's id is its directory under points/)."""
    spec = json.load(open(os.path.join(half_dir, "sweep_spec.json")))
    want = {k: str(v) for k, v in grid.items()}  # the spec holds the grid's values as given
    return [os.path.join(half_dir, "points", p["id"]) for p in spec["points"]
            if p["variant"] == variant and p["grid"] == want]


def samples_of(results):
    """A run's 10 ms throughput samples without its first and last interval, and the interval."""
    ts = results.get("timeseries") or {}
    samples = ts.get("throughput_ops_per_s") or []
    return (samples[1:-1], ts.get("interval_ms")) if len(samples) > 2 else None


def load_runs(half_dir, variant, grid):
    """The samples of each rep of one variant at one grid point."""
    runs = []
    for d in point_dirs(half_dir, variant, grid):
        s = samples_of(json.load(open(os.path.join(d, "results.json"))))
        if s:
            runs.append(s)
    return runs


def split(samples):
    """Otsu's threshold on 1-D samples: (low side, high side) with the least within-side variance."""
    xs = sorted(samples)
    best, cut = None, 1
    for i in range(1, len(xs)):
        lo, hi = xs[:i], xs[i:]
        w = len(lo) * statistics.pvariance(lo) + len(hi) * statistics.pvariance(hi)
        if best is None or w < best:
            best, cut = w, i
    return xs[cut - 1], xs[:cut], xs[cut:]


def modes(runs):
    pooled = [x for samples, _ in runs for x in samples]
    if len(pooled) < 4:
        return None
    threshold, lo, hi = split(pooled)
    m_lo, m_hi = statistics.mean(lo), statistics.mean(hi)
    two = min(len(lo), len(hi)) >= 0.1 * len(pooled) and m_hi - m_lo > 0.25 * m_hi
    seconds = sum(len(s) * iv / 1000.0 for s, iv in runs)
    switches = sum(sum(1 for a, b in zip(s, s[1:]) if (a > threshold) != (b > threshold)) for s, _ in runs)
    return {
        "threshold": threshold,
        "mean": statistics.mean(pooled),
        "two": two,
        "low": m_lo,
        "high": m_hi,
        "high_share": len(hi) / len(pooled),
        "switches_per_s": switches / seconds if seconds else 0.0,
    }


def fmt(m):
    if m is None:
        return ["-"] * 4
    if not m["two"]:
        return ["%.3g" % m["mean"], "one mode", "-", "-"]
    return ["%.3g" % m["mean"], "%.3g / %.3g" % (m["low"], m["high"]), "%.0f %%" % (100 * m["high_share"]),
            "%.0f" % m["switches_per_s"]]


def run_rows(host_dir, variant, grid, threshold):
    """One row per host run of a point: its share above the point's threshold, per-request counts
    and the probes of its run_info.json (absent ones shown as -)."""
    rows = []
    for d in point_dirs(host_dir, variant, grid):
        r = json.load(open(os.path.join(d, "results.json")))
        info = json.load(open(os.path.join(d, "run_info.json")))
        s = samples_of(r)
        high = "%.0f %%" % (100.0 * sum(x > threshold for x in s[0]) / len(s[0])) if s else "-"
        pr = r.get("per_request") or {}
        speed = info.get("cpu_speed") or {}
        wake = (info.get("idle_wake") or {}).get("before") or {}

        def num(v, f):
            return f % v if isinstance(v, (int, float)) else "-"

        rows.append([os.path.basename(d).rsplit("rep=", 1)[-1], "%.3g" % r["throughput"]["ops_per_s"], high,
                     num(pr.get("ipis"), "%.2f"), num(pr.get("context_switches"), "%.2f"),
                     num((speed.get("before") or {}).get("ns_per_add"), "%.3f"),
                     num((speed.get("after") or {}).get("ns_per_add"), "%.3f"),
                     num(wake.get("one_way_ns"), "%.0f"), num(wake.get("max_ns"), "%.0f")])
    return rows


def print_runs(host_dir, two_mode_points):
    print()
    print("| variant | point | rep | round trips/s | time high | IPIs/req | switches/req "
          "| speed before, ns/add | after | idle wake-up, ns | its max |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for variant, grid, point, threshold in two_mode_points:
        for row in run_rows(host_dir, variant, grid, threshold):
            print("| " + " | ".join([variant, point] + row) + " |")


def main():
    args = sys.argv[1:]
    runs = "--runs" in args
    args = [a for a in args if a != "--runs"]
    if len(args) != 1:
        sys.exit("usage: bench/twin_modes.py [--runs] OUT_DIR/twin.json")
    twin_path = args[0]
    base = os.path.dirname(twin_path)
    t = json.load(open(twin_path))
    host_dir = os.path.join(base, t["host_dir"])
    sim_dir = os.path.join(base, t["sim_dir"])
    print("| variant | point | host mean | host modes (low / high) | host time high | host switches/s "
          "| model mean | model modes | model time high | model switches/s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    two_host = two_sim = both = 0
    two_mode_points = []
    for r in t["rows"]:
        grid = r["grid"]
        point = ",".join("%s=%s" % (k.split(".")[-1], v) for k, v in grid.items())
        h = modes(load_runs(host_dir, r["variant"], grid))
        s = modes(load_runs(sim_dir, r["variant"], grid))
        if h and h["two"]:
            two_mode_points.append((r["variant"], grid, point, h["threshold"]))
        two_host += bool(h and h["two"])
        two_sim += bool(s and s["two"])
        both += bool(h and h["two"] and s and s["two"])
        print("| " + " | ".join([r["variant"], point] + fmt(h) + fmt(s)) + " |")
    print()
    print("points with two modes: host %d, model %d, both %d, of %d" % (two_host, two_sim, both, len(t["rows"])))
    if runs:
        print_runs(host_dir, two_mode_points)


if __name__ == "__main__":
    main()
