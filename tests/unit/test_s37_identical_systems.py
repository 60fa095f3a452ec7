"""Two system ids whose forecasts cannot be told apart are said to be so: the pair detection
(tsrate.robustness.identical) on hand-built forecast tables, the import's line when an
import equals a system already stored for its study (tests/unit/conftest.py's ``warehouse``
and ``good`` fixtures: the import study, no dbt), and the report verdict's sentence.

Through the real ``tsrate import-predictions`` in a child process:
tests/integration/test_s37_identical_imports.py."""

from __future__ import annotations

import re

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.support.import_study import STUDY, imported, write_csv
from tests.support.report_frames import two_systems
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.identical import RELATIVE_TOLERANCE, identical_pairs
from tsrate.robustness.report.render import build_report
from tsrate.robustness.withdrawals import withdraw_system

WINDOWS = ["2022-10-03", "2022-10-10", "2022-10-17"]


def forecasts(system: str, values, perturbation: str = "P0") -> pd.DataFrame:
    """One row per window x step (two steps) of ticker AAPL: ``values`` in that order."""
    keys = [(w, step) for w in WINDOWS for step in (1, 2)]
    return pd.DataFrame(
        {
            "system_id": system,
            "ticker": "AAPL",
            "window_end_date": pd.to_datetime([w for w, _ in keys]),
            "perturbation_id": perturbation,
            "horizon_step": [s for _, s in keys],
            "forecast": np.asarray(values, dtype=float),
        }
    )


BASE = [100.0, 101.0, 102.5, 103.0, 99.0, 98.25]


def pairs_of(*frames: pd.DataFrame) -> list[tuple[str, str]]:
    con = duckdb.connect()
    con.register("steps_in", pd.concat(frames, ignore_index=True))
    return [(a, b) for a, b, _ in identical_pairs(con, "steps_in")]


def test_the_same_forecasts_under_two_ids_are_a_pair_and_a_different_one_is_not():
    other = [v + 0.5 for v in BASE]
    found = pairs_of(forecasts("b", BASE), forecasts("a", BASE), forecasts("c", other))
    assert found == [("a", "b")]


def test_a_pair_equal_on_all_but_one_window_is_not_identical():
    last_window_differs = [*BASE[:4], BASE[4] + 0.01, BASE[5]]
    assert pairs_of(forecasts("a", BASE), forecasts("b", last_window_differs)) == []
    last_step_differs = [*BASE[:5], BASE[5] - 0.01]  # the last window's second step only
    assert pairs_of(forecasts("a", BASE), forecasts("b", last_step_differs)) == []
    first_step_differs = [BASE[0] * (1 + 1e-6), *BASE[1:]]
    assert pairs_of(forecasts("a", BASE), forecasts("b", first_step_differs)) == []


def test_the_tolerance_is_1e_9_of_the_larger_magnitude():
    assert RELATIVE_TOLERANCE == 1e-9
    within = [v * (1 + 0.5e-9) for v in BASE]
    beyond = [*BASE[:5], BASE[5] * (1 + 3e-9)]
    assert pairs_of(forecasts("a", BASE), forecasts("b", within)) == [("a", "b")]
    assert pairs_of(forecasts("a", BASE), forecasts("b", beyond)) == []
    # relative, not absolute: near zero a difference of 1e-12 is far beyond 1e-9 of it
    tiny = [1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6]
    nudged = [1e-6 + 1e-12, *tiny[1:]]
    assert pairs_of(forecasts("a", tiny), forecasts("b", nudged)) == []
    zeros = [0.0] * 6
    assert pairs_of(forecasts("a", zeros), forecasts("b", zeros)) == [("a", "b")]


def test_missing_forecasts_are_the_same_only_where_both_miss():
    holes = [BASE[0], np.nan, *BASE[2:]]
    same_holes = [BASE[0], np.nan, *BASE[2:]]
    assert pairs_of(forecasts("a", holes), forecasts("b", same_holes)) == [("a", "b")]
    # a NaN beside a number is a difference (DuckDB's NaN compares above every number)
    assert pairs_of(forecasts("a", BASE), forecasts("b", holes)) == []
    assert pairs_of(forecasts("a", holes), forecasts("b", BASE)) == []
    null = forecasts("b", BASE).astype({"forecast": "Float64"})
    null.loc[1, "forecast"] = pd.NA
    assert pairs_of(forecasts("a", holes), null) == [("a", "b")]  # null and NaN both miss
    inf = [np.inf, *BASE[1:]]
    assert pairs_of(forecasts("a", inf), forecasts("b", inf)) == [("a", "b")]
    assert pairs_of(forecasts("a", inf), forecasts("b", [-np.inf, *BASE[1:]])) == []


def test_systems_are_compared_on_the_windows_they_share():
    """An import of P0 alone equal to another system's P0 is identical where both forecast;
    systems that share no forecast step are no pair."""
    full = pd.concat([forecasts("a", BASE), forecasts("a", [v + 1 for v in BASE], "P1")])
    assert pairs_of(full, forecasts("p0_only", BASE)) == [("a", "p0_only")]
    assert pairs_of(forecasts("a", BASE), forecasts("elsewhere", BASE, "P2")) == []


