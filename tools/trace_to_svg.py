#!/usr/bin/env python3
"""Draw a `uringsim run --trace` timeline as a static SVG: one track per thread, slices coloured
by code path, request flows as arrows between the slices of their steps, one counter track.

For pages that cannot embed ui.perfetto.dev (docs/img/timeline-hybrid.svg). Standard library only.

  tools/trace_to_svg.py TRACE.json OUT.svg --from-us 200000 --to-us 200040 [--title TEXT]
"""
import argparse
import html
import json
import sys
from collections import OrderedDict, defaultdict

ROW = 24          # track height, px
LABEL_W = 170     # thread names column
PLOT_W = 900      # time axis width
TOP = 62          # title and two legend rows above the tracks
PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8"]
WAIT = "#d9d9d9"  # off-CPU slices (category "sched": sleeping, waiting)


def load(path, t0, t1):
    events = json.load(open(path))["traceEvents"]
    names, slices, flows, counter = {}, [], defaultdict(list), []
    for e in events:
        ph = e["ph"]
        if ph == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        elif ph == "X" and e["ts"] <= t1 and e["ts"] + e["dur"] >= t0:
            slices.append(e)
        elif ph in "stf" and t0 <= e["ts"] <= t1:
            flows[e["id"]].append(e)
        elif ph == "C" and e["name"] == "iowq.unbound.queued" and t0 <= e["ts"] <= t1:
            counter.append((e["ts"], e["args"]["value"]))
    return names, slices, flows, counter


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--from-us", type=float, required=True)
    ap.add_argument("--to-us", type=float, required=True)
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    t0, t1 = a.from_us, a.to_us
    if not t1 > t0:
        sys.exit("error: --to-us must be after --from-us")
    names, slices, flows, counter = load(a.trace, t0, t1)

    # Tracks: threads with a CPU slice in the window, in the trace's track order.
    busy = {s["tid"] for s in slices if s["cat"] == "cpu"}
    tracks = [tid for tid in names if tid in busy]
    row_of = {tid: i for i, tid in enumerate(tracks)}
    x = lambda ts: LABEL_W + (min(max(ts, t0), t1) - t0) / (t1 - t0) * PLOT_W
    y = lambda tid: TOP + row_of[tid] * ROW
    counter_y = TOP + len(tracks) * ROW + 8
    height = counter_y + ROW + 40

    # Colours for the code paths that take the most time in the window; the rest share grey-blue.
    spent = defaultdict(float)
    for s in slices:
        if s["cat"] == "cpu" and s["tid"] in row_of:
            spent[s["name"]] += min(s["ts"] + s["dur"], t1) - max(s["ts"], t0)
    top = [n for n, _ in sorted(spent.items(), key=lambda kv: -kv[1])[:len(PALETTE)]]
    colour = {n: PALETTE[i] for i, n in enumerate(top)}

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LABEL_W + PLOT_W + 20}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#222"/></marker></defs>',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="8" y="16" font-size="13">{html.escape(a.title)}</text>']
    # Legend: the coloured code paths.
    lx, ly = 8, 24
    for n in top:
        w = 18 + 6.2 * len(n)
        if lx + w > LABEL_W + PLOT_W:
            lx, ly = 8, ly + 16
        out.append(f'<rect x="{lx:.1f}" y="{ly}" width="10" height="10" fill="{colour[n]}"/>'
                   f'<text x="{lx + 13:.1f}" y="{ly + 9}">{html.escape(n)}</text>')
        lx += w
    for tid in tracks:
        yy = y(tid)
        out.append(f'<text x="8" y="{yy + 16}">{html.escape(names[tid])}</text>')
        out.append(f'<line x1="{LABEL_W}" x2="{LABEL_W + PLOT_W}" y1="{yy + ROW}" y2="{yy + ROW}" stroke="#eee"/>')
    for s in slices:
        if s["tid"] not in row_of or s["cat"] == "request":
            continue
        fill = WAIT if s["cat"] == "sched" else colour.get(s["name"], "#9aa7b8")
        x0, x1 = x(s["ts"]), x(s["ts"] + s["dur"])
        out.append(f'<rect x="{x0:.2f}" y="{y(s["tid"]) + 3}" width="{max(x1 - x0, 0.5):.2f}" height="{ROW - 6}" '
                   f'fill="{fill}"><title>{html.escape(s["name"])}</title></rect>')
    # Flows: an arrow from each step to the next of the same request.
    for fid, evs in flows.items():
        pts = [(x(e["ts"]), y(e["tid"]) + ROW / 2) for e in evs if e["tid"] in row_of]
        for (xa, ya), (xb, yb) in zip(pts, pts[1:]):
            out.append(f'<line x1="{xa:.2f}" y1="{ya:.1f}" x2="{xb:.2f}" y2="{yb:.1f}" stroke="#222" '
                       'stroke-width="0.8" marker-end="url(#arrow)"/>')
    # Counter: io-wq work queued, as a step line.
    if counter:
        peak = max(v for _, v in counter) or 1
        level = lambda v: counter_y + ROW - 2 - v / peak * (ROW - 6)
        path = [f"M{x(counter[0][0]):.2f} {level(counter[0][1]):.1f}"]
        path += [f"H{x(ts):.2f} V{level(v):.1f}" for ts, v in counter[1:]]
        path.append(f"H{x(t1):.2f}")
        out.append(f'<text x="8" y="{counter_y + 16}">iowq.unbound.queued (max {peak:g})</text>')
        out.append(f'<path d="{" ".join(path)}" fill="none" stroke="#e15759"/>')
    # Time axis, µs from the start of the window.
    ay = counter_y + ROW + 6
    out.append(f'<line x1="{LABEL_W}" x2="{LABEL_W + PLOT_W}" y1="{ay}" y2="{ay}" stroke="#444"/>')
    for i in range(11):
        tt = t0 + (t1 - t0) * i / 10
        out.append(f'<line x1="{x(tt):.1f}" x2="{x(tt):.1f}" y1="{ay}" y2="{ay + 4}" stroke="#444"/>'
                   f'<text x="{x(tt):.1f}" y="{ay + 16}" text-anchor="middle">{tt - t0:g}</text>')
    out.append(f'<text x="{LABEL_W + PLOT_W}" y="{ay + 30}" text-anchor="end">'
               f'µs after {t0 / 1e3:g} ms (simulated)</text>')
    out.append("</svg>")
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
