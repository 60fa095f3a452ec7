"""The command line's contract: what a user types, what the parser fills in, what comes back.

Expectations are the documented ones (docs/operations.md: every writing command fails at
once on a held warehouse unless given ``--lock-timeout``; docs/bi.md and the ``--help``
texts: ``query``'s and ``runs``' limits and the query timeout; the exit statuses of
``main``'s docstring and the shell's 128 + signal convention), restated here by hand:

- every command and every suite action is required: a bare ``tsrate`` or ``tsrate suite``
  is a usage error (exit 2), not a silent no-op;
- the writing commands' lock timeout defaults to 0 (fail at once), and ``--lock-timeout``
  reaches the command as a float;
- ``main`` maps a closed pipe to 141, Ctrl-C to 130, SIGTERM to 143, a user error to 2
  and anything else to 1, each as one line (``--debug`` anywhere adds the traceback).

Written for round 9 of the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep9_cli.json). The commands whose exceptions ``main`` maps are stood in
for by a function that raises (the module's command function replaced for one test).
"""

from __future__ import annotations

import os
import signal
import types

import duckdb
import pytest

from tests.support.locks import another_writer
from tsrate import TsrateError, cli
from tsrate.commands import reading_parsers

WRITERS = {  # command: its required arguments
    "run": [],
    "ingest": [],
    "import": ["f.csv", "--system", "x"],
    "import-predictions": ["f.csv", "--system", "x", "--manifest", "m"],
    "build": [],
    "train": [],
}


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_every_writing_command_fails_at_once_by_default_and_takes_a_lock_timeout(command):
    parser = cli.build_parser()
    args = parser.parse_args([command, *WRITERS[command]])
    assert args.lock_timeout == 0.0 and isinstance(args.lock_timeout, float)
    args = parser.parse_args([command, *WRITERS[command], "--lock-timeout", "2.5"])
    assert args.lock_timeout == 2.5


def test_the_reading_commands_defaults_are_the_documented_ones():
    parser = cli.build_parser()
    query = parser.parse_args(["query", "select 1"])
    assert (query.limit, query.timeout, query.format, query.live) == (1000, 60.0, "table", False)
    assert parser.parse_args(["runs"]).limit == 1000
    assert parser.parse_args(["export-inputs", "out"]).images == 0


@pytest.mark.parametrize("argv", [[], ["suite"], ["suite", "understanding"]])
def test_a_missing_command_or_suite_action_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main(argv)
    assert caught.value.code == 2
    assert "required" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("message", "line"),
    [
        ("one", "one"),
        ("head:\n- a\n- b", "head: a; b"),
        ("a\n\n  b  \n", "a; b"),
        ("- only\n", "only"),
        ("  \n", ""),
        ("no colon\n- x", "no colon; x"),
    ],
)
def test_one_line_joins_lines_and_drops_list_bullets(message, line):
    assert cli.one_line(message) == line


def test_each_failure_kind_gets_its_line_and_status():
    class Checked(Exception):
        problems = ["a"]

    assert cli._error_line(Checked("the study:\n- a")) == ("the study:\n- a", 2)
    error = TsrateError("bad thing\nmore")
    assert cli._error_line(error) == ("bad thing; more", 2)
    error.hint = "do this"
    assert cli._error_line(error) == ("bad thing; more (hint: do this)", 2)
    line, status = cli._error_line(duckdb.Error("IO Error: x\nLINE 1: select"))
    assert status == 2 and line.startswith("DuckDB: IO Error: x (hint: is the file")
    line, status = cli._error_line(ValueError(""))
    assert status == 1 and line.startswith("unexpected ValueError: no message (hint: rerun")


