"""Benchmark: `tsrate build` against the direct execution of the same compiled SQL.

On a warehouse that holds a forecasted default study (given, or made by one `tsrate run`),
copied to a temporary folder:

* ``tsrate build --no-publish`` (the build without its publish) is run REPEATS times in a
  child process after one warm-up build (the
  warm-up leaves dbt's partial-parse file in place, as every build after the first finds
  it); the median wall time is the build figure;
* the direct figure is the same compiled SQL run in ONE DuckDB connection: every SQL model
  (``create or replace table/view ... as <compiled SQL>``, in dependency order) and every
  data test (wrapped as dbt wraps it: ``select count(*) ... from (<test SQL>)``). Python
  models are not re-run there (their tables stay from the build); their own compute is
  printed apart, from dbt's ``run_results.json``, so the ratio can be read both ways.

    .venv/bin/python benchmarks/bench_build.py [--warehouse FILE] [--repeats N]

The machine is shared: the load (``uptime``) is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()


def _env(warehouse: Path, target: Path) -> dict[str, str]:
    env = dict(os.environ, TSRATE_WAREHOUSE=str(warehouse), DBT_TARGET_PATH=str(target))
    env.setdefault("PYTHONPATH", f"{ROOT / 'src'}:{ROOT}")
    return env


def make_warehouse(folder: Path) -> Path:
    """One default `tsrate run` into ``folder`` (minutes)."""
    warehouse = folder / "tsrate.duckdb"
    print("building a default-study warehouse with `tsrate run` (minutes) ...", flush=True)
    result = subprocess.run(
        [str(BIN / "tsrate"), "run"],
        cwd=ROOT,
        env=_env(warehouse, folder / "target-run"),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"tsrate run failed:\n{(result.stdout + result.stderr)[-3000:]}")
    return warehouse


def time_build(warehouse: Path, target: Path) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run(
        # the build alone, as before `tsrate build` published: the figure is the build's
        [str(BIN / "tsrate"), "build", "--no-publish"],
        cwd=ROOT,
        env=_env(warehouse, target),
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"tsrate build failed:\n{(result.stdout + result.stderr)[-3000:]}")
    summary = [
        line
        for line in result.stdout.splitlines()
        if line.startswith(("data tests:", "built ", "Done. "))
    ]
    return wall, " | ".join(summary)


def python_model_seconds(target: Path) -> float:
    """Execution time of the Python models in the last build (dbt's run_results.json)."""
    path = target / "run_results.json"
    if not path.exists():
        return float("nan")
    results = json.loads(path.read_text())["results"]
    manifest = json.loads((target / "manifest.json").read_text())["nodes"]
    return sum(
        r["execution_time"]
        for r in results
        if manifest.get(r["unique_id"], {}).get("language") == "python"
    )


def compiled_nodes(warehouse: Path, target: Path) -> tuple[list[dict], list[dict]]:
    """(SQL models in dependency order, data tests) of the compiled core project."""
    result = subprocess.run(
        [str(BIN / "dbt"), "compile", "--project-dir", str(ROOT), "--profiles-dir", str(ROOT),
         "--exclude", "tag:understanding", "tag:interpretability", "tag:reasoning"],
        cwd=ROOT,
        env=_env(warehouse, target),
        capture_output=True,
        text=True,
    )  # fmt: skip
    if result.returncode != 0:
        raise SystemExit(f"dbt compile failed:\n{result.stdout[-3000:]}")
    nodes = json.loads((target / "manifest.json").read_text())["nodes"]
    core = {
        k: n
        for k, n in nodes.items()
        if n.get("compiled_code") is not None
        and not {"understanding", "interpretability", "reasoning"} & set(n.get("tags", []))
    }
    order: list[str] = []
    seen: set[str] = set()

    def visit(key: str) -> None:
        if key in seen or key not in core:
            return
        seen.add(key)
        for parent in core[key]["depends_on"]["nodes"]:
            visit(parent)
        order.append(key)

    for key in sorted(core):
        visit(key)
    models = [
        core[k]
        for k in order
        if core[k]["resource_type"] == "model" and core[k]["language"] == "sql"
    ]
    tests = [core[k] for k in order if core[k]["resource_type"] == "test"]
    return models, tests


def direct_sql(warehouse: Path, models: list[dict], tests: list[dict]) -> float:
    """Seconds to run every SQL model and data test in one DuckDB connection."""
    con = duckdb.connect(str(warehouse))
    con.execute("set memory_limit = '4GB'")
    started = time.perf_counter()
    for node in models:
        kind = "view" if node["config"]["materialized"] in ("view", "ephemeral") else "table"
        other = "table" if kind == "view" else "view"
        relation = node["relation_name"]
        exists = con.execute(
            "select table_type from information_schema.tables "
            "where table_schema = ? and table_name = ?",
            [node["schema"], node["alias"]],
        ).fetchone()
        if exists and (exists[0] == "VIEW") != (kind == "view"):
            con.execute(f"drop {other} {relation}")
        con.execute(f"create or replace {kind} {relation} as {node['compiled_code']}")
    failures = 0
    for node in tests:
        config = node["config"]
        row = con.execute(
            f"select {config['fail_calc']} {config['error_if']} from ({node['compiled_code']}) t"
        ).fetchone()
        failures += bool(row[0])
    seconds = time.perf_counter() - started
    con.close()
    if failures:
        print(f"warning: {failures} data tests failed in the direct run")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", help="a warehouse with a forecasted default study")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load before: {load()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        tmp = Path(tmp)
        source = Path(args.warehouse) if args.warehouse else make_warehouse(tmp / "made")
        warehouse = tmp / "tsrate.duckdb"
        shutil.copyfile(source, warehouse)
        target = tmp / "target"
        warm, _ = time_build(warehouse, target)
        print(f"warm-up build (writes the partial-parse file): {warm:.1f}s", flush=True)
        walls = []
        for index in range(args.repeats):
            wall, summary = time_build(warehouse, target)
            walls.append(wall)
            print(f"tsrate build {index + 1}/{args.repeats}: {wall:.1f}s  {summary}", flush=True)
        python_s = python_model_seconds(target)
        models, tests = compiled_nodes(warehouse, tmp / "target-direct")
        directs = [direct_sql(warehouse, models, tests) for _ in range(args.repeats)]
    build, direct = statistics.median(walls), statistics.median(directs)
    print(f"load after: {load()}")
    print(
        f"direct SQL ({len(models)} SQL models + {len(tests)} data tests, one connection): "
        f"median {direct:.2f}s (range {min(directs):.2f}-{max(directs):.2f}s)"
    )
    print(
        f"tsrate build: median {build:.1f}s (range {min(walls):.1f}-{max(walls):.1f}s); "
        f"Python models' own compute {python_s:.1f}s"
    )
    print(
        f"ratio build / direct SQL: {build / direct:.1f}x; "
        f"without the Python models' compute: {(build - python_s) / direct:.1f}x"
    )


if __name__ == "__main__":
    main()
