"""A/B of `tsrate build` per node kind: this checkout against others, alternated.

    .venv/bin/python benchmarks/bench_ab_build_nodes.py WAREHOUSE OTHER_CHECKOUT [...] [--pairs N]

The other checkouts are named by their folder (``before`` when there is one); this one is
``after``. Each side gets its own copy of WAREHOUSE (a forecasted default warehouse; never modified)
and its own target folder, one warm-up build (dbt's partial-parse file in place, as every
build after the first finds it), then PAIRS builds each, alternated (each round's order is the
previous one's rotated by one side). Per build: wall, CPU of the build's process tree (user + sys of the waited-for
children: the run process and its dbt child), the 1-min load, and from dbt's
``run_results.json`` the summed execution time of the SQL views, the SQL tables and the
Python models (both dbt threads' time). Medians per side at the end. Both sides use this
checkout's virtual environment; the other checkout's ``src`` is put first on PYTHONPATH for
its builds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TSRATE = Path(sys.executable).parent / "tsrate"


def node_times(target: Path, manifest: dict) -> dict[str, float]:
    results = json.loads((target / "run_results.json").read_text())["results"]
    sums = {"views": 0.0, "sql tables": 0.0, "python": 0.0}
    for result in results:
        node = manifest.get(result["unique_id"])
        if node is None:
            continue
        if node.get("language") == "python":
            sums["python"] += result["execution_time"]
        elif node["config"].get("materialized") == "view":
            sums["views"] += result["execution_time"]
        elif node["config"].get("materialized") == "table":
            sums["sql tables"] += result["execution_time"]
    return sums


def _no_publish(root: Path, env: dict[str, str]) -> list[str]:
    """``--no-publish`` where the checkout's `tsrate build` publishes (it has the flag), so
    both sides time the build alone; nothing for a checkout from before."""
    shown = subprocess.run(
        [str(TSRATE), "build", "--help"], cwd=root, env=env, capture_output=True, text=True
    )
    return ["--no-publish"] if "--no-publish" in shown.stdout else []


def build(root: Path, folder: Path) -> dict[str, float]:
    env = dict(
        os.environ,
        TSRATE_WAREHOUSE=str(folder / "tsrate.duckdb"),
        DBT_TARGET_PATH=str(folder / "target"),
        PYTHONPATH=f"{root / 'src'}:{root}",
    )
    flags = _no_publish(root, env)  # asked before the clock and the CPU count start
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(
        [str(TSRATE), "build", *flags],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"build failed in {root}:\n{(result.stdout + result.stderr)[-3000:]}")
    manifest = json.loads((folder / "target" / "manifest.json").read_text())["nodes"]
    return {
        "wall": wall,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "load": float(Path("/proc/loadavg").read_text().split()[0]),
        **node_times(folder / "target", manifest),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path)
    parser.add_argument("others", type=Path, nargs="+", help="the other checkouts")
    parser.add_argument("--pairs", type=int, default=4)
    args = parser.parse_args()
    if len(args.others) == 1:
        sides = {"before": args.others[0].resolve()}
    else:
        sides = {other.resolve().name: other.resolve() for other in args.others}
    sides["after"] = ROOT
    work = Path(tempfile.mkdtemp(prefix="bench-ab-nodes-"))
    rows: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    try:
        for side, root in sides.items():
            (work / side).mkdir()
            shutil.copyfile(args.warehouse, work / side / "tsrate.duckdb")
            warm = build(root, work / side)
            print(f"{side:6} warm-up wall {warm['wall']:.1f}s", flush=True)
        order = list(sides)
        for pair in range(args.pairs):
            shift = pair % len(order)
            for side in order[shift:] + order[:shift]:
                row = build(sides[side], work / side)
                rows[side].append(row)
                print(
                    f"{side:6} wall {row['wall']:5.1f}s cpu {row['cpu']:5.1f}s load {row['load']:.2f}"
                    f" | views {row['views']:.2f}s sql tables {row['sql tables']:.2f}s"
                    f" python {row['python']:.2f}s",
                    flush=True,
                )
        for side in sides:
            keys = ("wall", "cpu", "views", "sql tables", "python")
            print(
                f"median {side:6} "
                + " ".join(f"{k} {statistics.median(r[k] for r in rows[side]):.2f}s" for k in keys)
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
