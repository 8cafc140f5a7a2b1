#!/usr/bin/env python3
"""Per thread class, the functions a `perf script -F comm,ip,sym` dump of cpu-clock samples with
call chains fell in (bench/host_profile.sh makes one around `uringsim host`). Thread classes are
the command names without their numeric suffix (client-0 -> client, iou-wrk-2207 -> iou-wrk), as
the model names them. A sample whose leaf is an interrupt-enable (where a guest that cannot take
the timer interrupt with interrupts off records it) is charged to the first caller that is not an
interrupt-enable wrapper, marked "(irqs off)", with that function's caller. With --model it
prints the model's profile (results.json `profile`) of each class too. With --per-request it
also prints, per class, the CPU time per request in a few groups of functions (user space, system
call entry and exit, the scheduler, slab allocations, file references, clock reads, io_uring's
submission, its task_work and completions, wake-ups and interrupts, spinlocks, the network stack),
host against model: the host's from the class's CPU (its results) times each group's share of the
samples, over the window's requests; the model's from its profile's cycles.
Usage: bench/host_profile.py SAMPLES.txt HOST_RESULTS.json [--model RESULTS.json] [--top N]
       [--per-request]"""
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
    """Yields (comm, [leaf, caller, ...], leaf in the kernel) per sample."""
    comm, frames, kernel = None, [], False
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if comm is not None:
                    yield comm, frames, kernel
                comm, frames = None, []
            elif not line[0].isspace():
                if comm is not None:
                    yield comm, frames, kernel
                comm, frames = line.split()[0], []
            else:
                parts = line.split(None, 1)
                if len(parts) == 2:
                    if not frames:
                        kernel = parts[0].startswith("ffffffff")
                    frames.append(parts[1].strip().split("+0x")[0])
    if comm is not None:
        yield comm, frames, kernel


# Groups of functions (host: the sample's function as where() names it; model: the profile's
# symbol), first match wins; what matches none is "other".
GROUPS = [
    ("user space", r"^\[app\]"),
    ("CPU stalled (model)", r"CPU stalled"),
    ("scheduler", r"__schedule|^schedule|finish_task_switch|pick_next|first run after|sched_|update_curr"),
    ("slab alloc/free", r"kmalloc|kfree|slab|kmem_cache|io_cache_alloc|put_cpu_partial"),
    ("file refs", r"^fget|^fput|fdget"),
    ("clock reads", r"ktime_get|pvclock|kvm_clock|read_tsc"),
    ("syscall entry/exit", r"do_syscall_64|entry_SYSCALL|exit_to_user_mode|syscall_exit|x64_sys_call|"
                           r"__do_sys_io_uring_enter|^io_uring_enter|rseq|__get_user|blkcg_maybe"),
    ("io_uring submission", r"io_submit_sqes|io_prep|io_wq_enqueue|io_wqe_enqueue|io_acct_activate|"
                            r"_prep$|mutex_|io_init_req|io_queue|io_issue_sqe$"),
    ("task_work, completions", r"tctx_task_work|task_work|io_handle_tw_list|io_req_task_complete|"
                               r"io_submit_flush_completions|llist_reverse|io_run_task_work|io_free|"
                               r"io_fill_cqe|io_cqring_wait|prepare_to_wait|io_req_task_work_add|io_cq_"),
    ("wake-ups, interrupts", r"try_to_wake_up|wake_up|sysvec|irqentry|ipi|reschedule"),
    ("spinlocks", r"spin_lock|queued_spin"),
    ("network stack", r"tcp|skb|sock|inet|^ip_|dev_queue|net_rx|bbr|_copy_|backlog|napi|softirq|"
                      r"sk_|__check_object_size|__virt_addr_valid"),
]


# The model's local client charges its socket calls as "[client]_tcp_*": the network stack.
def group_of(fn, user):
    if user:
        return "user space"
    for name, rx in GROUPS:
        if re.search(rx, fn):
            return name
    return "other"


def per_request(host_groups, host_results, model_results):
    """CPU µs per request by class and group, host against model."""
    r = host_results
    n = r["window"]["completions"]
    cpu = r.get("cpu", {}).get("by_thread", {})
    model = {}
    if model_results:
        m = model_results
        ghz = m["scenario"]["machine"]["ghz"]
        mn = m["window"]["completions"]
        for e in m.get("profile", {}).get("entries", []):
            g = group_of(e["symbol"], False)
            model.setdefault(e["comm"], collections.Counter())[g] += e["cycles"] / ghz / 1e3 / mn
    print("\nCPU per request by group of functions, us: host / model")
    for key, pct in sorted(cpu.items()):
        c = key[:-4]
        total = sum(host_groups[c].values())
        if not total:
            continue
        host_us = pct / 100 * r["window"]["seconds"] / n * 1e6
        print(f"{c}: host {host_us:.2f} us per request" +
              (f", model {sum(model.get(c, {}).values()):.2f}" if model_results else ""))
        names = [g for g, _ in GROUPS] + ["other"]
        for g in names:
            h = host_us * host_groups[c][g] / total
            mv = model.get(c, {}).get(g, 0.0)
            if h < 0.005 and mv < 0.005:
                continue
            print(f"  {g:24s} {h:6.2f}" + (f" / {mv:6.2f}" if model_results else ""))


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
    ap.add_argument("--per-request", action="store_true")
    a = ap.parse_args()
    for f in (a.samples, a.results, a.model):
        if f and not os.path.isfile(f):
            sys.exit(f"host_profile: no file {f}")
    by = collections.defaultdict(collections.Counter)
    groups = collections.defaultdict(collections.Counter)
    for comm, frames, kernel in read_samples(a.samples):
        fn = where(frames)
        by[classify(comm)][fn] += 1
        groups[classify(comm)][group_of(fn, not kernel)] += 1
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
    if a.per_request:
        per_request(groups, r, json.load(open(a.model)) if a.model else None)


if __name__ == "__main__":
    main()
