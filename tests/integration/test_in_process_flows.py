"""Flows run in process from the command line (no Prefect API): a fresh interpreter shows
that no Prefect server, temporary or other, is started for them, that Prefect is not even
imported (about a core-second a command), and what they store."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import duckdb
import pandas as pd


def _environment(tmp_path, mode: str, **extra: str) -> dict[str, str]:  # noqa: ANN001
    """This environment without a Prefect API, with ``TSRATE_PREFECT=mode`` and a Prefect
    home of its own (no user profile can name an API)."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(TSRATE_PREFECT=mode, PREFECT_HOME=str(tmp_path / "prefect-home"), **extra)
    return env


def test_ingest_of_a_file_runs_in_process_without_a_prefect_server(tmp_path):
    """`tsrate run --file` ingests through flows.ingest outside any flow run: the file is
    read and stored, and no Prefect server (temporary or other) is started for it."""
    dates = pd.bdate_range("2022-01-03", periods=30)
    frame = pd.DataFrame(
        {"date": dates.strftime("%Y-%m-%d"), "ticker": "AAPL", "close": range(100, 130)}
    )
    csv = tmp_path / "prices.csv"
    frame.to_csv(csv, index=False)
    warehouse = tmp_path / "w.duckdb"
    script = textwrap.dedent(
        f"""
        import logging, sys
        seen = []
        class Catch(logging.Handler):
            def emit(self, record):
                seen.append(record.getMessage())
        logging.getLogger().addHandler(Catch())
        logging.getLogger().setLevel(logging.INFO)
        from tsrate.platform.orchestration import call
        from flows.ingest import ingest_flow
        stored = call(ingest_flow, source="file", path={str(csv)!r}, warehouse={str(warehouse)!r})
        print(stored)
        print(any("temporary server" in line for line in seen))
        print(sorted(name for name in sys.modules if name.split(".")[0] == "prefect"))
        """
    )
    env = _environment(tmp_path, "auto")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-3] == "{'AAPL': 30}"
    assert lines[-2] == "False"
    assert lines[-1] == "[]"  # Prefect never imported: the flow and its tasks ran plain
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("select count(*), sum(close) from raw.prices").fetchone() == (
            30,
            sum(range(100, 130)),
        )
    finally:
        con.close()


#: a tiny offline reasoning suite run, no build
SUITE_RUN = ["suite", "reasoning", "run", "--scenarios", "4", "--forecasts", "2",
             "--fracast", "0", "--no-build"]  # fmt: skip


def _one_suite_run_answered(warehouse) -> None:  # noqa: ANN001
    """The warehouse holds one suite run and the answers it stored."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        status = con.execute("select status from raw.suite_runs").fetchall()
        answered = con.execute("select count(*) from raw.rsn_responses").fetchone()[0]
    finally:
        con.close()
    assert len(status) == 1 and answered > 0


def test_a_suite_run_from_the_command_line_runs_in_process(tmp_path):
    """`tsrate suite reasoning run` without a Prefect API runs its flow and its task as
    plain functions (no temporary Prefect server, Prefect not imported), logging to the
    tsrate.run logger."""
    warehouse = tmp_path / "w.duckdb"
    env = _environment(tmp_path, "auto", TSRATE_WAREHOUSE=str(warehouse))
    command = [sys.executable, "-X", "importtime", "-m", "tsrate.cli", *SUITE_RUN]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    imports = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert any(line.split("|")[-1].strip() == "tsrate" for line in imports)  # listed
    assert not [line for line in imports if line.split("|")[-1].strip().startswith("prefect")]
    output = done.stdout + "\n".join(
        line for line in done.stderr.splitlines() if not line.startswith("import time:")
    )
    assert "temporary server" not in output
    assert "tsrate.run" in output and "prompts answered" in output  # the task's own log line
    _one_suite_run_answered(warehouse)


def test_a_flow_of_steps_is_orchestrated_by_prefect_when_asked(tmp_path):
    """`TSRATE_PREFECT=always tsrate suite reasoning run`: the CLI loads the flow before
    Prefect (its flow and task are tsrate's plain Steps), then orchestrates it on a
    temporary server: the flow and its task become Prefect's own runs (the engine's state
    lines) and the answers are stored as without Prefect."""
    warehouse = tmp_path / "w.duckdb"
    env = _environment(tmp_path, "always", TSRATE_WAREHOUSE=str(warehouse))
    command = [sys.executable, "-m", "tsrate.cli", *SUITE_RUN]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    lines = output.splitlines()
    # Prefect ran the flow and its task (the engine's own loggers and state lines)
    for logger in ("prefect.flow_runs", "prefect.task_runs"):
        assert any(logger in line and "Finished in state Completed()" in line for line in lines), (
            logger,
            output[-3000:],
        )
    assert "prompts answered" in output  # the task's own log line, now Prefect's run logger
    # the run's logs reached the server before tsrate stopped it (no late shipping error)
    assert "Error logging to API" not in output
    _one_suite_run_answered(warehouse)
