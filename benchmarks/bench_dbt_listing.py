"""Benchmark: the CPU of the dbt child's data-test listing (``dbt ls`` of the core's tests),
with dbt's log file and graph.gpickle (``before``) and without them (``after``: what
``tsrate.platform.dbt_child`` runs), in one process on one parsed manifest, alternated.

Needs a dbt target folder that a run left (partial parse) and the warehouse's folder (the
child's working folder); nothing is written to the warehouse. Prints each variant's CPU
seconds per listing (the first round left out: dbt's first-call costs), their medians and
whether both listed the same tests.

    .venv/bin/python benchmarks/bench_dbt_listing.py WAREHOUSE TARGET [--rounds 6]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from tsrate.platform.dbt_runner import _build_args, _command


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--rounds", type=int, default=6)
    options = parser.parse_args()
    command, env, cwd = _command(_build_args(None), None, options.warehouse, options.target, None)
    os.environ.update(env)
    os.chdir(cwd)
    from dbt.cli.main import dbtRunner

    common = command[command.index("--project-dir") :]
    excluded = command[command.index("--exclude") : command.index("--project-dir")]
    parsed = dbtRunner().invoke(["parse", "--no-write-json", *common])
    runner = dbtRunner(manifest=parsed.result)
    listing = ["ls", "--resource-type", "test", *excluded, "--output", "json",
               "--output-keys", "unique_id", "--log-level", "none"]  # fmt: skip
    variants = {
        "before": listing,
        "after": [*listing, "--log-level-file", "none", "--no-write-json"],
    }
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    listed: dict[str, list[str]] = {}
    for _ in range(options.rounds):
        for name, args in variants.items():
            started = time.process_time()
            result = runner.invoke([*args, *common])
            cpu[name].append(time.process_time() - started)
            listed[name] = sorted(json.loads(item)["unique_id"] for item in result.result)
    for name, seconds in cpu.items():
        kept = seconds[1:] or seconds
        print(f"{name}: CPU {' '.join(f'{s:.2f}' for s in kept)} s; median "
              f"{statistics.median(kept):.3f} s; {len(listed[name])} tests")  # fmt: skip
    print(f"same tests listed: {listed['before'] == listed['after']}")


if __name__ == "__main__":
    main()
