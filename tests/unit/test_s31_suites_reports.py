"""The interpretability and reasoning reports on a snapshot published by an older release:
a mart or column the report reads that the snapshot lacks is one line naming the mart, the
column and the command that rebuilds the marts, never a raw DuckDB or pandas error.

The snapshots are real DuckDB files with every mart of the suite, each with the columns its
dbt documentation (models/<suite>/marts/*.yml) lists, then one column dropped as an older
release would lack it."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import yaml

from tsrate import TsrateError
from tsrate.suites.interpretability import report as interp_report
from tsrate.suites.reasoning import report as rsn_report

ROOT = Path(__file__).resolve().parents[2]
BOOLEAN = {"in_main_study", "higher_is_better", "applicable"}
TEXT = {"suite_run_id", "variant_id", "model_id", "attention", "measure", "study", "metric",
        "task", "system_id", "condition", "paper_label", "rating_reason", "context"}  # fmt: skip


def _documented(suite: str) -> dict[str, list[str]]:
    marts = {}
    for path in sorted((ROOT / "models" / suite / "marts").glob("*.yml")):
        for model in yaml.safe_load(path.read_text())["models"]:
            marts[model["name"]] = [c["name"] for c in model.get("columns", [])]
    return marts


def _snapshot(path: Path, suite: str, drop: tuple[str, str] | None = None) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("create schema marts")
        for table, columns in _documented(suite).items():
            kinds = [
                "boolean" if c in BOOLEAN else "varchar" if c in TEXT else "double" for c in columns
            ]
            body = ", ".join(f'"{c}" {k}' for c, k in zip(columns, kinds, strict=True))
            con.execute(f"create table marts.{table} ({body})")
        if drop:
            con.execute(f'alter table marts.{drop[0]} drop column "{drop[1]}"')
    return path


def test_a_current_snapshot_writes_both_reports(tmp_path):
    # the check asks for nothing a current snapshot lacks
    for suite, module in (("interpretability", interp_report), ("reasoning", rsn_report)):
        snapshot = _snapshot(tmp_path / f"{suite}.duckdb", suite)
        page = module.write_report(snapshot, tmp_path / f"{suite}.html").read_text()
        assert f"tsrate suite {suite} run" in page  # "no suite run in these marts yet"


@pytest.mark.parametrize(
    ("mart", "column"),
    [
        ("interp_correctness", "in_main_study"),  # the report's query filters on it
        ("interp_rating_stability", "n_seeds"),  # selected through a join
    ],
)
def test_an_interpretability_snapshot_without_a_column_names_it(tmp_path, mart, column):
    snapshot = _snapshot(tmp_path / "old.duckdb", "interpretability", (mart, column))
    with pytest.raises(TsrateError) as caught:
        interp_report.write_report(snapshot, tmp_path / "interpretability.html")
    assert str(caught.value) == (
        f"{snapshot}: marts.{mart} has no column {column} (published by an older tsrate): "
        "rebuild it with `tsrate suite interpretability build`"
    )
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "interpretability.html").exists()


def test_an_interpretability_snapshot_without_a_mart_names_it(tmp_path):
    snapshot = _snapshot(tmp_path / "old.duckdb", "interpretability")
    with duckdb.connect(str(snapshot)) as con:
        con.execute("drop table marts.interp_sensitivity")
    with pytest.raises(TsrateError, match=r"marts\.interp_sensitivity is not in this snapshot"):
        interp_report.write_report(snapshot, tmp_path / "interpretability.html")


@pytest.mark.parametrize(
    ("mart", "column"),
    [
        ("rsn_ratings", "rank"),  # the report's query orders by it
        ("rsn_task_accuracy", "chance_level"),  # read by the chance section
        ("rsn_perturbation_effects", "accuracy_perturbed"),  # a later mart, present but old
    ],
)
def test_a_reasoning_snapshot_without_a_column_names_it(tmp_path, mart, column):
    snapshot = _snapshot(tmp_path / "old.duckdb", "reasoning", (mart, column))
    with pytest.raises(TsrateError) as caught:
        rsn_report.write_report(snapshot, tmp_path / "reasoning.html")
    assert str(caught.value) == (
        f"{snapshot}: marts.{mart} has no column {column} (published by an older tsrate): "
        "rebuild it with `tsrate suite reasoning build`"
    )


def test_a_reasoning_snapshot_from_before_the_later_marts_still_reads(tmp_path):
    snapshot = _snapshot(tmp_path / "old.duckdb", "reasoning")
    with duckdb.connect(str(snapshot)) as con:
        con.execute("drop table marts.rsn_perturbation_effects")
        con.execute("drop table marts.rsn_context_combinations")
    page = rsn_report.write_report(snapshot, tmp_path / "reasoning.html").read_text()
    assert "Reasoning suite" in page


def test_the_required_columns_are_the_documented_ones():
    # a column the check asks for that the current marts do not have would refuse every report
    for suite, required in (
        ("interpretability", interp_report.REQUIRED),
        ("reasoning", {**rsn_report.REQUIRED, **rsn_report.LATER_REQUIRED}),
    ):
        documented = _documented(suite)
        for mart, columns in required.items():
            assert set(columns) <= set(documented[mart]), (
                mart,
                set(columns) - set(documented[mart]),
            )
