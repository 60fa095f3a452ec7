"""Sweep 12: the errors planted in the session's new code that its own tests missed.

Each test checks our code against an independent computation written here (plain Python loops
over the documented rule, numpy or itertools), never against our own helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tsrate.methods.noise import snap_row_ties, snap_ties

NOISE = 1e-12


def ties_by_hand(row: list[float]) -> list[float]:
    """snap_ties' documented rule, one value at a time: in ascending order (NaN last), a value
    within NOISE x max(1, largest finite |x|) of the first value of its run takes that value."""
    finite = [abs(v) for v in row if math.isfinite(v)]
    bound = NOISE * max(1.0, max(finite, default=0.0))
    out = list(row)
    start = None
    for i in sorted(range(len(row)), key=lambda i: (math.isnan(row[i]), row[i])):
        value = row[i]
        if math.isnan(value):
            continue
        if start is not None and value - start <= bound:
            out[i] = start
        else:
            start = value
    return out


def same(a, b) -> bool:
    return np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True)


def test_two_values_within_noise_tie():
    # two systems are the smallest group rated: their noise must tie them too
    x = [2.0, 2.0 + 1e-13]
    assert same(snap_ties(x), ties_by_hand(x)) and snap_ties(x)[1] == 2.0
    rows = np.array([[5.0, 5.0 - 1e-13], [1.0, 3.0]])
    assert same(snap_row_ties(rows), [ties_by_hand(list(r)) for r in rows])
    assert snap_row_ties(rows)[0, 0] == 5.0 - 1e-13


def test_the_bound_scales_with_the_largest_value_not_the_smallest():
    # bound 1e-12 x 1e6 = 1e-6: the two large values differ by 1e-7 and tie
    x = [0.5, 1e6, 1e6 + 1e-7]
    expected = ties_by_hand(x)
    assert expected[2] == 1e6
    assert same(snap_ties(x), expected)


def test_below_one_the_bound_is_noise_itself():
    # scale 0.5 < 1: bound 1e-12, so 1.5e-12 apart stays apart (a bound of 2e-12 would tie)
    x = [0.5, 0.5 + 1.5e-12]
    assert ties_by_hand(x) == x
    assert same(snap_ties(x), x)


def test_empty_and_single_column_rows_come_back_unchanged():
    for shape in [(3, 0), (0, 0), (2, 1)]:
        rows = np.arange(math.prod(shape), dtype=float).reshape(shape)
        out = snap_row_ties(rows)
        assert out.shape == shape and same(out, rows)
    assert snap_ties([]).shape == (0,)
    assert same(snap_ties([4.0]), [4.0])


@pytest.mark.parametrize("seed", range(5))
def test_random_rows_match_the_rule_by_hand(seed):
    rng = np.random.default_rng(seed)
    base = rng.choice([0.3, 1.7, 250.0, -4.0], size=(6, 7))
    rows = base + rng.choice([0.0, 1e-13, -1e-13, 3e-12, 1e-9], size=base.shape)
    rows[rng.random(rows.shape) < 0.1] = np.nan
    assert same(snap_row_ties(rows), [ties_by_hand(list(r)) for r in rows])
    for row in rows:
        assert same(snap_ties(row), ties_by_hand(list(row)))


def test_a_value_exactly_at_the_bound_ties():
    # 1e-12 - 0 is exactly the bound NOISE x max(1, 1e-12): "within" includes the bound
    x = [0.0, 1e-12]
    assert ties_by_hand(x) == [0.0, 0.0]
    assert same(snap_ties(x), [0.0, 0.0])
    assert same(snap_row_ties(np.array([[1e-12, 0.0, 7.0]])), [[0.0, 0.0, 7.0]])


def test_share_mc_se_is_the_binomial_formula_even_over_one_resample():
    from tsrate.suites.rating import share_mc_se

    # sqrt(p (1 - p) / R), R >= 1; NaN with no resample counted or a NaN share
    for share, counted in [(1.0, 1), (0.0, 1), (0.5, 2), (0.25, 4), (1.0, 3)]:
        assert share_mc_se(share, counted) == pytest.approx(
            math.sqrt(share * (1 - share) / counted), abs=0
        )
    assert math.isnan(share_mc_se(0.5, 0))
    assert math.isnan(share_mc_se(1.0, 0))
    assert math.isnan(share_mc_se(float("nan"), 5))


def test_six_seeds_are_still_bootstrapped_exactly():
    """The exact limit is six seeds (C(11, 6) = 462 distinct draws): with six the share is
    the event's probability over the 6^6 equally likely ordered draws, enumerated here."""
    import itertools

    import pandas as pd

    from tsrate.suites.interpretability import marts as interp

    mse = {"A": [1.0, 3.5, 1.1, 1.3, 2.4, 1.2], "B": [2.01, 1.97, 2.03, 1.91, 2.12, 2.05]}
    runs = pd.DataFrame(
        [{"suite_run_id": "r", "variant_id": "d2", "model_id": model, "seed": seed,
          "run_key": f"{model}-{seed}", "test_mse": value}
         for model, values in mse.items() for seed, value in enumerate(values, start=1)]
    )  # fmt: skip
    correctness = pd.DataFrame(
        columns=["suite_run_id", "variant_id", "model_id", "seed", "measure", "margin"]
    )
    attention = pd.DataFrame(
        columns=["suite_run_id", "variant_id", "model_id", "seed", "attention",
                 "target_index", "source_index", "lag", "value"]
    )  # fmt: skip
    scores = runs.groupby(["suite_run_id", "variant_id", "model_id"], as_index=False)
    scores = scores["test_mse"].mean().rename(columns={"test_mse": "raw_score"})
    ratings = interp.rating_table(scores.assign(metric="test_mse"), 3)
    assert dict(zip(ratings["model_id"], ratings["rating"], strict=True)) == {"A": 1, "B": 2}
    a, b = np.array(mse["A"]), np.array(mse["B"])
    ordered = np.array(list(itertools.product(range(6), repeat=6)))
    mean_a, mean_b = a[ordered].mean(axis=1), b[ordered].mean(axis=1)
    assert (np.abs(mean_a - mean_b) > 1e-9).all()
    expected = float(np.mean(mean_a < mean_b))
    table = interp.rating_stability_table(runs, correctness, attention, ratings, 3, seed=7)
    table = table.set_index("model_id")
    assert (table["n_resamples"] == math.comb(11, 6)).all() and (table["n_seeds"] == 6).all()
    assert (table["share_mc_se"] == 0.0).all()
    for model in ("A", "B"):
        assert table.loc[model, "share_at_rating"] == pytest.approx(expected, abs=1e-12)


