#!/usr/bin/env bash
# Where the real kernel's threads spend their CPU: runs `uringsim host ARGS...` under a
# system-wide `perf record` (cpu-clock samples with call chains), then bench/host_profile.py
# prints, per thread class (client, server, io-wq worker, ...), the functions the samples fell in.
# On a guest whose timer interrupt can only land where interrupts are enabled (this PVM guest:
# samples pile up on pvm_irq_enable), a sample at an interrupt-enable is charged to the function
# that re-enabled them, marked "(irqs off)": the time was spent somewhere in its section with
# interrupts off. A figure, not a test; sampling at 999 Hz per CPU costs little, but the run
# includes the host's quiet wait and warm-up, which only the non-echo threads fill.
# With MODEL=RESULTS.json it prints the model's profile of the same point beside it.
# Needs root (system-wide perf) and perf. Stops perf and the host run on exit and on a signal.
# Usage: bench/host_profile.sh SCENARIO [uringsim host options...]   (keeps perf.data if KEEP=DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/tools/uringsim}
[ "$(id -u)" = 0 ] || { echo "host_profile: needs root (system-wide perf)" >&2; exit 2; }
command -v perf >/dev/null || { echo "host_profile: perf is not installed" >&2; exit 2; }
OUT=$(mktemp -d)
host_pid=
perf_pid=
cleanup() {
  [ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null || true
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" 2>/dev/null || true
  fi
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$OUT"/. "$KEEP"/; fi
  rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
perf record -q -F 999 -e cpu-clock -a -g -o "$OUT/perf.data" >"$OUT/perf.log" 2>&1 &
perf_pid=$!
sleep 0.5  # perf has opened its events
kill -0 "$perf_pid" 2>/dev/null || { cat "$OUT/perf.log" >&2; perf_pid=; echo "host_profile: perf record did not start" >&2; exit 2; }
"$BIN" host "$@" --quiet --out "$OUT/host" >"$OUT/host.log" 2>&1 &
host_pid=$!
wait "$host_pid" || { cat "$OUT/host.log" >&2; host_pid=; exit 1; }
host_pid=
kill -INT "$perf_pid"
wait "$perf_pid" || true
perf_pid=
perf script -i "$OUT/perf.data" -F comm,ip,sym 2>/dev/null >"$OUT/samples.txt"
python3 bench/host_profile.py "$OUT/samples.txt" "$OUT/host/results.json" ${MODEL:+--model "$MODEL"} --per-request
