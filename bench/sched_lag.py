#!/usr/bin/env python3
"""Summarises bench/sched_lag.bt's maps from one `uringsim host` echo or NOP run (bench/sched_lag.sh),
per request (the run's round trips/s times the span of the traced events):
- switches out by (class, S blocked / R preempted, next class, how the thread left its queue:
  delayed, since it was not eligible, or gone with its lag's sign);
- wake-ups by (waker, wakee, on the waker's CPU or another);
- wake-ups onto a CPU running another echo thread of the same queue: was that thread still
  eligible, the wakee's lag, was it told to reschedule (TIF_NEED_RESCHED, bit 4 with 6.18's
  generic TIF bits), and did it then switch out preempted (R) or blocked (S);
- the wakee's lag (V - vruntime) at those wake-ups, quartiles, in ns, and the lag each class left
  its queue with when it blocked while eligible (DELAY_DEQUEUE keeps the others queued);
- how long a running thread told to reschedule took to switch out (under PREEMPT_NONE it runs
  on to its next preemption point), and how long each woken thread waited for its CPU, by what
  ran there and whether that was told, quartiles, in µs (switches away from the idle task are not
  traced, so wake-ups onto an idle CPU are mostly missing there);
- an io-wq worker's items run back to back: the time from one CQE it posts to its next in the
  same turn on its CPU, by the second request's opcode (that item's work and the previous one's
  tail), quartiles in µs.
With --sequence N, N events from the middle of the run in time order.
Usage: bench/sched_lag.py TRACE.txt RESULTS.json [--sequence N]"""
import argparse
import collections
import json
import re
import statistics

from sched_trace import cls  # the thread classes, as bench/sched_trace.py names them

NEED_RESCHED = 1 << 4
ENTRY = re.compile(r"@(\w+)\[(\d+)(?:, (\d+))?\]: (.*)")
WEIGHT = 1024  # nice 0, as the queue's sums count it (scale_load_down)


def state(s):
    # sched_switch's prev_state: 0 running (R), TASK_REPORT_MAX (256) preempted (R+), else blocked.
    return "R" if s in (0, 256) else "S"


def load(path):
    comm, sw, wk, gaps = {}, [], [], collections.defaultdict(collections.Counter)
    for line in open(path):
        m = ENTRY.match(line)
        if not m:
            continue
        kind, key, cpu, value = m.groups()
        if kind == "comm":
            comm[int(key)] = value.strip()
        elif kind in ("s", "w"):
            fields = [int(x) for x in value.strip("()").split(", ")]
            (sw if kind == "s" else wk).append((int(key), int(cpu), fields))
        elif kind == "gap":  # @gap[opcode, 0.1 µs bucket]: count
            gaps[int(key)][int(cpu)] += int(value)
    return comm, sw, wk, gaps


OPCODES = {0: "NOP", 26: "SEND", 27: "RECV"}  # IORING_OP_*