def test_the_withholding_rule_is_more_than_five_percent_of_the_resamples():
    from tsrate.suites.intervals import too_many_undefined

    # 5 % of 200 is 10: 10 undefined keep the interval, 11 withhold it; so do 15 (7.5 %)
    assert not too_many_undefined(10, 200)
    assert too_many_undefined(11, 200) and too_many_undefined(15, 200)
    # weights of an exact bootstrap: probabilities out of 1
    assert not too_many_undefined(0.05, 1.0) and too_many_undefined(0.07, 1.0)
    assert too_many_undefined(0, 0)


def test_chance_of_a_constant_attention_is_known_by_hand():
    """A constant attention ranks nothing, whatever truth it is scored against: Spearman 0,
    AUROC 1/2 (every cell tied), top-k k/candidates per target (all tied: each of the k
    slots holds a true cell with probability k/candidates) and per lag pair alike. So the
    chance level is known by hand (it is exact: no random draws)."""
    from tsrate.suites.interpretability.measures import chance_level

    beta = np.ones((3, 4))
    truth = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0.0]])
    lag_truth = np.zeros((3, 4, 3))
    lag_truth[0, 0, 1] = lag_truth[1, 0, 0] = lag_truth[1, 1, 2] = 1
    got = chance_level(beta, np.ones((3, 4, 3)), None, truth, lag_truth)
    k = (truth > 0).sum(1)
    lag_k = (lag_truth > 0).sum(-1)
    assert got["beta_spearman"] == 0.0
    assert got["beta_auroc"] == pytest.approx(0.5, abs=1e-15)
    assert got["beta_topk"] == pytest.approx(np.mean(k / 4), abs=1e-15)
    assert got["alpha_lag_topk"] == pytest.approx(np.mean(lag_k[lag_k > 0] / 3), abs=1e-15)