def raising(exc):
    def command(args):  # noqa: ARG001 - a command's signature
        raise exc

    return command


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (BrokenPipeError(), 128 + signal.SIGPIPE),
        (KeyboardInterrupt(), 128 + signal.SIGINT),
        (KeyboardInterrupt("SIGTERM"), 128 + signal.SIGTERM),
        (TsrateError("nope"), 2),
        (RuntimeError("boom"), 1),
    ],
)
def test_main_maps_each_ending_to_its_exit_status(exc, status, monkeypatch, capsys):
    monkeypatch.setattr(reading_parsers, "cmd_runs", raising(exc))
    pointed = []
    if isinstance(exc, BrokenPipeError):  # main points stdout at /dev/null: record it instead
        monkeypatch.setattr(cli.os, "dup2", lambda fd, target: pointed.append((fd, target)))
        monkeypatch.setattr(cli.sys, "stdout", types.SimpleNamespace(fileno=lambda: 1))
    assert cli.main(["runs"]) == status
    for fd, target in pointed:
        assert target == 1 and os.readlink(f"/proc/self/fd/{fd}") == os.devnull
        os.close(fd)
    assert len(pointed) == isinstance(exc, BrokenPipeError)
    err = capsys.readouterr().err
    if isinstance(exc, KeyboardInterrupt):
        name = "SIGTERM" if exc.args else "SIGINT"
        assert err.startswith(f"tsrate: stopped by {name}; nothing half-written is kept")
    elif isinstance(exc, BrokenPipeError):
        assert err == ""  # quiet, as Unix tools are
    else:
        assert err.count("\n") == 1 and err.startswith("tsrate: error: ")
        assert "Traceback" not in err