def bucket_quartiles(counts):
    """Quartiles in µs of a histogram of 0.1 µs buckets (the last one holds everything beyond)."""
    total, acc, out = sum(counts.values()), 0, []
    for b in sorted(counts):
        acc += counts[b]
        while len(out) < 3 and acc >= (len(out) + 1) * total / 4:
            out.append(b / 10)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("results")
    ap.add_argument("--sequence", type=int, default=0)
    a = ap.parse_args()
    comm, sw, wk, gaps = load(a.trace)
    if not sw:
        raise SystemExit(f"sched_lag: no switch of the echo's threads in {a.trace}")
    for what, n_, cap in (("switches", len(sw), 1000000), ("wake-ups", len(wk), 1000000)):
        if n_ >= cap:
            print(f"sched_lag: the {what} map is full ({cap}): later events were dropped")
    name = lambda pid: comm.get(pid, "swapper" if pid == 0 else "other")
    kind = lambda pid: cls(name(pid))
    events = sorted([(t, "s", c, f) for t, c, f in sw] + [(t, "w", c, f) for t, c, f in wk])
    span = (events[-1][0] - events[0][0]) / 1e9
    ops = json.load(open(a.results))["throughput"]["ops_per_s"]
    n = ops * span
    print(f"{ops:.0f} round trips/s; traced over {span:.3f} s: {n:.0f} requests; "
          f"{len(sw)} switches, {len(wk)} wake-ups")
    switches, wakes, decisions = collections.Counter(), collections.Counter(), collections.Counter()
    lags = collections.defaultdict(list)
    left_with = collections.defaultdict(list)  # (class,) -> lags it blocked with, not delayed
    told = {}  # cpu -> (date, running pid, decision) of the first wake-up that asked it to reschedule
    woken = {}  # pid -> (date, class running where it was put, told) of its last wake-up
    to_switch, to_run = collections.defaultdict(list), collections.defaultdict(list)
    lines = []
    middle = len(events) // 2
    for i, (t, k, cpu, f) in enumerate(events):
        show = a.sequence and middle <= i < middle + a.sequence
        if k == "s":
            prev, st, nxt, vlag, delayed, nq = f
            left = "delayed" if delayed else ("lag>0" if vlag > 0 else "lag<0" if vlag < 0 else "lag=0")
            if state(st) == "R":
                left = "-"
            switches[(kind(prev), state(st), kind(nxt), left)] += 1
            if state(st) == "S" and not delayed:
                left_with[(kind(prev),)].append(vlag)
            if cpu in told and told[cpu][1] == prev:
                t0, _, key = told.pop(cpu)
                decisions[key + (state(st),)] += 1
                to_switch[(key[1], key[0], state(st))].append((t - t0) / 1e3)
            if nxt in woken:
                t0, running, was_told = woken.pop(nxt)
                to_run[(kind(nxt), running, "told" if was_told else "not told")].append((t - t0) / 1e3)
            if show:
                lines.append(f"{(t - events[middle][0]) / 1e3:9.2f} cpu{cpu} {name(prev)} {state(st)} -> "
                             f"{name(nxt)}  left {left}, {nq} queued")
            continue
        waker, wakee, tcpu, vr, cur, flags, cvr, con, sum_w, sum_weight, zero = f
        wakes[(kind(waker), kind(wakee), "same CPU" if cpu == tcpu else "other CPU")] += 1
        woken[wakee] = (t, kind(cur), bool(flags & NEED_RESCHED))
        if show:
            lines.append(f"{(t - events[middle][0]) / 1e3:9.2f} cpu{cpu} {name(waker)} wakes {name(wakee)} "
                         f"on cpu{tcpu} (running {name(cur)}, resched {bool(flags & NEED_RESCHED)})")
        if kind(cur) not in ("server", "worker", "client") or not con or kind(cur) == kind(wakee) == "client":
            continue
        # V: the queue's sums (the running thread is out of the tree) plus the running thread.
        v = zero + (sum_w + (cvr - zero) * WEIGHT) / (sum_weight + WEIGHT)
        key = (kind(wakee), kind(cur), "running eligible" if cvr <= v else "running not eligible",
               "wakee lag>0" if v - vr > 0 else "wakee lag<=0", "resched" if flags & NEED_RESCHED else "no resched")
        decisions[key] += 1
        lags[key[:2]].append(v - vr)
        if flags & NEED_RESCHED and tcpu not in told:
            told[tcpu] = (t, cur, key)
    print("\nswitches out per request (class, R preempted / S blocked, next, how it left its queue):")
    for k, v in sorted(switches.items(), key=lambda kv: -kv[1]):
        if v / n >= 0.005:
            print(f"  {' '.join(k):<40} {v / n:.3f}")
    print("\nwake-ups per request (waker, wakee, where):")
    for k, v in sorted(wakes.items(), key=lambda kv: -kv[1]):
        if v / n >= 0.005:
            print(f"  {' '.join(k):<40} {v / n:.3f}")
    print("\nwake-ups onto a CPU running an echo thread, per request (wakee, running, its eligibility,"
          "\nthe wakee's lag, TIF_NEED_RESCHED; with R/S: what the running thread did next):")
    for k, v in sorted(decisions.items(), key=lambda kv: -kv[1]):
        if v / n >= 0.005:
            print(f"  {' '.join(k):<80} {v / n:.3f}")
    def quartiles(title, table, fmt):
        print(title)
        for k, v in sorted(table.items()):
            if len(v) >= 4 and len(v) / n >= 0.005:
                q = statistics.quantiles(v, n=4)
                print(f"  {' '.join(k):<40} {len(v) / n:.3f} per request: " + " ".join(fmt % x for x in q))

    quartiles("\nthe wakee's lag at those wake-ups, ns (wakee, running):", lags, "%9.0f")
    quartiles("\nthe lag a thread left its queue with when it blocked while eligible, ns:", left_with, "%9.0f")
    quartiles("\ntold to reschedule -> switched out, µs (running, wakee, R/S):", to_switch, "%7.1f")
    quartiles("\nwoken -> on its CPU, µs (wakee, what ran there, told or not):", to_run, "%7.1f")
    if gaps:
        print("\na worker's items back to back, CQE to the next CQE in one turn on its CPU, by the "
              "second item's opcode, µs (from 100 µs on in the last bucket):")
        for op, counts in sorted(gaps.items()):
            q = bucket_quartiles(counts)
            print(f"  {OPCODES.get(op, f'op {op}'):<40} {sum(counts.values()) / n:.3f} per request: "
                  + " ".join("%7.1f" % x for x in q))
    if lines:
        print("\nsequence (µs from the middle of the run):")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