def test_chance_top_k_counts_each_targets_own_candidate_sources():
    """A constant attention with unattended (NaN) cells that differ by target: target 0 has
    3 candidate sources, target 1 two, target 2 one. Each has one true source, so top-1's
    chance is 1/3 and 1/2 for the first two, and target 2 (no more candidates than true
    sources) has no top-k: 5/12. Counting candidates per source column instead (1, 2, 3)
    would give 3/4."""
    from tsrate.suites.interpretability.measures import chance_level

    beta = np.array([[1.0, 1.0, 1.0], [np.nan, 1.0, 1.0], [np.nan, np.nan, 1.0]])
    truth = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 1.0]])
    got = chance_level(beta, None, None, truth, np.zeros((3, 3, 1)))
    assert got["beta_topk"] == pytest.approx(np.mean([1 / 3, 1 / 2]), abs=1e-15)


def test_chance_is_undefined_without_a_true_edge_even_for_a_constant_attention():
    """No true edge: every permuted truth is constant, so Spearman is undefined (SciPy: NaN
    for a constant column), as are AUROC (one class) and top-k (k = 0), however the
    attention looks: a constant attention's 'chance 0' applies only to a truth that varies."""
    from scipy import stats

    from tsrate.suites.interpretability.measures import chance_level

    beta = np.ones((3, 3))
    truth = np.zeros((3, 3))
    with np.errstate(invalid="ignore"), pytest.warns(stats.ConstantInputWarning):
        assert math.isnan(stats.spearmanr(beta.ravel(), truth.ravel()).statistic)
    got = chance_level(beta, None, None, truth, np.zeros((3, 3, 1)))
    assert math.isnan(got["beta_spearman"])
    assert math.isnan(got["beta_auroc"]) and math.isnan(got["beta_topk"])


def test_the_note_names_exactly_twelve_scores_without_a_remainder():
    from tsrate.suites.verdict import _listed

    twelve = [f"s{i:02d}" for i in range(12)]
    text = _listed(twelve)
    assert text.count("<code>") == 12 and "more" not in text
    text = _listed([*twelve, "s12"])
    assert text.count("<code>") == 12 and text.endswith("and 1 more")


def test_no_ratings_give_no_summary_table():
    import pandas as pd

    from tsrate.suites.verdict import summary_table_html

    assert summary_table_html(None) == ""
    assert summary_table_html(pd.DataFrame()) == ""
    assert summary_table_html(pd.DataFrame({"system_id": ["a"], "raw_score": [1.0]})) == ""


