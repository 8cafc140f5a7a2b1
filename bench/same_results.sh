#!/usr/bin/env bash
# Every shipped scenario (seeds, validation, twin, designs) run by two uringsim binaries with short
# windows: lists each run whose results differ, that is a value of the old results.json that the
# new one lacks or changes (new keys may be added; the echoed scenario and the tool's version are
# left out). Exit 1 if any does. For restructuring that must leave results unchanged.
# Usage: bench/same_results.sh OLD_BINARY [NEW_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?usage: bench/same_results.sh OLD_BINARY [NEW_BINARY]}
NEW=${2:-build/tools/uringsim}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
differ=0
n=0
for f in scenarios/seeds/*.json scenarios/validation/*.json scenarios/twin/*.json scenarios/designs/*.json; do
  [ -e "$f" ] || continue
  variants=$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1])).get("variants", {})) or "-")' "$f")
  for v in $variants; do
    args=("$f" --quiet --allow-violations --set duration_ms=40 --set warmup_ms=5)
    [ "$v" = "-" ] || args+=(--variant "$v")
    n=$((n + 1))
    "$OLD" run "${args[@]}" --out "$OUT/old$n" >/dev/null 2>"$OUT/old$n.err" || true
    "$NEW" run "${args[@]}" --out "$OUT/new$n" >/dev/null 2>"$OUT/new$n.err" || true
    # run_info.json carries wall times and versions; results.json must match byte for byte, but
    # for the scenario it echoes (a new schema field adds its default there) and the tool version.
    if ! python3 - "$OUT/old$n/results.json" "$OUT/new$n/results.json" 2>/dev/null <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for r in (a, b):
    r.pop("scenario", None)
    r.pop("tool", None)
def same(x, y):  # every value the old results have, the new ones have too (new keys may be added)
    if isinstance(x, dict):
        return isinstance(y, dict) and all(k in y and same(v, y[k]) for k, v in x.items())
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(same(a, b) for a, b in zip(x, y))
    return x == y
sys.exit(0 if same(a, b) else 1)
PY
    then
      echo "differs: $f ${v/#-/}"
      differ=1
    fi
  done
done
echo "$n runs compared"
exit $differ
