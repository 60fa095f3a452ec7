#!/usr/bin/env bash
# A/B of `tsrate build` on a copy of one forecasted warehouse: this checkout against another
# one (e.g. `git archive <commit> | tar -x -C /tmp/old`), alternated PAIRS times, one venv for
# both, after one warm-up build per side (dbt's partial-parse file in place, as every build
# after the first finds it).
#   bash benchmarks/bench_ab_build.sh WAREHOUSE /tmp/old [PAIRS]
# Prints per build: wall, 1-min load, and the time of the rating_stability and
# perturbation_effects nodes (dbt's run_results.json).
set -euo pipefail
NEW="$(cd "$(dirname "$0")/.." && pwd)"
SOURCE="$1"
OLD="$(cd "$2" && pwd)"
PAIRS="${3:-3}"
TSRATE="$NEW/.venv/bin/tsrate"
work="$(mktemp -d /tmp/bench-ab-build-XXXX)"
nodes() {
    "$NEW/.venv/bin/python" - "$1/run_results.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
times = {r["unique_id"].split(".")[-1]: r["execution_time"] for r in results}
print(" ".join(f"{k}={times.get(k, float('nan')):.2f}s" for k in ("rating_stability", "perturbation_effects")))
PY
}
build() {  # side, label
    local root="$NEW"; [ "$1" = old ] && root="$OLD"
    started=$(date +%s.%N)
    (cd "$root" && PYTHONPATH="$root/src:$root" TSRATE_WAREHOUSE="$work/$1/tsrate.duckdb" \
        DBT_TARGET_PATH="$work/$1/target" "$TSRATE" build >"$work/$1/log" 2>&1) || echo "$1: FAILED"
    ended=$(date +%s.%N)
    printf '%s %s wall %.1f load %s | %s\n' "$1" "$2" "$(echo "$ended - $started" | bc)" \
        "$(cut -d' ' -f1 /proc/loadavg)" "$(nodes "$work/$1/target")"
}
for side in new old; do
    mkdir -p "$work/$side" && cp "$SOURCE" "$work/$side/tsrate.duckdb"
    build "$side" warm-up
done
for _ in $(seq 1 "$PAIRS"); do
    for side in new old; do build "$side" timed; done
done
rm -rf "$work"