def test_a_writer_that_waited_one_second_says_so(tmp_path, monkeypatch):
    """--lock-timeout 1: the refusal says it waited (any positive timeout does)."""
    import fcntl
    import os
    import time

    from tsrate.platform.locking import WarehouseBusy, lock_path, writer_lock

    warehouse = tmp_path / "w.duckdb"
    fd = os.open(lock_path(warehouse), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setattr(time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    try:
        with pytest.raises(WarehouseBusy) as caught:
            with writer_lock(warehouse, timeout=1):
                pass
    finally:
        os.close(fd)
    assert " Gave up after waiting 1s:" in str(caught.value)


def test_the_dry_run_prints_one_line_of_four_fields_per_schedule():
    import json

    from tsrate.platform.serve import ScheduleConfig, build_deployments, schedule_lines

    deployments = build_deployments(ScheduleConfig(timezone="Europe/Berlin"))
    expected = [
        [d.name, s.schedule.cron, s.schedule.timezone or "UTC", d.parameters or {}]
        for d in deployments
        for s in d.schedules
    ]
    assert len(expected) >= 2
    lines = schedule_lines(deployments)
    got = [line.split("\t") for line in lines]
    assert [row[:3] for row in got] == [row[:3] for row in expected]
    assert [json.loads(row[3]) for row in got] == [row[3] for row in expected]
    assert {row[2] for row in got} == {"Europe/Berlin"}
    # one line of JSON with sorted keys: the same parameters print the same line
    assert [row[3] for row in got] == [json.dumps(row[3], sort_keys=True) for row in expected]


def test_stability_counts_count_each_resample_or_its_weight():
    from tsrate.suites.intervals import stability_counts

    published = {"a": 1, "b": 2}  # ratings of two systems on two levels: 1 the lower score
    resampled = [{"a": 1.0, "b": 2.0}, {"a": 3.0, "b": 2.0}]
    hits, counted = stability_counts(published, resampled, 2)
    assert hits == {"a": 1.0, "b": 1.0} and counted == {"a": 2.0, "b": 2.0}
    hits, counted = stability_counts(published, resampled, 2, weights=[0.25, 0.75])
    assert hits == {"a": 0.25, "b": 0.25} and counted == {"a": 1.0, "b": 1.0}


def _runs_warehouse(rows, study_id=True, studies=True):
    import duckdb

    con = duckdb.connect()
    con.execute("create schema raw")
    column = ", study_id varchar" if study_id else ""
    con.execute(
        f"create table raw.runs (run_id varchar, status varchar, started_at timestamp{column})"
    )
    for row in rows:
        con.execute(f"insert into raw.runs values ({', '.join('?' * len(row))})", list(row))
    if studies:
        con.execute("create table raw.studies (study_id varchar)")
    return con


def test_current_study_id_is_the_newest_complete_runs_study():
    from tsrate.robustness.studies import current_study_id

    rows = [
        ("r1", "succeeded", "2026-01-01 00:00:00", "s1"),
        ("r2", "forecasted", "2026-01-03 00:00:00", "s2"),
        ("r3", "failed", "2026-01-05 00:00:00", "s3"),  # incomplete: not the current one
        ("r0", "publish_failed", "2026-01-03 00:00:00", "s0"),  # same start: run_id desc
    ]
    assert current_study_id(_runs_warehouse(rows)) == "s2"
    assert current_study_id(_runs_warehouse(rows[2:3])) is None  # no complete run
    assert current_study_id(_runs_warehouse([r[:3] for r in rows], study_id=False)) is None


def test_studies_are_stored_only_with_both_tables_and_every_runs_study():
    from tsrate.robustness.studies import studies_stored

    done = [("r1", "succeeded", "2026-01-01 00:00:00", "s1")]
    assert studies_stored(_runs_warehouse(done))
    assert not studies_stored(_runs_warehouse(done, studies=False))
    assert not studies_stored(_runs_warehouse([(*done[0][:3], None)]))
    assert not studies_stored(_runs_warehouse([r[:3] for r in done], study_id=False))


def test_a_numpy_date_inside_a_nested_value_is_a_plain_date():
    import datetime as dt

    import duckdb

    from tsrate.platform.query import _plain

    date = duckdb.sqltype("DATE")
    assert _plain(np.datetime64("2026-01-02"), date) == dt.date(2026, 1, 2)
    assert _plain(np.datetime64("2026-01-02T05:00"), date) == dt.date(2026, 1, 2)
    assert _plain(np.datetime64("NaT"), date) is None
    assert _plain(dt.date(2026, 1, 3), date) == dt.date(2026, 1, 3)
    listed = _plain(
        np.array(["2026-01-04", "NaT"], dtype="datetime64[us]"), duckdb.sqltype("DATE[]")
    )
    assert listed == [dt.datetime(2026, 1, 4).date(), None]


def test_nested_text_prints_as_itself_not_escaped():
    import json

    from tsrate.platform.query import _nested_as_json

    value = ["Société Générale", {"名": "ü"}]
    assert _nested_as_json(value) == json.dumps(value, ensure_ascii=False)
    assert "é" in _nested_as_json(value)


def test_stability_counts_rate_a_lone_system_lower_is_better_by_default():
    """One system on [ideal 0, maximum 10] in three levels: 2.0 and 3.0 lie in the first
    third, rating 1 when lower is better (the default), 9.0 in the last, rating 3."""
    from tsrate.suites.intervals import stability_counts

    resampled = [{"a": 2.0}, {"a": 3.0}, {"a": 9.0}]
    hits, counted = stability_counts({"a": 1}, resampled, 3, ideal=0.0, maximum=10.0)
    assert hits == {"a": 2.0} and counted == {"a": 3.0}
