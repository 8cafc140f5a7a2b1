#!/usr/bin/env python3
"""The model half of a twin again, with other model options, against the same host half.

`uringsim twin` keys each host point by the calibration and --set options too, so a twin run with
another calibration or --set reruns the host. This reruns only the model: every point and rep of
TWIN_DIR/twin.json (rep r with the scenario's seed + r, as twin does) with `uringsim run` and the
options given after `--`, and prints each point's host mean beside the new model mean, and the
median and worst |error| of throughput and p50 latency, as bench/twin_table.py does for a twin.
With --kick-per-run, each model run also takes the task_work kick delivery that its host run's
probe measured just before its window (run_info.kick.before.delivery_ns, host/kick_probe.hpp) as
costs.ipi_delivery_ns, in place of the calibration's: the model at the machine's state of the
moment, in that one micro-benchmark. A figure, not a test. Usage:
  bench/twin_resim.py TWIN_DIR OUT_DIR [--jobs N] [--kick-per-run] -- RUN_OPTIONS...
  (e.g. -- --calibration CAL --set k=v)
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys

BIN = os.environ.get("BIN", "build/tools/uringsim")
METRICS = (("throughput", "throughput.ops_per_s", lambda r: r["throughput"]["ops_per_s"]),
           ("p50", "latency_us.p50", lambda r: r["latency_us"]["p50"]))


def main():
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("twin_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--kick-per-run", action="store_true",
                    help="set costs.ipi_delivery_ns to each host run's kick probe")
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    with open(os.path.join(args.twin_dir, "twin.json")) as f:
        twin = json.load(f)
    scenario = twin["scenario"]
    with open(scenario) as f:
        base_seed = json.load(f).get("seed", 1)
    runs = []
    for row in twin["rows"]:
        sets = [f"{k}={v}" for k, v in row["grid"].items()]
        name = ",".join(sets + [f"variant={row['variant']}"])
        for rep in range(twin["reps"]):
            out = os.path.join(args.out_dir, name, f"rep={rep}")
            cmd = [BIN, "run", scenario, "--variant", row["variant"], "--seed", str(base_seed + rep),
                   "--quiet", "--out", out] + [a for s in sets for a in ("--set", s)] + extra
            if args.kick_per_run:
                info_path = os.path.join(args.twin_dir, twin.get("host_dir", "host"), "points",
                                         f"{name},rep={rep}", "run_info.json")
                with open(info_path) as f:
                    kick = (json.load(f).get("kick") or {}).get("before")
                if not kick:
                    raise SystemExit(f"twin_resim: {info_path} has no kick probe (run_info.kick.before)")
                cmd += ["--set", f"costs.ipi_delivery_ns={max(0.0, kick['delivery_ns'])}"]
            runs.append((name, out, cmd))

    def run(item):
        name, out, cmd = item
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"twin_resim: {' '.join(cmd)} failed:\n{done.stderr}")
        with open(os.path.join(out, "results.json")) as f:
            return name, json.load(f)

    by_point = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for name, res in ex.map(run, runs):
            by_point.setdefault(name, []).append(res)
    print("| point | host round trips/s | model | error | host p50 µs | model | error |")
    print("|---|---|---|---|---|---|---|")
    errors = {m[0]: [] for m in METRICS}
    for row in twin["rows"]:
        name = ",".join([f"{k}={v}" for k, v in row["grid"].items()] + [f"variant={row['variant']}"])
        cells = [name]
        for label, key, get in METRICS:
            host = row["metrics"][key]["host"]["mean"]
            model = statistics.mean(get(r) for r in by_point[name])
            err = (model - host) / host * 100
            errors[label].append(abs(err))
            cells += [f"{host:.4g}", f"{model:.4g}", f"{err:+.0f} %"]
        print("| " + " | ".join(cells) + " |")
    for label, errs in errors.items():
        print(f"{label}: median |error| {statistics.median(errs):.1f} %, worst {max(errs):.1f} % "
              f"over {len(errs)} points")


if __name__ == "__main__":
    main()
