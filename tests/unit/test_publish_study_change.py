"""A publication of another study than the one the snapshot held says so in one line (which
study the snapshot holds now, which it held, and the build that brings that one back), on
real temporary DuckDB files and real forecasted runs; the same study published again, a
first publication and a suite publication say nothing, and a suite publication between two
core ones hides no change. A core publication of an older release (its study JSON recorded,
no study id) is still core: the line says the study it held is not recorded."""

from __future__ import annotations

import duckdb

from tests.support.warehouses import ingest
from tests.unit.test_s35_bi_publish import COMPANIES, OTHER_STUDY, STUDY
from tsrate.commands.pipeline import _print_study_change
from tsrate.platform.publish import publish, study_change
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts
from tsrate.robustness.studies import list_studies


def _two_studies(warehouse) -> tuple[dict[str, str], dict[str, str]]:
    """One forecasted run of STUDY and one of OTHER_STUDY in one warehouse, and a tiny mart
    to publish: (run id, study name) of each, keyed 'first' and 'second'."""
    ingest(warehouse, sorted({*STUDY.tickers, *OTHER_STUDY.tickers}))
    runs = {}
    with connect(warehouse) as con:
        for key, study in (("first", STUDY), ("second", OTHER_STUDY)):
            summary = run_forecasts(con, study, COMPANIES, workers=1, progress=lambda m: None)
            finish_run(con, summary.run_id, "forecasted")
            runs[key] = summary.run_id
        con.execute("create schema if not exists marts")
        con.execute("create table marts.scores as select range as item from range(3)")
        names = {
            s["study_id"]: s["study_name"] for s in list_studies(con)
        }  # what `tsrate studies` prints
        ids = dict(con.execute("select run_id, study_id from raw.runs").fetchall())
    return runs, {key: names[ids[run]] for key, run in runs.items()}


#: what a publication says when the core publication before it names no study
_UNRECORDED = (
    "the snapshot now holds study {now}; the study it held is not recorded (published by an "
    "older release): tsrate studies lists the studies, tsrate build --study NAME brings one "
    "back"
)


def _as_an_older_release_wrote_it(snapshot, run_id: str) -> None:  # noqa: ANN001 - a Path
    """``run_id``'s publications in ``snapshot`` as a release before study ids wrote them:
    the study (JSON) recorded, no study id or name."""
    with duckdb.connect(str(snapshot)) as con:
        con.execute(
            "update published_runs set study_id = null, study_name = null where run_id = ?",
            [run_id],
        )
        assert con.execute(
            "select count(*) from published_runs where run_id = ? and study is not null",
            [run_id],
        ).fetchone()[0]


def test_publishing_another_study_says_which_it_replaced_and_how_to_bring_it_back(tmp_path, capsys):
    warehouse = tmp_path / "tsrate.duckdb"
    runs, names = _two_studies(warehouse)
    first, second = names["first"], names["second"]
    assert first != second
    snapshot = publish(warehouse, runs["first"], parquet=False).path
    assert study_change(snapshot) is None  # a first publication: nothing was replaced
    publish(warehouse, runs["first"], parquet=False)
    assert study_change(snapshot) is None  # the same study again
    publish(warehouse, runs["second"], parquet=False)
    line = study_change(snapshot)
    assert line == (
        f"the snapshot now holds study {second} (it held {first}): tsrate query, the report "
        f"and BI tools show {second}; to bring {first} back: tsrate build --study {first}"
    )
    _print_study_change(warehouse)  # what `tsrate run` and `tsrate build` print
    assert capsys.readouterr().out == line + "\n"
    publish(warehouse, runs["first"], parquet=False)  # back again: the other way round
    assert f"now holds study {first} (it held {second})" in study_change(snapshot)


def test_a_suite_publication_or_a_missing_snapshot_says_nothing(tmp_path, capsys):
    warehouse = tmp_path / "tsrate.duckdb"
    runs, names = _two_studies(warehouse)
    snapshot = tmp_path / "published" / "tsrate.duckdb"
    assert study_change(snapshot) is None
    publish(warehouse, runs["first"], parquet=False)
    publish(warehouse, "suite-run-1", parquet=False)  # not in raw.runs: no study
    assert study_change(snapshot) is None  # the newest is a suite's: the core is unchanged
    publish(warehouse, runs["first"], parquet=False)  # the same study, a suite's between
    assert study_change(snapshot) is None
    publish(warehouse, "suite-run-2", parquet=False)
    publish(warehouse, runs["second"], parquet=False)  # another study, a suite's between
    assert study_change(snapshot).startswith(
        f"the snapshot now holds study {names['second']} (it held {names['first']})"
    )
    publish(warehouse, "suite-run-3", parquet=False)
    assert study_change(snapshot) is None  # the newest is a suite's: it changed no study
    publish(warehouse, runs["first"], parquet=False)  # back to the first study
    assert f"now holds study {names['first']} (it held {names['second']})" in study_change(snapshot)
    _as_an_older_release_wrote_it(snapshot, runs["second"])
    assert study_change(snapshot) == _UNRECORDED.format(now=names["first"])
    with duckdb.connect(str(snapshot)) as con:  # an older snapshot: no study columns
        con.execute("alter table published_runs drop column study_name")
        con.execute("alter table published_runs drop column study_id")
    assert study_change(snapshot) is None
    _print_study_change(warehouse)
    assert capsys.readouterr().out == ""


def test_a_core_publication_of_an_older_release_counts_as_core_its_study_unknown(tmp_path, capsys):
    warehouse = tmp_path / "tsrate.duckdb"
    runs, names = _two_studies(warehouse)
    snapshot = publish(warehouse, runs["first"], parquet=False).path
    _as_an_older_release_wrote_it(snapshot, runs["first"])
    publish(warehouse, "suite-run-1", parquet=False)  # a suite's between: skipped
    publish(warehouse, runs["second"], parquet=False)
    # the older core row is the one replaced, not skipped as a suite's: its study unknown
    line = study_change(snapshot)
    assert line == _UNRECORDED.format(now=names["second"])
    _print_study_change(warehouse)
    assert capsys.readouterr().out == line + "\n"
    publish(warehouse, runs["second"], parquet=False)  # the same study again, now recorded
    assert study_change(snapshot) is None
    _as_an_older_release_wrote_it(snapshot, runs["second"])  # every core row unrecorded
    assert study_change(snapshot) is None  # what the snapshot holds now is not known either
