"""The cron section of docs/operations.md, checked against the command it describes: its
crontab line is a `tsrate run` that waits for the writer lock, a run that finds another
writer ends with the documented exit status and one line on stderr naming the holder (stdout
empty, nothing run), `tsrate status --format json` tells a monitor a writer is there, and the
states the section names are the ones the warehouse leaves a stopped run in."""

from __future__ import annotations

import json
import os
import re
import time

import pytest

from tests.support.locks import another_writer
from tsrate import cli
from tsrate.commands.pipeline import cmd_run
from tsrate.config import project_dir
from tsrate.platform.locking import writer_lock
from tsrate.platform.warehouse import UNFINISHED_STATUSES

#: one crontab field: a number, *, a range, a list or a step
CRON_FIELD = re.compile(r"^(\*|\d+(-\d+)?)(,(\d+(-\d+)?))*(/\d+)?$")


def cron_section() -> str:
    text = (project_dir() / "docs" / "operations.md").read_text()
    start = text.index("## From cron")
    return text[start : text.index("\n## ", start + 1)]


def crontab_line(section: str) -> str:
    lines = [line for line in section.splitlines() if CRON_FIELD.match(line.split(" ")[0])]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    path = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    return path


def test_the_crontab_line_is_a_run_that_waits_for_the_lock_and_keeps_stderr():
    line = crontab_line(cron_section())
    fields = line.split()
    assert all(CRON_FIELD.match(field) for field in fields[:5]), fields[:5]
    command = fields[5:]
    assert command[0].startswith("/") and command[0].endswith("/.venv/bin/tsrate")
    redirect = command.index(">>")
    args = cli.build_parser().parse_args(command[1:redirect])
    assert args.func is cmd_run
    assert args.lock_timeout == 3600
    assert command[redirect + 2 :] == ["2>&1"]  # the progress lines and errors are on stderr


def test_a_run_that_finds_another_writer_exits_2_with_one_line_on_stderr(warehouse, capsys):
    """What the section's "Overlap" and "Exit status" say a cron job sees."""
    section = cron_section()
    assert "A second writer fails at once with exit 2" in section
    with another_writer(warehouse):
        code = cli.main(["run"])
        out, err = capsys.readouterr()
        assert code == 2
        assert out == ""
        assert err.count("\n") == 1 and err.startswith("tsrate: error: the warehouse ")
        assert "being written by" in err and "--lock-timeout SECONDS" in err
        started = time.monotonic()
        code = cli.main(["run", "--lock-timeout", "1"])
        waited = time.monotonic() - started
        out, err = capsys.readouterr()
    assert code == 2 and out == "" and waited >= 1
    assert "after waiting 1s" in err.splitlines()[-1]
    assert not warehouse.exists()  # nothing was run: the lock comes before the warehouse


def test_status_json_tells_a_monitor_that_a_writer_is_there(warehouse, capsys):
    assert "`tsrate status --format json` (exit 0" in cron_section()
    assert cli.main(["status", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["writer"] is None
    with writer_lock(warehouse):  # a real writer: it writes who it is into the lock file
        assert cli.main(["status", "--format", "json"]) == 0
        writer = json.loads(capsys.readouterr().out)["writer"]
    assert writer["pid"] == os.getpid()


def test_the_states_of_a_stopped_run_are_the_warehouses():
    text = " ".join(cron_section().split())
    stopped = re.search(r"\*\*A run stopped halfway\*\* \([^)]*\) stays ([^(]*)\(", text)
    assert stopped, "the section no longer says which states a stopped run stays in"
    assert tuple(re.findall(r"`([a-z_]+)`", stopped.group(1))) == UNFINISHED_STATUSES
