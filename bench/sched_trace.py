#!/usr/bin/env python3
"""Summarises an ftrace text trace of sched_switch / sched_waking / sched_wakeup / sched_migrate_task taken around one `uringsim host`
echo run (bench/sched_trace.sh): per thread class, CPU time and slices, switches out per request
(blocked, or preempted and by whom), who wakes whom and where the wakee lands (also counted over
the wake-ups made while another CPU sat idle with no wake-up sent to it, where upstream's idle
scan would have taken that CPU), how long a thread runs on after waking one on another CPU, and
what moved threads between CPUs (a waker's placement, or balancing run by an idle or a busy CPU).
Usage: bench/sched_trace.py TRACE.txt RESULTS.json"""
import collections
import json
import os
import re
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (sched_\w+|sys_enter|sys_exit|\w+_entry|\w+_exit): (.*)$")
SENDTO = 44
SYSCALL_NAMES = {44: "sendto", 45: "recvfrom", 232: "epoll_wait", 281: "epoll_pwait", 441: "epoll_pwait2"}
FIELD = re.compile(r"(\w+)=(\S+)")


def cls(comm):
    # "server": the ring's own task, the echo server's or the NOP runner's (nop_test).
    for prefix, name in (("iou-wrk", "worker"), ("io_uring_echo", "server"), ("nop_test", "server"),
                         ("client", "client"), ("swapper", "idle"), ("<idle>", "idle")):
        if comm.startswith(prefix):
            return name
    return "other"


