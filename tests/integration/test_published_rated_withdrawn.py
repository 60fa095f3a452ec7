"""What a publication rates and what it leaves out, for readers of the snapshot: after an
import and a later plain run of the study, ``published_runs.systems_rated`` lists the
imported system the marts still rate (``systems`` lists the run's own); after ``tsrate
withdraw`` it does not, ``published_runs.withdrawn`` holds the withdrawal's time and reason
as ``tsrate studies`` lists it, and the report says the system was withdrawn, with that
reason, not "not runnable"; ``tsrate runs`` shows what each publication rates beside the run's
own systems; marts.ratings gives the import its display name, as its
column description says. Real dbt builds of the import study (tests/support/import_study.py)
through the CLI, as a user runs them."""

from __future__ import annotations

import dataclasses
import json

import duckdb
import pytest
import yaml

from tests.integration.imported_system import METADATA_YAML, prediction_file, tsrate_cli
from tests.support.import_study import STUDY, import_warehouse
from tests.support.published_runs import listed_rows
from tsrate.config import load_companies
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

pytestmark = pytest.mark.slow

BASELINES = dataclasses.replace(STUDY, systems=("naive", "seasonal_naive"))
NEWEST = (
    "select run_id, systems, systems_rated, cast(withdrawn as varchar) from published_runs "
    "order by published_at desc limit 1"
)


def _newest_publication(snapshot) -> tuple:  # noqa: ANN001 - a Path
    with duckdb.connect(str(snapshot), read_only=True) as con:
        return con.execute(NEWEST).fetchone()


def test_the_snapshot_names_what_it_rates_and_what_was_withdrawn(tmp_path, monkeypatch, dbt_target):
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    monkeypatch.delenv("TSRATE_REPORT", raising=False)
    warehouse = import_warehouse(tmp_path, monkeypatch, dbt_target)
    snapshot = warehouse.parent / "published" / "tsrate.duckdb"
    predictions, _ = prediction_file(warehouse, tmp_path)
    with connect(warehouse) as con:
        import_forecasts(
            con,
            predictions,
            "external_llm",
            BASELINES,
            workers=1,
            metadata=yaml.safe_load(METADATA_YAML),
        )
        plain = run_forecasts(con, BASELINES, load_companies(), workers=1).run_id
        finish_run(con, plain, "forecasted")

    built = tsrate_cli(warehouse, "build")  # the plain run: the import stays rated
    assert built.returncode == 0, built.stderr
    run_id, systems, rated, withdrawn = _newest_publication(snapshot)
    assert run_id == plain
    assert sorted(systems) == ["naive", "seasonal_naive"]  # the run's own
    assert rated == ["external_llm", "naive", "seasonal_naive"]  # what the marts rate
    assert json.loads(withdrawn) == {}
    # `tsrate runs`: the run's own systems, and what its publication rates beyond them
    listed = {row["run_id"]: row for row in listed_rows(tsrate_cli(warehouse, "runs").stdout)}
    assert listed[plain]["rated"] == '["external_llm", "naive", "seasonal_naive"]'
    assert sorted(json.loads(listed[plain]["systems"])) == ["naive", "seasonal_naive"]
    assert [row["rated"] for run, row in listed.items() if run != plain] == [""]  # the import
    with duckdb.connect(str(snapshot), read_only=True) as con:
        in_marts = con.execute(
            "select distinct system_id from marts.ratings where run_id = ? order by 1", [plain]
        ).fetchall()
        assert [row[0] for row in in_marts] == rated
        # the imported system's display name (its --metadata), and a column description
        # that says where it comes from
        (name,) = con.execute(
            "select distinct display_name from marts.ratings where system_id = 'external_llm'"
        ).fetchone()
        (described,) = con.execute(
            "select comment from duckdb_columns() where schema_name = 'marts' "
            "and table_name = 'ratings' and column_name = 'display_name'"
        ).fetchone()
    assert name == yaml.safe_load(METADATA_YAML)["display_name"]
    assert "not in the seed" not in described and "imported system" in described

    done = tsrate_cli(warehouse, "withdraw", "external_llm", "--reason", "a test id")
    assert done.returncode == 0, done.stderr
    _, _, rated, withdrawn = _newest_publication(snapshot)
    assert rated == ["naive", "seasonal_naive"]
    listed = {row["run_id"]: row for row in listed_rows(tsrate_cli(warehouse, "runs").stdout)}
    assert listed[plain]["rated"] == ""  # its newest publication rates its own systems
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (when,) = con.execute("select withdrawn_at from raw.study_withdrawals").fetchone()
    assert json.loads(withdrawn) == {
        "external_llm": {"withdrawn_at": f"{when:%Y-%m-%d %H:%M:%S}", "reason": "a test id"}
    }
    report = (snapshot.parent / "report.html").read_text(encoding="utf-8")
    unrated = report[report.index("Systems not rated") :]
    row = unrated[unrated.index("<code>external_llm</code>") :]
    row = row[: row.index("</tr>")]
    assert f"withdrawn from this study ({when:%Y-%m-%d %H:%M}: a test id)" in row
    assert "not runnable" not in row