def test_debug_anywhere_or_from_the_environment_adds_the_traceback(monkeypatch, capsys):
    monkeypatch.setattr(reading_parsers, "cmd_runs", raising(RuntimeError("boom")))
    monkeypatch.delenv("TSRATE_DEBUG", raising=False)
    assert cli.main(["runs", "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("TSRATE_DEBUG", "1")
    assert cli.main(["runs"]) == 1
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("TSRATE_DEBUG", "0")
    assert cli.main(["runs"]) == 1
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["import", "f.csv"], "--system"),
        (["import-predictions", "f.csv", "--manifest", "m"], "--system"),
        (["import-predictions", "f.csv", "--system", "x"], "--manifest"),
        (["show-input", "--ticker", "A", "--date", "2022-01-03", "--perturbation", "P0"],
         "--system"),
        (["show-input", "--system", "s", "--date", "2022-01-03", "--perturbation", "P0"],
         "--ticker"),
        (["show-input", "--system", "s", "--ticker", "A", "--perturbation", "P0"], "--date"),
        (["show-input", "--system", "s", "--ticker", "A", "--date", "2022-01-03"],
         "--perturbation"),
    ],
)  # fmt: skip
def test_a_missing_required_flag_is_a_usage_error_naming_it(argv, flag, capsys):
    with pytest.raises(SystemExit) as caught:
        cli.build_parser().parse_args(argv)
    assert caught.value.code == 2
    assert "the following arguments are required: " + flag in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["ingest"],
        ["import", "f.csv", "--system", "x"],
        ["import-predictions", "f.csv", "--system", "x", "--manifest", "m"],
        ["withdraw", "x"],
        ["build"],
    ],
)
def test_the_commands_that_write_take_the_writer_lock_before_anything_else(
    argv, tmp_path, monkeypatch, capsys
):
    """With the warehouse's lock held by another open file (flock contends as another
    process would), each such command fails at once naming the holder, before reading
    any of its arguments' files (f.csv exists, but is no price nor prediction file; a
    missing one is named before the lock: tests/unit/test_s32_cli_errors.py)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.csv").write_text("not, a, price file\n")
    warehouse = tmp_path / "w.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    with another_writer(warehouse):
        assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tsrate: error: the warehouse {warehouse} is being written by")


def test_without_debug_a_logged_failure_is_one_line_naming_the_exception():
    import logging

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    log = logging.getLogger("tsrate.test_sweep9_cli")
    log.addHandler(Keep())
    log.propagate = False
    log.setLevel(logging.INFO)
    try:
        with cli._quiet_tracebacks(False):
            for text in ("the task failed", "boom happened", "ValueError seen", "plain"):
                try:
                    raise ValueError("boom")
                except ValueError:
                    if text == "plain":
                        log.info(text)  # no exception attached: left as it is
                    else:
                        log.exception(text)
        with cli._quiet_tracebacks(True):
            try:
                raise ValueError("boom")
            except ValueError:
                log.exception("with debug")
    finally:
        log.handlers.clear()
    quiet, debug = records[:4], records[4]
    assert [r.getMessage() for r in quiet] == [
        "the task failed (ValueError: boom)",
        "boom happened",  # the message already says it
        "ValueError seen",  # the type already named
        "plain",
    ]
    assert all(r.exc_info is None for r in quiet)
    assert debug.exc_info is not None and debug.getMessage() == "with debug"


def test_main_reads_the_command_line_when_given_none(monkeypatch):
    seen = []
    monkeypatch.setattr(reading_parsers, "cmd_runs", lambda args: seen.append(args.limit) or 0)
    monkeypatch.setattr(cli.sys, "argv", ["tsrate", "runs", "--limit", "7"])
    assert cli.main() == 0 and seen == [7]


def test_verbose_is_set_for_dbt_only_when_asked(monkeypatch):
    monkeypatch.setattr(reading_parsers, "cmd_runs", lambda args: 0)
    # set, then deleted: monkeypatch records the worker's own value and puts it back after the
    # test (a delenv of an absent variable records nothing, and main's TSRATE_VERBOSE=1 was
    # left in the worker for every later test and its subprocesses)
    monkeypatch.setenv("TSRATE_VERBOSE", "")
    monkeypatch.delenv("TSRATE_VERBOSE")
    assert cli.main(["runs"]) == 0
    assert "TSRATE_VERBOSE" not in os.environ
    assert cli.main(["--verbose", "runs"]) == 0
    assert os.environ["TSRATE_VERBOSE"] == "1"


class Clock:
    def __init__(self):
        self.now, self.sleeps = 50.0, []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


@pytest.mark.parametrize(
    ("extra", "sleeps"), [([], []), (["--lock-timeout", "2.5"], [1.0, 1.0, 0.5])]
)
def test_a_writing_command_waits_only_as_long_as_asked(
    extra, sleeps, tmp_path, monkeypatch, capsys
):
    """``build`` with the lock held: no flag fails at once; ``--lock-timeout 2.5`` polls
    (a fake clock: the sleeps asked for are recorded, not slept) and then fails."""
    import time

    clock = Clock()
    monkeypatch.setattr(time, "monotonic", clock.monotonic)
    monkeypatch.setattr(time, "sleep", clock.sleep)
    warehouse = tmp_path / "w.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    with another_writer(warehouse):
        assert cli.main(["build", *extra]) == 2
    assert clock.sleeps == sleeps
    err = capsys.readouterr().err
    assert ("after waiting 2.5s" in err) == bool(extra)
    assert err.count("after waiting") == (1 if extra else 0)


def test_entry_exits_with_mains_status_after_joining_threads(monkeypatch):
    import threading

    calls = []
    monkeypatch.setattr(threading, "_shutdown", lambda: calls.append("joined"))
    monkeypatch.setattr(cli.atexit, "_run_exitfuncs", lambda: calls.append("atexit"))

    def exit_(code):
        calls.append(code)
        raise SystemExit(code)

    monkeypatch.setattr(cli.os, "_exit", exit_)
    for status, code in ((3, 3), (0, 0), (None, 0)):
        monkeypatch.setattr(cli, "main", lambda status=status: status)
        calls.clear()
        with pytest.raises(SystemExit):
            cli.entry()
        assert calls == ["joined", "atexit", code]
