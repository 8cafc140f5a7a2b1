#!/usr/bin/env python3
"""A twin.json as a markdown table (throughput, p50, per-request context switches, IPIs and
migrations, the most io-wq workers at once), and per grid point the orderings of the variants the
host separates clearly (> 15 %, intervals apart) with whether the model keeps them, and the
summary's error figures (CPU in points). Usage:
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
      "| host switches/req | simulated | host IPIs/req | simulated | host migrations/req | simulated "
      "| host io-wq workers (peak) | simulated |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
by_point = {}
for r in t["rows"]:
    point = ",".join("%s=%s" % (k.split(".")[-1], v) for k, v in r["grid"].items())
    m = r["metrics"]
    cs, ip = cell(m, "per_request.context_switches"), cell(m, "per_request.ipis")
    mg, wk = cell(m, "per_request.migrations"), cell(m, "iowq.workers_peak")
    print("| " + " | ".join([r["variant"], point] + cell(m, "throughput.ops_per_s") + cell(m, "latency_us.p50")
                            + cs[:2] + ip[:2] + mg[:2] + wk[:2]) + " |")
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
# The host's drift: each host run's throughput against its point's mean, and the probes taken
# just before it (run_info.json): the CPU speed (cpu_speed, host/speed_probe.hpp), an idle CPU's
# wake-up (idle_wake, host/wake_probe.hpp), a system call (syscall, host/syscall_probe.hpp) and a
# task_work kick's delivery (kick, host/kick_probe.hpp). A
# strong correlation says the runs' spread is the machine's state, not the workload's noise.
host_dir = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), t.get("host_dir", "host"))
PROBES = [("cpu_speed", "ns_per_add", "host CPU speed probe", "ns per add", 3),
          ("idle_wake", "one_way_ns", "host idle-wake probe", "ns one-way", 0),
          ("syscall", "ns", "host system call probe (getppid)", "ns", 0),
          ("kick", "delivery_ns", "host task_work kick probe", "ns delivery", 0)]
by_point_runs = {}  # point -> [(run name, {probe: value}, ops)]
for info_path in glob.glob(os.path.join(host_dir, "points", "*", "run_info.json")):
    info = json.load(open(info_path))
    res_path = os.path.join(os.path.dirname(info_path), "results.json")
    if not os.path.exists(res_path):
        continue
    probes = {}
    for section, key, _, _, _ in PROBES:
        v = ((info.get(section) or {}).get("before") or {}).get(key)
        if v is not None:
            probes[section] = v
    ops = json.load(open(res_path))["throughput"]["ops_per_s"]
    run = os.path.basename(os.path.dirname(info_path))
    by_point_runs.setdefault(run.rsplit(",rep=", 1)[0], []).append((run, probes, ops))
deviations = []  # (run, probes, throughput against its point's mean - 1)
for runs in by_point_runs.values():
    if len(runs) < 2:
        continue
    mean = sum(o for _, _, o in runs) / len(runs)
    deviations += [(run, probes, ops / mean - 1) for run, probes, ops in runs]
for section, key, label, unit, digits in PROBES:
    pairs = [(p[section], d) for _, p, d in deviations if section in p]
    if len(pairs) < 3:
        continue
    xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
    try:
        r = statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # one of them constant
        r = float("nan")
    print("%s over %d runs: %.*f to %.*f %s (median %.*f); correlation of a run's throughput (against its "
          "point's mean) with it: r = %.2f" % (label, len(xs), digits, min(xs), digits, max(xs), unit, digits,
                                               statistics.median_high(xs), r))
# Runs whose idle wake-up took more than twice the runs' median: a slow period of the machine.
wakes = [p["idle_wake"] for _, p, _ in deviations if "idle_wake" in p]
if len(wakes) >= 3:
    typical = statistics.median_high(wakes)
    slow = sorted((r, p["idle_wake"], d) for r, p, d in deviations if p.get("idle_wake", 0) > 2 * typical)
    print("runs with an idle wake-up over twice the median (%.0f ns): %d of %d" % (typical, len(slow), len(wakes)))
    for run, w, d in slow:
        print("- %s: %.0f ns, throughput %+.0f %% against its point's mean" % (run, w, 100 * d))
