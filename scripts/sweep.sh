#!/usr/bin/env bash
# Sweeps one scenario field over values for each variant and prints a table of throughput, mean
# latency and CPU. A thin loop over `uringsim run --set` (the `sweep` command of a later issue
# will replace it).
# Usage: scripts/sweep.sh SCENARIO FIELD "v1 v2 ..." "variant1 variant2" [extra uringsim args...]
# Example: scripts/sweep.sh scenarios/seeds/async-hybrid.json kernel.iowq.max_unbound "1 2 4 8" "blocking hybrid"
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${URINGSIM:-build/tools/uringsim}
scenario=$1 field=$2 values=$3 variants=$4
shift 4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
jobs=${JOBS:-$(nproc)}
for v in $values; do
  for var in $variants; do
    echo "$BIN run $scenario --variant $var --set $field=$v --quiet --out $out/$var-$v $*"
  done
done | xargs -P "$jobs" -I{} sh -c '{}'
get() { sed -n "s/^    \"$2\": \([0-9.e+-]*\),\{0,1\}$/\1/p" "$1" | head -1; }
printf '%-12s' "$field"
for var in $variants; do printf ' %14s %12s %8s' "$var ops/s" "mean us" "cpu %"; done
echo
for v in $values; do
  printf '%-12s' "$v"
  for var in $variants; do
    r=$out/$var-$v/results.json
    printf ' %14.0f %12.1f %8.1f' "$(get "$r" ops_per_s)" "$(get "$r" mean)" "$(get "$r" total_pct)"
  done
  echo
done
