#!/usr/bin/env bash
# Prints simulator speed figures (not a pass/fail test): simulated events per wall-second and the
# real-time factor (wall seconds per simulated second) for benchmark scenarios.
# Usage: bench/bench.sh [uringsim-binary]   (default: build/tools/uringsim)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/tools/uringsim}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
div() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }
field() { sed -n "s/^  \"$1\": \(.*\),\?$/\1/p" "$2" | tr -d ','; }
# The bare engine's rate on this machine now: two SimGrid actors handing a token back and forth
# (sim/bench/pingpong.cpp); each scenario's events/s is also shown as a fraction of it.
PINGPONG=${PINGPONG:-$(dirname "$BIN")/../sim/simgrid_pingpong}
BARE=$("$PINGPONG" 500000 | awk '{print $3}')
printf 'bare SimGrid ping-pong: %.0f events/s\n' "$BARE"
printf '%-28s %12s %10s %14s %10s %8s %10s %8s %9s\n' scenario simulated_s wall_s events events/s of_bare \
  events/req RTF RSS_MiB
run() {
  local label=$1; shift
  "$BIN" run "$@" --quiet --out "$OUT/$label" >/dev/null
  local ri="$OUT/$label/run_info.json"
  local eps per
  eps=$(field events_per_s "$ri")
  per=$(field events_per_request "$ri")
  printf '%-28s %12s %10.3f %14s %10.0f %8.2f %10s %8.3f %9.0f\n' "$label" "$(field simulated_s "$ri")" \
    "$(field wall_s "$ri")" "$(field events "$ri")" "$eps" "$(div "$eps" "$BARE")" \
    "$(printf '%.1f' "${per/null/0}")" "$(field real_time_factor "$ri")" "$(div "$(field peak_rss_bytes "$ri")" 1048576)"
  # Why the compute events happened (run_info.json compute_by_cause), per request: issue 14's census.
  jq -r --arg l "$label" 'if .events_per_request == null then [$l, "-", "-", "-", "-", "-"] else
    (.events / .events_per_request) as $n | .compute_by_cause as $c |
    [$l] + ([.events_by_kind.compute, $c.lock_busy, $c.other_thread_first, $c.tick + $c.resched, $c.always] |
    map(. / $n * 10 | round / 10)) end | join("\t")' "$ri" >>"$OUT/causes.tsv"
}
run "mmc c=4 rho=0.8 (1 s)" scenarios/validation/mmc.json --set duration_ms=900
run "mmc c=20 rho=0.8 (1 s)" scenarios/validation/mmc.json --variant c20 --set duration_ms=900
if [ -f scenarios/seeds/async-hybrid.json ]; then
  run "async-hybrid blocking (1 s)" scenarios/seeds/async-hybrid.json --variant blocking --set duration_ms=900
  run "async-hybrid hybrid (1 s)" scenarios/seeds/async-hybrid.json --variant hybrid --set duration_ms=900
fi
run "seed 001 with (1 s)" scenarios/seeds/sqpoll-deputy.json --variant with --set duration_ms=900
run "seed 003 global (0.1 s)" scenarios/seeds/iowq-lock-split.json --variant global
run "seed 003 split (0.1 s)" scenarios/seeds/iowq-lock-split.json --variant split
# The 2-core IOSQE_ASYNC echo of the host twin: 100 connections, one local client thread.
run "2-core async echo (0.5 s)" scenarios/twin/echo-pinned.json --variant async-4 --set workload.connections=100
run "2-core inline echo (0.5 s)" scenarios/twin/echo-pinned.json --variant inline --set workload.connections=100
printf '\ncompute events per request, by cause (run_info.json compute_by_cause)\n'
printf '%-28s %8s %10s %12s %14s %7s\n' scenario compute lock_busy other_first tick+resched always
while IFS=$'\t' read -r l c b o t a; do
  printf '%-28s %8s %10s %12s %14s %7s\n' "$l" "$c" "$b" "$o" "$t" "$a"
done <"$OUT/causes.tsv"
# Memory (issue 14): peak RSS of a long run and of many connections (run_info.json peak_rss_bytes,
# the same figure as /usr/bin/time -v's "Maximum resident set size").
printf '\n%-36s %12s %12s %14s\n' memory simulated_s wall_s peak_rss_MiB
mem() {
  local label=$1; shift
  "$BIN" run "$@" --quiet --out "$OUT/mem-$label" >/dev/null
  local ri="$OUT/mem-$label/run_info.json"
  printf '%-36s %12s %12.3f %14.1f\n' "$label" "$(field simulated_s "$ri")" "$(field wall_s "$ri")" \
    "$(div "$(field peak_rss_bytes "$ri")" 1048576)"
}
mem "seed 003 split (10 s)" scenarios/seeds/iowq-lock-split.json --variant split --set duration_ms=10000
mem "2-core echo, 100 000 connections" scenarios/twin/echo-pinned.json --variant inline --set workload.connections=100000
