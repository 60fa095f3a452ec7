"""What `tsrate systems` says of an import that is not rated yet, and that `tsrate withdraw`
takes out what it lists, whatever state the import's run is in.

An import stopped between its record and its run's ``forecasted`` (which an earlier release
did not write together) left its registration and record under a run the next process
marked ``interrupted``: here that state is the real import's, its run then left ``running``
as that release left it and closed by the real ``close_interrupted_runs``. In process, on a
small real warehouse (the import study, its baseline naive imported beside external_demo).
A real Ctrl-C of `tsrate import`: tests/integration/test_s44_import_interrupted.py."""

from __future__ import annotations

import pytest

from tests.support.import_study import STUDY, seed_with, write_csv
from tsrate import cli
from tsrate.platform.warehouse import close_interrupted_runs, connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.studies import imported_system_lines

FORECASTS = "select count(*) from raw.forecasts where system_id = 'stopped_demo'"


@pytest.fixture
def imports(warehouse, good, tmp_path):
    """external_demo imported with the baseline, then stopped_demo alone (the same grid + 1):
    (warehouse, study id, stopped_demo's run id). A fresh copy of the module's warehouse."""
    import shutil

    copy = tmp_path / "tsrate.duckdb"
    shutil.copy(warehouse, copy)
    later = good.assign(forecast=good["forecast"] + 1.0)
    with connect(copy) as con:
        import_forecasts(
            con, write_csv(tmp_path, good, "external.csv"), "external_demo", STUDY, workers=1,
            systems_seed=seed_with(),
        )  # fmt: skip
        stopped = import_forecasts(
            con, write_csv(tmp_path, later, "stopped.csv"), "stopped_demo", STUDY,
            baselines=False, metadata={"display_name": "Stopped"},
        )  # fmt: skip
    return copy, stopped.study_id, stopped.run_id


def _line(warehouse, system_id: str) -> str:
    with connect(warehouse, read_only=True) as con:
        lines = imported_system_lines(con)
    return next(line for line in lines if line.startswith(system_id + "  "))


def _after_file(line: str) -> str:
    """``line`` after the import's file (the test's folder may hold any word)."""
    return line.split(") into study ", 1)[1]


def test_an_import_stopped_before_its_run_was_forecasted_is_listed_and_withdrawn(
    imports, monkeypatch, capsys
):
    warehouse, study_id, run_id = imports
    with connect(warehouse) as con:  # what the earlier release's stop left, then closed
        con.execute("update raw.runs set status = 'running' where run_id = ?", [run_id])
        assert close_interrupted_runs(con) == [(run_id, "running")]
        (stored,) = con.execute(FORECASTS).fetchone()
    line = _line(warehouse, "stopped_demo")
    assert "not rated: the import stopped before it finished (run interrupted)" in line, line
    assert "import the file again to rate it (its stored forecasts are reused)" in line, line
    assert f"`tsrate withdraw stopped_demo --study {study_id}` takes it out" in line, line

    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    capsys.readouterr()
    assert cli.main(["withdraw", "stopped_demo", "--no-build"]) == 0, capsys.readouterr().err
    assert "withdrew 'stopped_demo' from study " in capsys.readouterr().out
    with connect(warehouse, read_only=True) as con:
        assert con.execute("select study_id, system_id from raw.study_withdrawals").fetchall() == [
            (study_id, "stopped_demo")
        ]
        assert con.execute(FORECASTS).fetchone()[0] == stored  # nothing deleted
    line = _line(warehouse, "stopped_demo")
    assert "; withdrawn " in line and "not rated" not in _after_file(line), line


@pytest.mark.parametrize(
    "status, said",
    [
        ("forecasted", "; stored, not rated yet: no build of it finished (imported with "),
        ("publish_failed", "; built, not published: its publish failed (`tsrate runs` says"),
        ("build_failed", "; not rated: its build failed (`tsrate runs` says why): import the"),
        ("succeeded", None),
    ],
)
def test_an_import_not_rated_yet_says_why_and_what_rates_it(imports, status, said):
    warehouse, study_id, run_id = imports
    with connect(warehouse) as con:
        con.execute("update raw.runs set status = ? where run_id = ?", [status, run_id])
    line = _line(warehouse, "stopped_demo")
    if said is None:  # rated: the line names the import alone
        assert ";" not in _after_file(line), line
    else:
        assert said in line, line
        assert f"`tsrate withdraw stopped_demo --study {study_id}` takes it out" in line, line


def test_a_later_succeeded_run_of_the_study_rates_an_unbuilt_import(imports):
    warehouse, _, run_id = imports
    with connect(warehouse) as con:  # external_demo's run is older: it rates no later import
        con.execute("update raw.runs set status = 'succeeded' where run_id <> ?", [run_id])
    assert "not rated yet" in _line(warehouse, "stopped_demo")
    with connect(warehouse) as con:
        con.execute(
            "insert into raw.runs by name select * replace ("
            "run_id || '-later' as run_id, started_at + interval 1 minute as started_at, "
            "'succeeded' as status) from raw.runs where run_id = ?",
            [run_id],
        )
    assert ";" not in _after_file(_line(warehouse, "stopped_demo"))
