"""An import stopped by Ctrl-C (SIGINT): what it leaves, and that `tsrate systems` and
`tsrate withdraw` agree on it.

Stopped in its build (`tsrate import` run as a user runs it, paused by the ``build`` test
stage once dbt finished its first model, then sent SIGINT), the import is whole: `tsrate
systems` lists it as not rated yet and names what rates it, and `tsrate withdraw` takes it
out, nothing deleted. Stopped while it records itself (a real SIGINT from its progress
hook, at the line it says before its end), it leaves no registration and no record, only its
stored forecasts, which the next import of the file reuses: neither command knows it, until
that import. The refusals of `tsrate withdraw`: tests/unit/test_withdraw_refusals.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.integration.imported_system import prediction_file, tsrate_cli
from tests.support.import_study import STUDY, STUDY_FLAGS, import_warehouse
from tests.support.systems_listing import listing_entries
from tests.support.warehouses import rows
from tsrate.config import project_dir
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts

pytestmark = pytest.mark.slow

FORECASTS = "select count(*) from raw.forecasts where system_id = ?"
REGISTERED = "select count(*) from raw.imported_systems where system_id = ?"
RECORDED = "select count(*) from raw.study_imports where system_id = ?"


def _entry(warehouse, system_id: str) -> str | None:
    """``system_id``'s entry among `tsrate systems`' imported systems (None: not listed)."""
    listed = tsrate_cli(warehouse, "systems")
    assert listed.returncode == 0, listed.stderr
    return next((e for e in listing_entries(listed.stdout) if e.startswith(system_id + " ")), None)


def _interrupted_in_build(tmp_path, warehouse, predictions) -> subprocess.Popen:
    """`tsrate import` of ``predictions`` as external_llm, sent SIGINT once its build has
    started (dbt reported its first model; the test stage holds the process there)."""
    marker, log = tmp_path / "paused", tmp_path / "import.log"
    env = dict(
        os.environ,
        TSRATE_WAREHOUSE=str(warehouse),
        TSRATE_TEST_PAUSE_AT="build",
        TSRATE_TEST_PAUSE_FILE=str(marker),
    )
    command = [sys.executable, "-m", "tsrate.cli", "import", str(predictions)]
    command += ["--system", "external_llm", "--metadata", "display_name=External LLM"]
    with open(log, "w") as handle:
        process = subprocess.Popen(
            [*command, *STUDY_FLAGS], cwd=project_dir(), env=env, stdout=handle,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 300
    while not marker.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the import never reached its build:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 128 + signal.SIGINT, log.read_text()[-3000:]
    assert "stopped by SIGINT" in log.read_text()
    return process


def _stop_line(tmp_path) -> str:
    return next(
        line for line in (tmp_path / "import.log").read_text().splitlines()
        if line.startswith("tsrate: stopped by SIGINT")
    )  # fmt: skip


def test_an_import_stopped_in_its_build_is_listed_unrated_and_withdrawn(
    tmp_path, monkeypatch, dbt_target
):
    warehouse = import_warehouse(tmp_path, monkeypatch, dbt_target)
    predictions, _ = prediction_file(warehouse, tmp_path)
    _interrupted_in_build(tmp_path, warehouse, predictions)

    # the import is whole: its forecasts, its registration, its record, its run forecasted
    (stored,) = rows(warehouse, FORECASTS, ["external_llm"])
    assert stored[0] > 0
    assert rows(warehouse, REGISTERED, ["external_llm"]) == [(1,)]
    ((run_id, study_id),) = rows(
        warehouse, "select run_id, study_id from raw.study_imports where system_id = ?",
        ["external_llm"],
    )  # fmt: skip
    assert rows(warehouse, "select status from raw.runs where run_id = ?", [run_id]) == [
        ("forecasted",)
    ]
    # the stop line says what the stop left and how to finish or undo it, not the generic
    # "nothing half-written is kept" of a stop before anything was stored
    line = _stop_line(tmp_path)
    assert f"the import is stored, not rated: run {run_id} of study {study_id}" in line
    assert f"tsrate build --study {study_id}" in line
    assert f"tsrate withdraw external_llm --study {study_id}" in line
    assert "nothing half-written" not in line
    # listed as imported, and as not rated yet, with what rates it and what takes it out
    entry = _entry(warehouse, "external_llm")
    assert entry is not None and f"run {run_id}" in entry
    assert "not rated yet: no build of it finished" in entry, entry
    assert f"`tsrate build --study {study_id}` rates it" in entry, entry
    assert f"`tsrate withdraw external_llm --study {study_id}` takes it out" in entry, entry

    # what `tsrate systems` lists, `tsrate withdraw` finds and takes out, nothing deleted
    done = tsrate_cli(warehouse, "withdraw", "external_llm", "--no-build")
    assert done.returncode == 0, done.stderr
    assert "withdrew 'external_llm' from study " in done.stdout
    assert rows(warehouse, "select study_id, system_id from raw.study_withdrawals") == [
        (study_id, "external_llm")
    ]
    assert rows(warehouse, FORECASTS, ["external_llm"]) == [stored]
    entry = _entry(warehouse, "external_llm")
    assert entry is not None and "; withdrawn " in entry and "not rated" not in entry, entry


def _stop_at(line_start: str):  # noqa: ANN202 - the progress hook
    """A progress hook that sends this process SIGINT (a user's Ctrl-C) when the import says
    a line starting with ``line_start``, and waits for it to land."""

    def say(line: str) -> None:
        if line.startswith(line_start):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(30)  # the KeyboardInterrupt ends the wait
            pytest.fail("SIGINT did not stop the import")

    return say


def test_an_import_stopped_while_it_records_itself_leaves_only_reusable_forecasts(
    tmp_path, monkeypatch, dbt_target
):
    warehouse = import_warehouse(tmp_path, monkeypatch, dbt_target)
    predictions, _ = prediction_file(warehouse, tmp_path)
    with connect(warehouse) as con:
        import_forecasts(
            con, predictions, "external_llm", STUDY, workers=1, metadata={"display_name": "X"}
        )
    # the same file under a second id: the import says so before its end, and is stopped there
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own
    try:
        with connect(warehouse) as con, pytest.raises(KeyboardInterrupt):
            import_forecasts(
                con, predictions, "copy_llm", STUDY, workers=1,
                progress=_stop_at("copy_llm's forecasts equal those of external_llm"),
                metadata={"display_name": "Copy"},
            )  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)
    # the two commands agree: neither knows an import that did not finish
    entry = _entry(warehouse, "copy_llm")
    refused = tsrate_cli(warehouse, "withdraw", "copy_llm", "--no-build")
    assert (entry is None) == (refused.returncode != 0), (entry, refused.stdout, refused.stderr)
    assert entry is None
    assert "system 'copy_llm' has no forecasts in study " in refused.stderr, refused.stderr
    (stored,) = rows(warehouse, FORECASTS, ["copy_llm"])
    assert stored[0] > 0  # its forecasts stay stored, whole
    assert rows(warehouse, REGISTERED, ["copy_llm"]) == [(0,)]  # no registration
    assert rows(warehouse, RECORDED, ["copy_llm"]) == [(0,)]  # no record of the import
    assert rows(warehouse, "select count(*) from raw.study_withdrawals") == [(0,)]

    # importing the file again reuses the stored forecasts; then both know it
    with connect(warehouse) as con:
        again = import_forecasts(
            con, predictions, "copy_llm", STUDY, workers=1, metadata={"display_name": "Copy"}
        )
    assert (again.computed, again.reused) == (0, again.partitions)
    assert rows(warehouse, FORECASTS, ["copy_llm"]) == [stored]
    entry = _entry(warehouse, "copy_llm")
    assert entry is not None and "not rated yet" in entry, entry
    done = tsrate_cli(warehouse, "withdraw", "copy_llm", "--no-build")
    assert done.returncode == 0, done.stderr
    assert "withdrew 'copy_llm' from study " in done.stdout
