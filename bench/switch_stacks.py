#!/usr/bin/env python3
"""Summarises an ftrace text trace of sched_switch with a stacktrace trigger, taken around one
`uringsim host` echo run (bench/switch_stacks.sh): per request, each switch of the server and the
io-wq workers by (class switched out, S blocked or R preempted, class that ran next, the first
kernel frames above __schedule). Requests are the run's throughput times the traced span.
Usage: bench/switch_stacks.py TRACE.txt RESULTS.json"""
import collections
import json
import re
import sys

from sched_trace import cls  # the thread classes, as bench/sched_trace.py names them

SWITCH = re.compile(r"^\s*.+?-\d+\s+\[\d+\]\s+\S+\s+([\d.]+): sched_switch: prev_comm=(.+?) prev_pid=\d+ "
                    r".*prev_state=(\S+) ==> next_comm=(.+?) next_pid=")
SKIP = {"trace_event_raw_event_sched_switch", "__traceiter_sched_switch", "__schedule"}


def main(trace, results):
    counts = collections.Counter()
    key, frames, first, last = None, [], None, None

    def done():
        if key:
            counts[key + ("<-".join([f for f in frames if f not in SKIP][:4]),)] += 1

    for line in open(trace):
        m = SWITCH.match(line)
        if m:
            done()
            frames = []
            t = float(m.group(1))
            first = t if first is None else first
            last = t
            key = (cls(m.group(2)), "R" if m.group(3).startswith("R") else m.group(3), cls(m.group(4)))
        elif line.startswith(" => "):
            frames.append(line[4:].strip())
    done()
    if first is None or last <= first:
        sys.exit("switch_stacks: no switches of the echo's threads in the trace")
    ops = json.load(open(results))["throughput"]["ops_per_s"]
    n = ops * (last - first)
    print(f"traced span {last - first:.3f} s at {ops:.0f} round trips/s: about {n:.0f} requests")
    print("per request  out     state  next     call chain")
    for (out, state, nxt, chain), c in sorted(counts.items(), key=lambda kv: -kv[1]):
        if c / n >= 0.001:
            print(f"{c / n:11.3f}  {out:<7} {state:<6} {nxt:<8} {chain}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
