#!/usr/bin/env python3
"""Per thread class, the functions a `perf script -F comm,ip,sym` dump of cpu-clock samples with
call chains fell in (bench/host_profile.sh makes one around `uringsim host`). Thread classes are
the command names without their numeric suffix (client-0 -> client, iou-wrk-2207 -> iou-wrk), as
the model names them. A sample whose leaf is an interrupt-enable (where a guest that cannot take
the timer interrupt with interrupts off records it) is charged to the first caller that is not an
interrupt-enable wrapper, marked "(irqs off)", with that function's caller. With --model it
prints the model's profile (results.json `profile`) of each class too.
Usage: bench/host_profile.py SAMPLES.txt HOST_RESULTS.json [--model RESULTS.json] [--top N]"""
import argparse
import collections
import json
import os
import re
import sys

# Leaves at which a deferred sample is recorded (pvm_irq_enable appears as
# __raw_callee_save_pvm_irq_enable), and the wrappers between them and the function whose
# interrupts-off section it was.
IRQ_ENABLE = re.compile(r"(irq_enable|restore_fl|irq_restore)$")
WRAPPERS = re.compile(r"^(_*raw_spin_unlock_irq|__raw_callee_save_|pvm_|native_irq_|native_restore_fl|"
                      r"arch_local_irq|local_irq_|finish_task_switch)")


def classify(comm):
    return re.sub(r"-\d+$", "", comm)


def read_samples(path):
    """Yields (comm, [leaf, caller, ...]) per sample."""
    comm, frames = None, []
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if comm is not None:
                    yield comm, frames
                comm, frames = None, []
            elif not line[0].isspace():
                if comm is not None:
                    yield comm, frames
                comm, frames = line.split()[0], []
            else:
                parts = line.split(None, 1)
                if len(parts) == 2:
                    frames.append(parts[1].strip().split("+0x")[0])
    if comm is not None:
        yield comm, frames


def where(frames):
    if not frames:
        return "[unknown]"
    if not IRQ_ENABLE.search(frames[0]):
        return frames[0]
    for i, fn in enumerate(frames[1:], 1):
        if not WRAPPERS.match(fn) and not IRQ_ENABLE.search(fn):
            caller = frames[i + 1] if i + 1 < len(frames) else "?"
            return f"{fn} (irqs off) <- {caller}"
    return frames[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("samples")
    ap.add_argument("results")
    ap.add_argument("--model")
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    for f in (a.samples, a.results, a.model):
        if f and not os.path.isfile(f):
            sys.exit(f"host_profile: no file {f}")
    by = collections.defaultdict(collections.Counter)
    for comm, frames in read_samples(a.samples):
        by[classify(comm)][where(frames)] += 1
    r = json.load(open(a.results))
    cpu = r.get("cpu", {}).get("by_thread", {})
    print(f"host run: {r['throughput']['ops_per_s']:.0f} round trips/s; CPU by class (its results): " +
          ", ".join(f"{k[:-4]} {v:.1f} %" for k, v in sorted(cpu.items())))
    speed = None
    try:
        info = json.load(open(os.path.join(os.path.dirname(a.results), "run_info.json")))
        speed = info.get("cpu_speed")
    except OSError:
        pass
    if speed:
        print(f"CPU speed probe: {speed['before']['ns_per_add']:.3f} ns per add before, "
              f"{speed['after']['ns_per_add']:.3f} after (compare with the calibration's machine)")
    model = {}
    if a.model:
        for e in json.load(open(a.model)).get("profile", {}).get("entries", []):
            model.setdefault(e["comm"], []).append((e["pct"], e["symbol"]))
    classes = [c[:-4] for c in cpu] or sorted(by)
    for c in classes:
        n = sum(by[c].values())
        if not n:
            continue
        print(f"\n{c}: {n} samples; share of the class's samples, host")
        for fn, k in by[c].most_common(a.top):
            print(f"  {100 * k / n:5.1f} %  {fn[:100]}")
        if c in model:
            t = sum(p for p, _ in model[c])
            print(f"{c}, model: share of the class's cycles")
            for p, s in sorted(model[c], reverse=True)[:a.top]:
                print(f"  {100 * p / t:5.1f} %  {s}")


if __name__ == "__main__":
    main()
