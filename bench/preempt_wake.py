#!/usr/bin/env python3
"""The model's wake-up of a thread that preempts another CPU's running thread, against calibrate's
measurement of it (machine.wake_busy_ns: from the waker's FUTEX_WAKE call to the woken thread
running, with a thread spinning on its CPU). Not fitted: the parts are other entries of the file.

Usage: bench/preempt_wake.py CALIBRATION.json...   prints one JSON object, per file name:
  before_wake_ns  the waker's call up to the wake being visible: FUTEX_WAKE with nobody waiting
                  (wake_cycles' median less its value) and the enqueue (wake_remote_cycles)
  ipi_delivery_ns, ipi_handler_ns, switch_ns   the rest, as the model charges it
  model_ns, measured_ns, error_pct
"""
import json
import os
import sys


def check(path):
    try:
        with open(path) as f:
            cal = json.load(f)
        c, ghz = cal["costs"], cal["machine"]["ghz"]
        measured = cal["machine"]["wake_busy_ns"]
        parts = {
            "before_wake_ns": (c["wake_cycles"]["median"] - c["wake_cycles"]["value"] +
                               c["wake_remote_cycles"]["value"]) / ghz,
            "ipi_delivery_ns": c["ipi_delivery_ns"]["value"],
            "ipi_handler_ns": c["ipi_receive_cycles"]["value"] / ghz,
            "switch_ns": c["context_switch_cycles"]["value"] / ghz,
        }
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: {e}")
    except (KeyError, TypeError) as e:
        sys.exit(f"{path}: no {e} (a calibration with the cross-CPU wake-ups and the kick is needed)")
    if measured is None:
        sys.exit(f"{path}: machine.wake_busy_ns is null (not measured)")
    model = sum(parts.values())
    return dict(parts, model_ns=model, measured_ns=measured, error_pct=100 * (model / measured - 1))


if len(sys.argv) < 2:
    sys.exit("usage: bench/preempt_wake.py CALIBRATION.json...")
print(json.dumps({os.path.basename(p): check(p) for p in sys.argv[1:]}, indent=1))
