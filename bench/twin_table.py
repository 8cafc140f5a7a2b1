#!/usr/bin/env python3
"""A twin.json as a markdown table (throughput, p50, per-request context switches and IPIs), and
per grid point the orderings of the variants the host separates clearly (> 15 %, intervals apart)
with whether the model keeps them, and the summary's error figures (CPU in points). Usage:
bench/twin_table.py OUT_DIR/twin.json"""
import glob
import itertools
import json
import os
import statistics
import sys


def cell(m, key):
    e = m.get(key)
    if not e or e["host"]["mean"] is None:
        return ["-", "-", "-"]
    h, s = e["host"], e["sim"]
    err = "-" if e.get("rel_error_pct") is None else "%+.0f %%" % e["rel_error_pct"]
    hs = "%.4g" % h["mean"] + ("" if not h.get("ci95") else " ± %.2g" % h["ci95"])
    return [hs, "-" if s["mean"] is None else "%.4g" % s["mean"], err]


t = json.load(open(sys.argv[1]))
print("| variant | point | host round trips/s | simulated | error | host p50 µs | simulated | error "
      "| host switches/req | simulated | host IPIs/req | simulated |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
by_point = {}
for r in t["rows"]:
    point = ",".join("%s=%s" % (k.split(".")[-1], v) for k, v in r["grid"].items())
    m = r["metrics"]
    cs, ip = cell(m, "per_request.context_switches"), cell(m, "per_request.ipis")
    print("| " + " | ".join([r["variant"], point] + cell(m, "throughput.ops_per_s") + cell(m, "latency_us.p50")
                            + cs[:2] + ip[:2]) + " |")
    by_point.setdefault(point, []).append((r["variant"], m["throughput.ops_per_s"]))
print()
clear = held = 0
for point, vs in by_point.items():
    for (a, ea), (b, eb) in itertools.combinations(vs, 2):
        ha, hb = ea["host"], eb["host"]
        lo, hi = (ha, hb) if ha["mean"] < hb["mean"] else (hb, ha)
        if hi["mean"] <= 1.15 * lo["mean"] or lo["mean"] + (lo.get("ci95") or 0) >= hi["mean"] - (hi.get("ci95") or 0):
            continue
        clear += 1
        if ea["sim"]["mean"] is None or eb["sim"]["mean"] is None:  # a simulated point failed
            print("- %s: host %s vs %s separated, model: no result" % (point, a, b))
            continue
        same = (ha["mean"] < hb["mean"]) == (ea["sim"]["mean"] < eb["sim"]["mean"])
        held += same
        print("- %s: host %s %s %s (%.4g vs %.4g), model %.4g vs %.4g: %s" % (
            point, a, "<" if ha["mean"] < hb["mean"] else ">", b, ha["mean"], hb["mean"], ea["sim"]["mean"],
            eb["sim"]["mean"], "kept" if same else "**broken**"))
print("\nclear orderings of variants at the same point: %d, kept by the model: %d" % (clear, held))
for k in ("throughput.ops_per_s", "latency_us.p50"):
    s = t["summary"].get(k)
    if s:
        print("%s: median |error| %.1f %%, worst %.1f %% over %d points" % (
            k, s["median_abs_rel_error_pct"], s["worst_abs_rel_error_pct"], s["points"]))
cpu = sorted(k for k in t["summary"] if k.startswith("cpu."))
if cpu:
    print("CPU, median / worst |error| in points: " + ", ".join(
        "%s %.1f / %.1f" % (k[len("cpu."):].replace("by_thread.", "").replace("_pct", ""),
                            t["summary"][k]["median_abs_error"], t["summary"][k]["worst_abs_error"]) for k in cpu))
for o in t.get("orderings", []):
    print("all clear host orderings of %s (any two configurations): %d, kept by the model: %d" % (
        o["metric"], o["clear"], o["held"]))
# The host's drift: each host run's throughput against its point's mean, and the CPU speed probe
# taken just before it (run_info.json cpu_speed, host/speed_probe.hpp). A strong negative
# correlation says the runs' spread is the machine's speed, not the workload's noise.
host_dir = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), t.get("host_dir", "host"))
by_point_runs = {}
for info_path in glob.glob(os.path.join(host_dir, "points", "*", "run_info.json")):
    info = json.load(open(info_path))
    probe = (info.get("cpu_speed") or {}).get("before", {}).get("ns_per_add")
    res_path = os.path.join(os.path.dirname(info_path), "results.json")
    if probe is None or not os.path.exists(res_path):
        continue
    ops = json.load(open(res_path))["throughput"]["ops_per_s"]
    point = os.path.basename(os.path.dirname(info_path)).rsplit(",rep=", 1)[0]
    by_point_runs.setdefault(point, []).append((probe, ops))
xs, ys = [], []
for runs in by_point_runs.values():
    if len(runs) < 2:
        continue
    mean = sum(o for _, o in runs) / len(runs)
    for probe, ops in runs:
        xs.append(probe)
        ys.append(ops / mean - 1)
if len(xs) >= 3:
    try:
        r = statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # one of them constant
        r = float("nan")
    print("host CPU speed probe over %d runs: %.3f to %.3f ns per add (median %.3f); correlation of a run's "
          "throughput (against its point's mean) with it: r = %.2f" % (
              len(xs), min(xs), max(xs), statistics.median_high(xs), r))
