"""After ``--no-build`` a suite run's last line says the marts still show the last build and
names ``tsrate suite <name> build``, which builds a stored suite run: the newest one ready
to build by default, or the one named, if it is ready (``answered`` / ``trained``), built
already (a rebuild) or failed to build (a retry). The build itself runs in
tests/integration/test_suite_build_action.py; here: the message, the run chosen and the
one-line refusals, on a real warehouse file."""

from __future__ import annotations

import datetime as dt

import pytest

from tsrate import TsrateError, cli
from tsrate.platform.warehouse import connect
from tsrate.suites import get_suite
from tsrate.suites.lifecycle import finish_suite_run, start_suite_run
from tsrate.suites.publishing import buildable_run, run_message


def test_the_last_line_says_what_the_marts_show():
    built = run_message("reasoning", "rsn-1", True, "select 1")
    assert built == 'suite run rsn-1 done. Try: tsrate query "select 1"'
    stored = run_message("reasoning", "rsn-1", False, "select 1")
    assert stored == (
        "suite run rsn-1 stored, not built (--no-build): the marts, `tsrate query` and the "
        "report still show the last build. Build this run with: tsrate suite reasoning build "
        "rsn-1"
    )
    assert "\n" not in stored and "select 1" not in stored


@pytest.fixture
def warehouse(tmp_path):
    path = tmp_path / "tsrate.duckdb"
    runs = [  # (suite, id, status, minutes after the first start)
        ("reasoning", "rsn-old", "succeeded", 0),
        ("reasoning", "rsn-ready", "answered", 1),
        ("reasoning", "rsn-running", "running", 2),
        ("reasoning", "rsn-failed", "failed", 3),
        ("interpretability", "interp-new", "trained", 4),
    ]
    with connect(path) as con:
        for suite, name, status, minutes in runs:
            start_suite_run(con, suite, name, {}, {})
            if status != "running":
                finish_suite_run(con, name, status)
            con.execute(
                "update raw.suite_runs set started_at = ? where suite_run_id = ?",
                [dt.datetime(2026, 1, 1) + dt.timedelta(minutes=minutes), name],
            )
    return path


def test_the_newest_run_ready_to_build_is_the_default(warehouse):
    reasoning = get_suite("reasoning")
    # newer runs are running or failed: not buildable; another suite's run is not this suite's
    assert buildable_run(warehouse, reasoning) == "rsn-ready"
    assert buildable_run(warehouse, get_suite("interpretability")) == "interp-new"
    assert buildable_run(warehouse, reasoning, "rsn-old") == "rsn-old"  # a rebuild
    with connect(warehouse) as con:
        finish_suite_run(con, "rsn-ready", "build_failed")
    assert buildable_run(warehouse, reasoning) == "rsn-ready"  # a retry
    with connect(warehouse) as con:
        finish_suite_run(con, "rsn-ready", "failed")
    assert buildable_run(warehouse, reasoning) == "rsn-old"


@pytest.mark.parametrize(
    ("suite", "name", "message"),
    [
        ("reasoning", "rsn-running", "reasoning suite run rsn-running is 'running', not ready "
         "to build (needs answered / succeeded / build_failed): rerun `tsrate suite "
         "reasoning run`, which resumes it"),
        ("reasoning", "rsn-failed", "is 'failed', not ready to build"),
        ("reasoning", "interp-new", "no reasoning suite run 'interp-new' in "),
        ("understanding", None, "no stored understanding suite run to build in "),
    ],
)  # fmt: skip
def test_a_run_that_cannot_be_built_is_refused_in_one_line(warehouse, suite, name, message):
    with pytest.raises(TsrateError) as caught:
        buildable_run(warehouse, get_suite(suite), name)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_warehouse_without_suite_runs_has_none_to_build(tmp_path):
    path = tmp_path / "tsrate.duckdb"
    with connect(path) as con:
        con.execute("select 1")
    with pytest.raises(TsrateError, match="no stored reasoning suite run to build in .*: run "):
        buildable_run(path, get_suite("reasoning"))


def test_every_suite_has_the_build_action_under_the_writer_lock():
    for suite in ("understanding", "reasoning", "interpretability"):
        args = cli.build_parser().parse_args(
            ["suite", suite, "build", "x-1", "--lock-timeout", "3"]
        )
        assert args.suite_run_id == "x-1" and args.lock_timeout == 3.0
        assert args.writes_warehouse is True and args.func.__name__ == "build_from_args"
        assert cli.build_parser().parse_args(["suite", suite, "build"]).suite_run_id is None
