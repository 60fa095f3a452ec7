"""How the report reads a snapshot (tsrate.robustness.report.data): a tiny snapshot written
by hand in a temporary DuckDB file (no dbt), then load_report_data's frames checked row by
row: the paper's outcome only, the optional marts it reports missing, the context tail of
the forecast plots (3 horizons, at most the whole context, an unknown horizon counting as
1), the study's system order deciding which system a shared window is chosen for, and
choose_trace_windows' tie rule (ticker, then date, then perturbation).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_report_figures.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.robustness.report import data as rd

RUN = "r1"
WINDOW = "2022-03-01"


def _snapshot(path: Path, study: dict, *, published: bool = True, extra: bool = True) -> Path:
    """The four required marts (ratings at two outcomes), and with ``extra`` a stability
    mart, forecast traces of systems a and b at two windows, 80 context steps each, and a
    robustness_scores mart WITHOUT the separation columns (an older snapshot)."""
    con = duckdb.connect(str(path))
    con.execute("create schema marts; create schema seeds")
    if published:
        con.execute(
            "create table published_runs as select * from (values "
            "('old', timestamp '2026-01-01', '{\"systems\": []}'), "
            "(?, timestamp '2026-01-02', ?), "
            "('suite', timestamp '2026-01-03', null)) t(run_id, published_at, study)",
            [RUN, json.dumps(study)],
        )
    con.execute(
        "create table marts.ratings as select * from (values "
        f"('{RUN}', 'smape', 'P1', 'a', 1.0, 'max_abs_residual', true), "
        f"('{RUN}', 'smape', 'P1', 'b', 2.0, 'max_abs_residual', true), "
        f"('{RUN}', 'wrs_company', 'P1', 'a', 3.0, 'relative_max_abs_residual', false), "
        "('old', 'smape', 'P1', 'a', 9.0, 'max_abs_residual', true)"
        ") t(run_id, metric, perturbation_id, system_id, raw_score, outcome, is_default_outcome)"
    )
    for name in ("system_summary", "perturbation_summary", "confounder_comparison"):
        con.execute(
            f"create table marts.{name} as select * from (values ('{RUN}', 1.0), ('old', 2.0)) "
            "t(run_id, x)"
        )
    if extra:
        con.execute(
            "create table marts.rating_stability as select * from (values "
            f"('{RUN}', 'smape', 'P1', 'a', 1, 1, 0.7, 0.5, 1.5, 10, 10, 0.9), "
            f"('{RUN}', 'smape', 'P1', 'a', 1, 2, 0.3, 0.5, 1.5, 10, 10, 0.9)"
            ") t(run_id, metric, perturbation_id, system_id, rating, rating_level, share, "
            "ci_low, ci_high, n_valid, n_resamples, confidence)"
        )
        # a strays at window 1 (forecast 20 against a consensus of 15: 5/10), b at both (the
        # consensus is the median of the two: both stray alike) -> the first listed system
        # of the study takes the first window
        con.execute(
            "create table marts.forecast_traces as select * from (values "
            f"('{RUN}', 'a', 'AAA', date '{WINDOW}', 'P1', 1, 20.0, 15.0, 10.0, 2), "
            f"('{RUN}', 'b', 'AAA', date '{WINDOW}', 'P1', 1, 10.0, 15.0, 10.0, 2), "
            f"('{RUN}', 'a', 'AAA', date '2022-03-02', 'P1', 1, 10.0, 10.5, 10.0, 2), "
            f"('{RUN}', 'b', 'AAA', date '2022-03-02', 'P1', 1, 11.0, 10.5, 10.0, 2)"
            ") t(run_id, system_id, ticker, window_end_date, perturbation_id, horizon_step, "
            "forecast, consensus_forecast, actual, n_systems)"
        )
        con.execute(
            "create table marts.window_inputs as select "
            f"'{RUN}' as run_id, 'AAA' as ticker, w.d as window_end_date, 'P1' as perturbation_id, "
            "s.k::integer as context_step, w.d - interval (80 - s.k) day as price_date, "
            "100.0 + s.k as clean_value, 100.0 + s.k as input_value "
            f"from (values (date '{WINDOW}'), (date '2022-03-02')) w(d), range(1, 81) s(k)"
        )
        con.execute(
            "create table marts.robustness_scores as select "
            f"'{RUN}' as run_id, 'smape' as metric, 'P1' as perturbation_id, 'x' as outcome"
        )
    con.close()
    return path


STUDY = {"systems": ["b", "a"], "context_length": 80, "horizon": 2}


def test_the_loader_reads_the_newest_study_run_at_the_papers_outcome(tmp_path):
    data = rd.load_report_data(_snapshot(tmp_path / "s.duckdb", STUDY))
    assert data.run_id == RUN and data.study == STUDY
    assert data.ratings["raw_score"].tolist() == [1.0, 2.0]
    assert list(data.ratings.index) == [0, 1]
    assert data.system_summary["x"].tolist() == [1.0]
    assert data.missing_marts == ["group_comparisons", "modality_pairs"]
    assert data.group_comparisons.empty and data.systems.empty and data.companies.empty
    # the stability row at the published rating only (rating_level = rating)
    assert data.stability["share"].tolist() == [0.7]
    # robustness_scores without separates_systems: no separation frame
    assert data.separation.empty
    assert data.outcome_ratings["outcome"].tolist() == ["relative_max_abs_residual"]


def test_the_default_outcome_view_has_a_fresh_index():
    frame = pd.DataFrame({"is_default_outcome": [False, True, True], "v": [1, 2, 3]})
    view = rd._default_outcome(frame)
    assert view["v"].tolist() == [2, 3] and list(view.index) == [0, 1]
    assert list(view.columns) == ["is_default_outcome", "v"]  # the old index not kept
    plain = pd.DataFrame({"v": [1]})
    assert rd._default_outcome(plain) is plain


def test_a_snapshot_another_reader_holds_read_only_still_loads(tmp_path):
    """The loader opens the snapshot read-only, so it can read beside a read-only
    connection the same process holds (DuckDB refuses a second configuration)."""
    path = _snapshot(tmp_path / "s.duckdb", STUDY)
    reader = duckdb.connect(str(path), read_only=True)
    try:
        assert rd.load_report_data(path).run_id == RUN
    finally:
        reader.close()


def test_a_snapshot_without_published_runs_names_them(tmp_path):
    path = _snapshot(tmp_path / "s.duckdb", STUDY, published=False)
    with pytest.raises(
        TsrateError, match=r"not a complete tsrate snapshot: missing \['published_runs'\]"
    ):
        rd.load_report_data(path)


def test_a_snapshot_without_the_optional_marts_lists_them(tmp_path):
    data = rd.load_report_data(_snapshot(tmp_path / "s.duckdb", STUDY, extra=False))
    assert data.missing_marts == list(rd.OPTIONAL_MARTS)
    assert data.stability.empty and data.traces.empty and data.trace_windows.empty


def test_the_report_path_is_beside_the_snapshot(tmp_path, monkeypatch):
    monkeypatch.delenv("TSRATE_REPORT", raising=False)
    assert rd.default_report_path(tmp_path / "p" / "t.duckdb") == tmp_path / "p" / rd.REPORT_NAME
    monkeypatch.setenv("TSRATE_REPORT", str(tmp_path / "x.html"))
    assert rd.default_report_path(tmp_path / "t.duckdb") == tmp_path / "x.html"


@pytest.mark.parametrize(
    ("study", "steps"),
    [
        (STUDY, list(range(75, 81))),  # 3 horizons of 2: the last 6 of 80 steps
        ({"systems": ["b", "a"], "context_length": 80}, [78, 79, 80]),  # no horizon: 1
        ({"systems": ["b", "a"], "context_length": 80, "horizon": None}, [78, 79, 80]),
        ({"systems": ["b", "a"], "context_length": 80, "horizon": 30}, list(range(1, 81))),
    ],
)
def test_the_context_tail_is_three_horizons_at_most_the_context(tmp_path, study, steps):
    """window_inputs rows with context_step > context_length - tail, tail = min(context,
    3 x horizon) (at least 1): a horizon of 30 draws the whole context."""
    data = rd.load_report_data(_snapshot(tmp_path / "s.duckdb", study))
    assert data.contexts["window_end_date"].nunique() == 2
    for _, window in data.contexts.groupby("window_end_date"):
        assert window["context_step"].tolist() == steps


def test_the_studys_first_system_takes_a_shared_window(tmp_path):
    """The study lists b before a, alphabetically last: b (0.5 at window 1, 0.05 at window
    2) takes both its windows, so a (the same disagreements) is left none."""
    data = rd.load_report_data(_snapshot(tmp_path / "s.duckdb", STUDY))
    got = [(r.system_id, str(r.window_end_date.date())) for r in data.trace_windows.itertuples()]
    assert got == [("b", WINDOW), ("b", "2022-03-02")]
    assert set(data.traces["system_id"]) == {"a", "b"}


def test_ties_are_broken_by_ticker_then_date_then_perturbation():
    d1, d2 = pd.Timestamp("2022-01-03"), pd.Timestamp("2022-01-04")
    rows = [
        ("s", "BBB", d1, "P0"),
        ("s", "AAA", d2, "P0"),
        ("s", "AAA", d1, "P2"),
        ("s", "AAA", d1, "P1"),
    ]
    frame = pd.DataFrame(
        [dict(system_id=s, ticker=t, window_end_date=d, perturbation_id=p, disagreement=0.5)
         for s, t, d, p in rows]
    )  # fmt: skip
    chosen = rd.choose_trace_windows(frame, ["s"], per_system=4)
    assert [(r.ticker, r.window_end_date, r.perturbation_id) for r in chosen.itertuples()] == [
        ("AAA", d1, "P1"),
        ("AAA", d1, "P2"),
        ("AAA", d2, "P0"),
        ("BBB", d1, "P0"),
    ]
    # a system the list does not name comes after, and takes what is left
    frame2 = pd.concat([frame, frame.assign(system_id="z")], ignore_index=True)
    late = rd.choose_trace_windows(frame2, ["s"], per_system=3)
    assert [(r.system_id, r.ticker) for r in late.itertuples()] == [
        ("s", "AAA"), ("s", "AAA"), ("s", "AAA"), ("z", "BBB"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("context", "horizon", "tail"),
    [(80, 20, 60), (40, 20, 40), (80, 1, 3), (1, 20, 1), (2, 20, 2), (0, 20, 1), (80, 0, 1)],
)
def test_the_tail_is_three_horizons_at_most_the_context_at_least_one(context, horizon, tail):
    assert rd.context_tail_length(context, horizon) == tail
