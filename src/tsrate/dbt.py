"""Run dbt against the warehouse in a child process.

A child process is the surest way to honour DuckDB's single-writer rule: when dbt exits,
the file is released, whatever the adapter kept open. Output is streamed line by line to
the caller (a Prefect logger in flows), so long builds show progress.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tsrate import TsrateError
from tsrate.config import project_dir, warehouse_path

log = logging.getLogger("tsrate.dbt")


class DbtError(TsrateError):
    """dbt exited non-zero; the message carries the tail of its output."""


def run_dbt(
    args: Sequence[str],
    dbt_vars: dict | None = None,
    warehouse: Path | None = None,
    on_line: Callable[[str], None] | None = None,
    target_path: Path | None = None,
) -> list[str]:
    """Run ``dbt <args>`` in the project; return its output lines or raise :class:`DbtError`."""
    project = project_dir()
    warehouse = Path(warehouse or warehouse_path()).resolve()
    env = dict(os.environ)
    env["TSRATE_WAREHOUSE"] = str(warehouse)
    env["DBT_PROFILES_DIR"] = str(project)
    env.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    env.setdefault("DO_NOT_TRACK", "1")
    if target_path is not None:
        env["DBT_TARGET_PATH"] = str(target_path)
    env["TSRATE_DBT_PARENT_PID"] = str(os.getpid())  # the child dies with us (crash safety)
    command = [sys.executable, "-m", "tsrate.dbt_child", *args, "--project-dir", str(project)]
    if target_path is not None:
        command += ["--log-path", str(Path(target_path) / "logs")]
    if dbt_vars:
        command += ["--vars", json.dumps(dbt_vars)]
    say = on_line or log.info
    started = time.perf_counter()
    lines: list[str] = []
    process = subprocess.Popen(
        command,
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    assert process.stdout is not None
    for line in process.stdout:
        line = line.rstrip()
        lines.append(line)
        if line.strip():
            say(line)
    code = process.wait()
    if code != 0:
        tail = "\n".join(lines[-40:])
        raise DbtError(
            f"dbt {' '.join(args)} failed (exit {code}) after "
            f"{time.perf_counter() - started:.1f}s:\n{tail}"
        )
    return lines


def build(
    run_id: str | None = None,
    warehouse: Path | None = None,
    on_line: Callable[[str], None] | None = None,
    select: str | None = None,
    target_path: Path | None = None,
) -> list[str]:
    """``dbt build`` (seeds, models, tests, unit tests) for ``run_id`` (default: latest run).

    First brings the raw schema up to date (tables added by newer tsrate versions are
    created empty), so a warehouse written by an older version still builds.
    """
    from tsrate.warehouse import connect

    with connect(Path(warehouse or warehouse_path())):
        pass
    args = ["build"]
    if select:
        # a partial build runs only tests whose every parent is selected
        args += ["--select", select, "--indirect-selection", "cautious"]
    return run_dbt(args, {"run_id": run_id or "latest"}, warehouse, on_line, target_path)


def docs(
    warehouse: Path | None = None,
    on_line: Callable[[str], None] | None = None,
    target_path: Path | None = None,
) -> Path:
    """``dbt docs generate --static`` into ``target_path`` (default ``<warehouse dir>/docs``).

    The site documents every model, column, test and exposure, with the catalog (column
    types) read from the live warehouse; ``static_index.html`` is one self-contained file
    that opens offline. Returns the folder. Needs a built warehouse and no running writer.
    """
    warehouse = Path(warehouse or warehouse_path()).resolve()
    if not warehouse.exists():
        raise TsrateError(f"no warehouse at {warehouse}: run `tsrate run` before `tsrate docs`")
    target = Path(target_path or warehouse.parent / "docs").resolve()
    run_dbt(["docs", "generate", "--static"], {"run_id": "latest"}, warehouse, on_line, target)
    return target
