"""Benchmark: the build's SQL models outside dbt's per-node machinery, for comparison.

Takes a warehouse a `tsrate run` built and the dbt target folder it left, copies the
warehouse (same file name: dbt's relation names carry it), and runs every SQL model's
compiled SQL (``manifest.json``'s ``compiled_code``) in ONE DuckDB connection, in the order
dbt built them (``build_run_results.json``): ``create or replace view|table ... as``, then
the model's column comments (what ``persist_docs`` writes). Python models, seeds, contract
checks and tests are left out: this measures what dbt's own Python adds per SQL node (its
materialization macros, adapter calls, events), not a replacement for ``dbt build``.

    .venv/bin/python benchmarks/bench_build_compiled_sql.py WAREHOUSE TARGET [--repeats 3]

Prints dbt's execution time of the same nodes (their threads' wall, summed) beside the
median wall and CPU time of the one-connection run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import duckdb


def sql_models(target: Path) -> list[dict]:
    """The SQL models dbt built, in its build order, from the target folder's artifacts."""
    manifest = json.loads((target / "manifest.json").read_text())
    results = json.loads((target / "build_run_results.json").read_text())["results"]
    models = []
    for result in results:
        node = manifest["nodes"].get(result["unique_id"])
        if node and node["resource_type"] == "model" and node["language"] == "sql":
            models.append({**node, "dbt_seconds": result["execution_time"]})
    return models


def statements(model: dict) -> list[str]:
    """The model's DDL and its column comments."""
    kind = "view" if model["config"]["materialized"] == "view" else "table"
    relation = model["relation_name"]
    out = [f"create or replace {kind} {relation} as {model['compiled_code']}"]
    for name, column in model.get("columns", {}).items():
        if column.get("description"):
            text = column["description"].replace("'", "''")
            out.append(f"comment on column {relation}.\"{name}\" is '{text}'")
    return out


def run_once(warehouse: Path, models: list[dict]) -> tuple[float, float]:
    """(wall, CPU) seconds of every model's statements in one connection."""
    con = duckdb.connect(str(warehouse))
    try:
        started, cpu = time.perf_counter(), time.process_time()
        for model in models:
            for statement in statements(model):
                con.execute(statement)
        return time.perf_counter() - started, time.process_time() - cpu
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    models = sql_models(options.target)
    if not models:
        raise SystemExit(f"no SQL model in {options.target}/build_run_results.json")
    walls, cpus = [], []
    with tempfile.TemporaryDirectory(prefix="tsrate-sql-") as folder:
        copy = Path(folder) / options.warehouse.name
        for _ in range(options.repeats):
            shutil.copy(options.warehouse, copy)
            wall, cpu = run_once(copy, models)
            walls.append(wall)
            cpus.append(cpu)
    views = sum(m["config"]["materialized"] == "view" for m in models)
    dbt = sum(m["dbt_seconds"] for m in models)
    print(f"{len(models)} SQL models ({views} views, {len(models) - views} tables)")
    print(f"dbt build: {dbt:.2f} s of its threads' time for these nodes")
    print(
        f"one connection: median {statistics.median(walls):.2f} s wall, "
        f"{statistics.median(cpus):.2f} CPU-s ({options.repeats} runs)"
    )


if __name__ == "__main__":
    main()