def main(trace, results):
    ops = json.load(open(results))["throughput"]["ops_per_s"]
    on_cpu = {}        # cpu -> (class, since)
    run = collections.Counter()
    slices = collections.defaultdict(list)
    out = collections.Counter()
    preempted_by = collections.Counter()
    wakes = collections.Counter()
    lands = collections.Counter()
    idle_then = collections.Counter()  # (waker, wakee, where it landed): another CPU was idle at the wake
    pending = set()    # idle CPUs a wake-up was sent to, not yet switched (idle_cpu(): ttwu_pending)
    waker_slice = {}   # cpu -> date of the running thread's first wake-up of a thread on another CPU
    tails = collections.defaultdict(lambda: ([], [], []))  # class -> (in to wake, wake to out, no wake)
    moves = collections.Counter()
    in_call = {}       # pid -> [syscall nr, entry date, switched-out date or None, time switched out]
    call_ns = collections.defaultdict(list)
    user_gap = []
    last_exit = {}
    irq_open = {}      # (cpu, kind) -> entry date
    sends = []         # (time on the CPU, {interrupt kind: time}) per client sendto
    first = last = None
    for line in open(trace):
        m = LINE.match(line)
        if not m:
            continue
        task, pid, cpu, ts, event, rest = m.groups()
        cpu, ts = int(cpu), float(ts)
        f = dict(FIELD.findall(rest))
        if not event.startswith(("sys_", "sched_")):  # an interrupt or softirq begins or ends
            kind = event.rsplit("_", 1)[0] + (":" + rest.split("action=")[1].rstrip("]") if "action=" in rest else "")
            if event.endswith("_entry"):
                irq_open[(cpu, kind)] = ts
            elif (cpu, kind) in irq_open:
                took = ts - irq_open.pop((cpu, kind))
                c = in_call.get(pid)
                if c and c[0] == SENDTO and c[2] is None:
                    c[4][kind] += took
            continue
        if event == "sys_enter":
            nr = int(rest.split()[1])
            in_call[pid] = [nr, ts, None, 0.0, collections.Counter()]
            if pid in last_exit:
                user_gap.append(ts - last_exit[pid])
            continue
        if event == "sys_exit":
            c = in_call.pop(pid, None)
            if c and c[0] == int(rest.split()[1]) and c[2] is None:
                call_ns[c[0]].append(ts - c[1] - c[3])
                if c[0] == SENDTO:
                    sends.append((ts - c[1] - c[3], c[4]))
            last_exit[pid] = ts
            continue
        if event == "sched_switch":
            if f["prev_pid"] in in_call:
                in_call[f["prev_pid"]][2] = ts
            c = in_call.get(f["next_pid"])
            if c and c[2] is not None:
                c[3] += ts - c[2]
                c[2] = None
            prev, nxt = cls(f["prev_comm"]), cls(f["next_comm"])
            if cpu in on_cpu:
                c, since = on_cpu[cpu]
                run[c] += ts - since
                slices[c].append((ts - since) * 1e6)
                woke = waker_slice.pop(cpu, None)
                if woke is None:
                    tails[c][2].append((ts - since) * 1e6)
                else:
                    tails[c][0].append((woke - since) * 1e6)
                    tails[c][1].append((ts - woke) * 1e6)
            on_cpu[cpu] = (nxt, ts)
            pending.discard(cpu)
            if prev in ("client", "server", "worker"):
                first = ts if first is None else first
                last = ts
                if f["prev_state"].startswith("R"):
                    out[(prev, "preempted")] += 1
                    preempted_by[(prev, nxt)] += 1
                else:
                    out[(prev, "blocked")] += 1
        elif event == "sched_migrate_task":
            moved, by = cls(f["comm"]), cls(task.strip())
            if moved in ("client", "server", "worker"):
                how = ("balance by the idle CPU" if by == "idle" else
                       f"wake-up by the {by}" if by in ("client", "server", "worker") else f"by {task.strip()}")
                moves[(moved, how)] += 1
        elif event == "sched_waking":
            waker, wakee = cls(task.strip()), cls(f["comm"])
            if wakee in ("client", "server", "worker") and waker != "idle":
                wakes[(waker, wakee)] += 1
                same = int(f["target_cpu"]) == cpu
                where = "waker's CPU" if same else "other CPU"
                lands[(waker, wakee, where)] += 1
                if any(c != cpu and k == "idle" and c not in pending for c, (k, _) in on_cpu.items()):
                    idle_then[(waker, wakee, where)] += 1
                if not same and cpu in on_cpu:
                    waker_slice.setdefault(cpu, ts)
            pending.add(int(f["target_cpu"]))  # any task's wake-up, not only the echo threads'
    if first is None:
        sys.exit("sched_trace: no echo thread in the trace")
    span = last - first
    n = ops * span
    print(f"traced run: {ops:.0f} round trips/s; echo threads traced over {span:.3f} s, "
          f"about {n:.0f} requests (all figures per request are per these)")
    info = os.path.join(os.path.dirname(results), "run_info.json")
    speed = json.load(open(info)).get("cpu_speed") if os.path.exists(info) else None
    if speed:
        print(f"CPU speed probe: {speed['before']['ns_per_add']:.3f} ns per add before the run, "
              f"{speed['after']['ns_per_add']:.3f} after (compare with the calibration's machine)")
    print(f"{'class':<8} {'CPU %':>6} {'us/req':>7} {'slices':>7} {'p50 us':>7} {'p90 us':>7}")
    for c in ("client", "server", "worker"):
        v = sorted(slices[c])
        if not v:
            continue
        print(f"{c:<8} {100 * run[c] / span:>6.1f} {run[c] / n * 1e6:>7.2f} {len(v) / n:>7.3f} "
              f"{v[len(v) // 2]:>7.1f} {v[9 * len(v) // 10]:>7.1f}")
    print("switches out per request:")
    for (c, why), k in sorted(out.items()):
        print(f"  {c:<8} {why:<10} {k / n:.3f}")
    for (c, by), k in sorted(preempted_by.items()):
        print(f"  {c:<8} preempted by {by:<8} {k / n:.3f}")
    print("wake-ups per request (waker -> wakee: on the waker's CPU / another):")
    for (a, b), k in sorted(wakes.items()):
        mine, other = lands[(a, b, "waker's CPU")], lands[(a, b, "other CPU")]
        print(f"  {a:<8} -> {b:<8} {k / n:.3f}   {mine / n:.3f} / {other / n:.3f}")
    # select_idle_sibling takes an idle CPU when there is one: a wake-up that stays on its
    # waker's busy CPU while another is idle is a placement the idle scan did not make. A CPU that
    # a wake-up was sent to is not idle until it switches (idle_cpu() checks ttwu_pending).
    print("the same wake-ups made while another CPU was idle, none sent there "
          "(on the waker's CPU / another):")
    for (a, b), k in sorted(wakes.items()):
        mine, other = idle_then[(a, b, "waker's CPU")], idle_then[(a, b, "other CPU")]
        print(f"  {a:<8} -> {b:<8} {mine / n:.3f} / {other / n:.3f}")
    # How long a waker runs on after waking a thread on another CPU: whether that CPU's next
    # wake-up finds this one still busy decides where the next wakee lands.
    print("slices (us, p50) that wake a thread on another CPU: per request, switch-in to that "
          "wake-up, wake-up to switch-out; the other slices: per request, length")
    def mid(v):
        return f"{v[len(v) // 2]:.1f}" if v else "-"
    for c in ("client", "server", "worker"):
        a, b, none = (sorted(v) for v in tails[c])
        if a or none:
            print(f"  {c:<8} {len(a) / n:.3f} {mid(a):>6} {mid(b):>6}   {len(none) / n:.3f} {mid(none):>6}")
    if call_ns:
        print("client system calls, on the CPU (us): calls per request, p50, mean")
        for nr, v in sorted(call_ns.items(), key=lambda kv: -len(kv[1])):
            if len(v) < 100:
                continue
            v.sort()
            print(f"  {SYSCALL_NAMES.get(nr, nr):<13} {len(v) / n:>6.3f} {v[len(v) // 2] * 1e6:>6.1f} "
                  f"{sum(v) / len(v) * 1e6:>6.1f}")
        if user_gap:
            print(f"  user space between calls: {len(user_gap) / n:.3f} per request, mean "
                  f"{sum(user_gap) / len(user_gap) * 1e6:.1f}")
    if sends:
        sends.sort(key=lambda x: x[0])
        for label, part in (("the faster half", sends[:len(sends) // 2]),
                            ("the slowest tenth", sends[9 * len(sends) // 10:])):
            spent = collections.Counter()
            for _, k in part:
                spent.update(k)
            mean = sum(d for d, _ in part) / len(part) * 1e6
            inside = ", ".join(f"{k} {v / len(part) * 1e6:.1f}" for k, v in sorted(spent.items()))
            print(f"  sendto, {label}: mean {mean:.1f} us, of which (us) {inside}")
    print("migrations (count in the whole trace):")
    for (c, how), k in sorted(moves.items()):
        print(f"  {c:<8} {how:<28} {k}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
