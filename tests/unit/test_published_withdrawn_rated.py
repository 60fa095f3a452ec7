"""``published_runs.withdrawn`` names the systems withdrawn from the study *and left out of
the snapshot's marts*: a publication whose marts still rate a withdrawn system (``tsrate
build --run-id RUN``, the single-run view, shows a run's own systems) does not list it
there, while ``systems_rated`` does; a publication that leaves it out lists it with its
time and reason. A real forecasted run and a real withdrawal on a temporary warehouse."""

from __future__ import annotations

import dataclasses
import json

import duckdb

from tests.support.import_study import STUDY as IMPORT_STUDY
from tests.support.warehouses import ingest
from tsrate.platform.publish import publish
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts
from tsrate.robustness.withdrawals import withdraw_system

#: two systems: the study's last system cannot be withdrawn
STUDY = dataclasses.replace(IMPORT_STUDY, systems=("naive", "random"), perturbations=("P0",))


def _published(tmp_path, rated: list[str]) -> tuple[list[str], dict]:
    """A run of naive and random, naive withdrawn after it, published with marts that rate
    ``rated`` (and biased withdrawn from another study): the publication's
    (systems_rated, withdrawn)."""
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    with connect(warehouse) as con:
        run_id = run_forecasts(con, STUDY, None, workers=1, progress=lambda m: None).run_id
        finish_run(con, run_id, "forecasted")
        withdraw_system(con, "naive", reason="a test id")
        con.execute(  # a withdrawal from another study: never this publication's
            "insert into raw.study_withdrawals values ('another-study', 'biased', now(), 'x')"
        )
        con.execute("create schema if not exists marts")
        con.execute(
            "create table marts.ratings as select ? as run_id, unnest(?) as system_id, "
            "'smape' as metric, 1 as rating",
            [run_id, rated],
        )
    result = publish(warehouse, run_id, parquet=False)
    with duckdb.connect(str(result.path), read_only=True) as con:
        systems, withdrawn = con.execute(
            "select systems_rated, cast(withdrawn as varchar) from published_runs"
        ).fetchone()
    return systems, json.loads(withdrawn)


def test_a_withdrawn_system_the_marts_still_rate_is_not_listed_as_left_out(tmp_path):
    rated, withdrawn = _published(tmp_path, ["naive", "random"])  # the single-run view
    assert rated == ["naive", "random"]
    assert withdrawn == {}


def test_a_withdrawn_system_the_marts_leave_out_is_listed_with_its_reason(tmp_path):
    rated, withdrawn = _published(tmp_path, ["random"])  # the study's build
    assert rated == ["random"]
    assert list(withdrawn) == ["naive"] and withdrawn["naive"]["reason"] == "a test id"
