#!/usr/bin/env bash
# Every seed and validation scenario run by two uringsim binaries: a markdown table of throughput,
# p50, p99 and total CPU for each, and the change (for docs/performance.md when the engine's event
# order or a mechanism changes results). Usage: bench/before_after.sh OLD_BINARY [NEW_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?usage: bench/before_after.sh OLD_BINARY [NEW_BINARY]}
NEW=${2:-build/tools/uringsim}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
runs=(
  "scenarios/seeds/async-hybrid.json --variant blocking"
  "scenarios/seeds/async-hybrid.json --variant hybrid"
  "scenarios/seeds/sqpoll-deputy.json --variant without"
  "scenarios/seeds/sqpoll-deputy.json --variant with"
  "scenarios/seeds/iowq-lock-split.json --variant global"
  "scenarios/seeds/iowq-lock-split.json --variant split"
  "scenarios/seeds/hybrid-review.json --variant hybrid-v1 --allow-violations"
  "scenarios/seeds/hybrid-review.json --variant hybrid --allow-violations"
  "scenarios/validation/mm1.json --variant rho08"
  "scenarios/validation/mm1.json --variant rho09"
  "scenarios/validation/md1.json"
  "scenarios/validation/mmc.json"
  "scenarios/validation/mmc.json --variant c20"
  "scenarios/validation/iowq-nop.json --variant global"
  "scenarios/validation/iowq-nop.json --variant split"
  "scenarios/validation/iowq-nop.json --variant inline"
)
summary() {  # ops/s p50 p99 cpu of a results.json
  python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); l=r["latency_us"]
f=lambda v: "-" if v is None else v
print(r["throughput"]["ops_per_s"], f(l.get("p50")), f(l.get("p99")), r["cpu"]["total_pct"])' "$1"
}
change() { python3 -c 'import sys
a,b=sys.argv[1],sys.argv[2]
print("-" if "-" in (a,b) or float(a)==0 else "%+.1f %%" % (100*(float(b)/float(a)-1)))' "$1" "$2"; }
echo "| run | throughput ops/s: before → after (change) | p50 µs | p99 µs | CPU % |"
echo "|---|---|---|---|---|"
i=0
for r in "${runs[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  "$OLD" run $r --quiet --out "$OUT/old$i" >/dev/null
  # shellcheck disable=SC2086
  "$NEW" run $r --quiet --out "$OUT/new$i" >/dev/null
  read -r t0 p50a p99a c0 < <(summary "$OUT/old$i/results.json")
  read -r t1 p50b p99b c1 < <(summary "$OUT/new$i/results.json")
  fmt() { python3 -c 'import sys; v=sys.argv[1]
if v == "-": print(v)
else:
    x = float(v); print(format(round(x), ",").replace(",", " ") if x >= 1000 else "%.4g" % x)' "$1"; }
  echo "| \`${r#scenarios/}\` | $(fmt "$t0") → $(fmt "$t1") ($(change "$t0" "$t1")) | $(fmt "$p50a") → $(fmt "$p50b") ($(change "$p50a" "$p50b")) | $(fmt "$p99a") → $(fmt "$p99b") ($(change "$p99a" "$p99b")) | $(fmt "$c0") → $(fmt "$c1") ($(change "$c0" "$c1")) |"
done
