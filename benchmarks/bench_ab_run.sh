#!/usr/bin/env bash
# A/B of the default `tsrate run` (empty warehouse each time): this checkout against another
# one (e.g. `git worktree add /tmp/old <commit>`), alternated PAIRS times, one venv for both.
#   bash benchmarks/bench_ab_run.sh /tmp/old [PAIRS]
# Prints per run: wall, 1-min load, each phase, the forecast CPU-seconds per system and the
# Python models' own time; overhead = wall - (forecast CPU-s / 2 cores) - Python models.
set -euo pipefail
NEW="$(cd "$(dirname "$0")/.." && pwd)"
OLD="$(cd "$1" && pwd)"
PAIRS="${2:-2}"
TSRATE="$NEW/.venv/bin/tsrate"
for _ in $(seq 1 "$PAIRS"); do
    for side in new old; do
        root="$NEW"; [ "$side" = old ] && root="$OLD"
        work="$(mktemp -d /tmp/bench-ab-XXXX)"
        started=$(date +%s.%N)
        (cd "$root" && PYTHONPATH="$root/src:$root" TSRATE_WAREHOUSE="$work/tsrate.duckdb" \
            DBT_TARGET_PATH="$work/target" "$TSRATE" run >"$work/log" 2>&1) || echo "$side: FAILED"
        ended=$(date +%s.%N)
        phases=$(grep -o "[a-z() ]*: done in [0-9.]*s" "$work/log" | sed 's/: done in /=/' | tr '\n' ' ')
        cpu=$(grep -o "\[arima [^]]*\]" "$work/log" || true)
        python_s=$(grep -o "Python models' own time [0-9.]*s" "$work/log" || true)
        printf '%s wall %.1f load %s |%s| %s | %s\n' "$side" "$(echo "$ended - $started" | bc)" \
            "$(cut -d' ' -f1 /proc/loadavg)" "$phases" "$cpu" "$python_s"
        rm -rf "$work"
    done
done