def _import(warehouse, frame, tmp_path, system_id):
    """Import ``frame`` as ``system_id`` (from ``system_id``.csv): its summary and the lines
    it said of a stored system it cannot be told apart from."""
    summary, said = imported(warehouse, frame, tmp_path, f"{system_id}.csv", system_id)
    return summary, [line for line in said if "cannot be told apart" in line]


def test_an_import_equal_to_a_stored_system_of_its_study_says_so(warehouse, good, tmp_path):
    frame = good.copy()
    frame["forecast"] = frame["forecast"].astype(float) + 3.25  # forecasts no other test has
    _, first = _import(warehouse, frame, tmp_path, "twin_a")
    assert first == []
    summary, lines = _import(warehouse, frame, tmp_path, "twin_b")
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("twin_b's forecasts equal those of twin_a, already stored for study")
    assert f"({len(frame)} forecasts, equal to 1e-9 relative)" in line
    assert "will be rated alike" in line and "tsrate withdraw twin_b --study " in line
    assert "\n" not in line
    # one window of one ticker and perturbation moved: no longer identical, no line
    moved = frame.copy()
    moved.loc[moved.index[-1], "forecast"] += 0.01
    _, lines = _import(warehouse, moved, tmp_path, "twin_c")
    assert lines == []
    # a system withdrawn from the study is no longer rated beside it: no line
    with connect(warehouse) as con:
        withdraw_system(con, "twin_a", summary.study_id)
        withdraw_system(con, "twin_b", summary.study_id)
    _, lines = _import(warehouse, frame, tmp_path, "twin_d")
    assert lines == []


def test_an_import_equal_to_the_baseline_forecast_into_its_own_run_names_it(warehouse, tmp_path):
    """The study's naive baseline is forecast into the import's run: a file holding its
    forecasts (read back from the store) is named as naive's twin."""
    with connect(warehouse) as con:
        first = import_forecasts(
            con,
            write_csv(tmp_path, _naive_grid(con), "seed.csv"),
            "naive_seed",
            STUDY,
            metadata={"display_name": "seed"},
        )
        naive = _naive_grid(con, first.run_id)
    said = []
    with connect(warehouse) as con:
        import_forecasts(
            con,
            write_csv(tmp_path, naive, "copy.csv"),
            "naive_copy",
            STUDY,
            progress=said.append,
            metadata={"display_name": "copy"},
        )
    lines = [line for line in said if "cannot be told apart" in line]
    assert len(lines) == 1 and "equal those of naive, already stored" in lines[0], said


def _naive_grid(con, run_id: str | None = None) -> pd.DataFrame:
    """The naive baseline's stored forecasts of ``run_id`` as an import file's rows (None:
    a grid of the import study's clean actuals, to start a run of the study)."""
    if run_id is None:
        from tests.support.import_study import prediction_grid
        from tsrate.robustness.forecast.plan import load_series

        return prediction_grid(load_series(con, STUDY)).assign(forecast=lambda f: f.forecast - 1)
    return con.execute(
        "select f.ticker, strftime(f.window_end_date, '%Y-%m-%d') as window_end_date, "
        "f.perturbation_id, f.horizon_step, f.forecast from raw.forecasts f "
        "join raw.run_partitions r using (partition_key) "
        "where r.run_id = ? and f.system_id = 'naive' order by all",
        [run_id],
    ).df()


@pytest.mark.parametrize("n_pairs", [1, 4])
def test_the_verdict_names_identical_pairs_in_one_sentence(n_pairs):
    pairs = [("good", "bad", 12), ("a", "b", 3), ("c", "d", 3), ("e", "f", 3)][:n_pairs]
    html = build_report(two_systems(identical_pairs=pairs), generated_at="now").html
    verdict = re.search(r'<section id="verdict">(.*?)</section>', html, re.S).group(1)
    plain = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", verdict))
    said = [s for s in plain.split(". ") if "cannot be told apart" in s]
    assert len(said) == 1, plain
    assert "good and bad" in said[0] and "rated alike" in said[0]
    assert ("and 1 more pair;" in said[0]) == (n_pairs == 4)
    assert ("e and f" in said[0]) is False
    plain_none = re.sub(r"<[^>]+>", "", build_report(two_systems(), generated_at="now").html)
    assert "cannot be told apart" not in plain_none


def test_several_twins_are_named_with_the_range_of_their_shared_forecasts(
    warehouse, good, tmp_path
):
    frame = good.copy()
    frame["forecast"] = frame["forecast"].astype(float) + 7.75  # forecasts no other test has
    p0 = frame[frame["perturbation_id"] == "P0"]
    assert 0 < len(p0) < len(frame)
    _import(warehouse, frame, tmp_path, "trio_a")
    _import(warehouse, p0, tmp_path, "trio_b")  # P0 only: shares fewer steps
    _, lines = _import(warehouse, frame, tmp_path, "trio_c")
    assert len(lines) == 1, lines
    assert lines[0].startswith("trio_c's forecasts equal those of trio_a and trio_b, ")
    assert f"({len(p0)} to {len(frame)} forecasts, equal to 1e-9 relative)" in lines[0]
    assert ": they cannot be told apart" in lines[0]
