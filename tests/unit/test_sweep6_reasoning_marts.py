"""The reasoning suite's mart functions (tsrate.suites.reasoning.marts, the logic of the dbt
Python models int_rsn_*) on small frames, against values worked out independently: errors
and scales by hand and with plain numpy loops, CRPS by its pairwise definition, the
predict-median baseline and penalties from the module docstring's rule, the bootstrap
intervals and item resamples redrawn here from their documented seeds (SHA-256 of the group
key), and the output dtypes the warehouse tables are declared with.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_reasoning_models.json): each test pins exact values, so a changed
scale, key, statistic, filter or seed in these functions changes a checked value.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from tsrate.suites.reasoning import marts

HISTORY = np.array([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])  # mean 5, population sd 2, range 7
FUTURE = np.array([6.0, 8.0, 10.0])


def forecast_rows(forecasts, *, system="s", item="i", condition="without_context", run="r",
                  sampled=False, answered=None, parse_ok=None, history=HISTORY, future=FUTURE,
                  kind="language_model"):  # fmt: skip
    n = len(forecasts)
    ok = [f is not None for f in forecasts] if parse_ok is None else parse_ok
    return pd.DataFrame(
        {
            "suite_run_id": run,
            "prompt_hash": [f"{run}{system}{item}{condition}{k}" for k in range(n)],
            "item_id": item,
            "system_id": system,
            "condition": condition,
            "category": "c",
            "task": "forecast",
            "sample_index": pd.array(list(range(n)) if sampled else [None] * n, dtype="Int64"),
            "is_answered": [True] * n if answered is None else answered,
            "parse_ok": ok,
            "series": [history] * n,
            "future": [future] * n,
            "forecast": [None if f is None else np.asarray(f, float) for f in forecasts],
            "system_kind": kind,
        }
    )


# --------------------------------------------------------------------------- scales


def test_history_scale_is_the_population_sd_or_the_range():
    assert marts.history_scale(HISTORY) == 2.0  # ddof 0 (sample sd: 2.138)
    assert marts.history_scale(HISTORY, "minmax") == 7.0
    assert marts.history_scale([0.0, 0.5, 0.0, 0.5]) == 0.25  # a small scale is kept
    assert marts.history_scale([0.0, 0.5], "minmax") == 0.5
    assert marts.history_scale([3.0, 3.0, 3.0]) == 1.0  # constant: 1
    assert marts.history_scale([3.0, 3.0], "minmax") == 1.0
    with pytest.raises(ValueError, match="unknown scaling"):
        marts.history_scale(HISTORY, "robust")


def test_normalised_errors_and_crps_by_hand():
    forecast = np.array([7.0, 7.0, 7.0])  # errors 1, -1, -3
    assert marts.normalised_errors(HISTORY, FUTURE, forecast) == (5 / 6, 11 / 12)
    mae, mse = marts.normalised_errors(HISTORY, FUTURE, forecast, "minmax")
    assert (mae, mse) == (pytest.approx(5 / 21), pytest.approx(11 / 147))
    samples = np.array([[6.0, 6.0, 6.0], [8.0, 10.0, 12.0]])
    # per step: mean |x - y| - 0.5 mean |x - x'| over the 4 pairs
    step = [
        (abs(6 - 6) + abs(8 - 6)) / 2 - 0.5 * (2 * 2) / 4,
        (abs(6 - 8) + abs(10 - 8)) / 2 - 0.5 * (2 * 4) / 4,
        (abs(6 - 10) + abs(12 - 10)) / 2 - 0.5 * (2 * 6) / 4,
    ]
    assert marts.normalised_crps(HISTORY, FUTURE, samples) == pytest.approx(np.mean(step) / 2)
    assert marts.normalised_crps(HISTORY, FUTURE, samples, "minmax") == pytest.approx(
        np.mean(step) / 7
    )


# --------------------------------------------------------------------------- forecast errors


def test_a_greedy_forecast_and_its_baseline_by_hand():
    out = marts.forecast_errors(forecast_rows([[7.0, 7.0, 7.0]]))
    row = out.iloc[0]
    assert row["usable"] and row["is_answered"] and row["n_samples"] == 1
    assert (row["mae"], row["mse"], row["crps"]) == (5 / 6, 11 / 12, 5 / 6)
    # the baseline: the history's median 4.5 (its mean is 5): errors 1.5, 3.5, 5.5
    assert row["baseline_mae"] == pytest.approx(10.5 / 3 / 2)
    assert row["baseline_mse"] == pytest.approx((1.5**2 + 3.5**2 + 5.5**2) / 3 / 4)
    assert row["baseline_mae_minmax"] == pytest.approx(10.5 / 3 / 7)
    assert row["baseline_crps"] == row["baseline_mae"]
    assert row["baseline_crps_minmax"] == row["baseline_mae_minmax"]
    assert row["prompt_hash"] == "rsiwithout_context0" and row["system_kind"] == "language_model"


def test_the_same_greedy_prompt_in_two_suite_runs_is_two_forecasts():
    """A prompt's hash names the system, item, condition and messages, not the suite run: a
    rerun sends the same prompt, and its reply must not be merged into the first run's."""
    first = forecast_rows([[7.0, 7.0, 7.0]], run="r1")
    second = forecast_rows([[6.0, 8.0, 10.0]], run="r2").assign(
        prompt_hash=first["prompt_hash"].iloc[0]
    )
    out = marts.forecast_errors(pd.concat([first, second], ignore_index=True))
    out = out.set_index("suite_run_id")
    assert sorted(out.index) == ["r1", "r2"]
    assert (out["n_samples"] == 1).all()
    assert out.loc["r1", "mae"] == pytest.approx(5 / 6)  # errors 1, -1, -3 over sd 2
    assert out.loc["r2", "mae"] == pytest.approx((0 + 0 + 0) / 3 / 2)  # the future itself


def test_a_sampled_forecast_is_one_row_named_by_its_first_sample():
    """Samples given out of order: the row is named by sample 0; answered when any sample
    is (here sample 1 is unanswered, sample 2 unparseable)."""
    frame = forecast_rows(
        [[7.0, 7.0, 7.0], None, None, [5.0, 9.0, 11.0]],
        sampled=True,
        answered=[True, False, True, True],
    ).iloc[[3, 1, 0, 2]]
    out = marts.forecast_errors(frame)
    assert len(out) == 1
    row = out.iloc[0]
    assert row["prompt_hash"] == "rsiwithout_context0"
    assert (row["n_samples"], row["n_usable_samples"]) == (4, 2)
    assert row["usable"] and row["is_answered"]
    point = np.array([6.0, 8.0, 9.0])  # the element-wise median of the two usable samples
    assert row["mae"] == pytest.approx(np.mean(np.abs(point - FUTURE)) / 2)
    none_answered = forecast_rows([None, None], sampled=True, answered=[False, False])
    row = marts.forecast_errors(none_answered).iloc[0]
    assert not row["is_answered"] and not row["usable"]
    one_answered = forecast_rows([None, None], sampled=True, answered=[False, True])
    assert marts.forecast_errors(one_answered).iloc[0]["is_answered"]


def test_two_systems_sampled_are_two_forecasts():
    frame = pd.concat(
        [
            forecast_rows([[7.0] * 3, [9.0] * 3], sampled=True),
            forecast_rows([[6.0] * 3, [6.0] * 3], sampled=True, system="t"),
            forecast_rows([[6.0] * 3], sampled=True, condition="with_context"),
        ],
        ignore_index=True,
    )
    out = marts.forecast_errors(frame).set_index(["system_id", "condition"])
    assert len(out) == 3
    assert out.loc[("t", "without_context"), "mae"] == pytest.approx(np.mean([0, 2, 4]) / 2)
    assert out.loc[("s", "without_context"), "mae"] == pytest.approx(np.mean([2, 0, 2]) / 2)


def test_a_forecast_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="has 2 values, the future 3"):
        marts.forecast_errors(forecast_rows([[1.0, 2.0]]))


def test_penalties_are_the_worst_usable_error_or_the_baseline():
    """Item i: system s errs by mae 5/6 (z-scored); t is unusable: charged max(5/6, the
    baseline 1.75) = 1.75. Item j: s errs by 9/2 (all 9 off: 4.5 sd), above its baseline:
    t is charged 4.5. An unusable forecast in another suite run is not compared with r's."""
    frame = pd.concat(
        [
            forecast_rows([[7.0] * 3]),
            forecast_rows([None], system="t", parse_ok=[False]),
            forecast_rows([[15.0, 17.0, 19.0]], item="j"),
            forecast_rows([None], system="t", item="j", answered=[False]),
            forecast_rows([[100.0] * 3], item="j", run="q"),
            forecast_rows([None], system="t", item="j", run="q"),
        ],
        ignore_index=True,
    )
    out = marts.forecast_errors(frame).set_index(["suite_run_id", "item_id", "system_id"])
    assert out.loc[("r", "i", "t"), "mae"] == pytest.approx(1.75)
    assert out.loc[("r", "j", "t"), "mae"] == pytest.approx(4.5)
    assert out.loc[("r", "j", "t"), "mse"] == pytest.approx(20.25)
    assert out.loc[("q", "j", "t"), "mae"] == pytest.approx(np.mean([94, 92, 90]) / 2)
    assert not out.loc[("r", "j", "t"), "is_answered"]
    assert out.loc[("r", "i", "t"), "is_answered"]


def test_the_scored_table_keeps_its_dtypes_even_empty():
    choice_only = forecast_rows([[7.0] * 3]).assign(task="qa_single")
    for frame in (forecast_rows([[7.0] * 3]), choice_only):
        out = marts.forecast_errors(frame)
        assert list(out.columns) == marts.FORECAST_COLUMNS
        for column in marts.FLOAT_COLUMNS:
            assert out[column].dtype == np.float64, column
        assert out["usable"].dtype == bool and out["is_answered"].dtype == bool
        assert out["n_samples"].dtype == np.int64
    assert len(marts.FLOAT_COLUMNS) == 12
    assert marts.FLOAT_COLUMNS[0] == "mae" and marts.FLOAT_COLUMNS[-1] == "baseline_crps_minmax"


# --------------------------------------------------------------------------- intervals


def scored_rows(maes, *, system="s", condition="without_context", run="r", usable=None,
                answered=None, kind="language_model"):  # fmt: skip
    n = len(maes)
    maes = np.asarray(maes, float)
    return pd.DataFrame(
        {
            "suite_run_id": run,
            "item_id": [f"i{k}" for k in range(n)],
            "system_id": system,
            "condition": condition,
            "usable": [True] * n if usable is None else usable,
            "is_answered": [True] * n if answered is None else answered,
            "n_samples": 2,
            "n_usable_samples": 1,
            "system_kind": kind,
            **{c: maes * (k + 1) for k, c in enumerate(marts.ERROR_COLUMNS)},
            "baseline_mae": maes + 1,
            "baseline_mse": maes + 2,
            "baseline_mae_minmax": maes + 3,
        }
    )


def bootstrap(values, key) -> tuple[float, float]:
    """The percentile 95 % bootstrap of the mean, 200 resamples, seeded by the first four
    bytes (little-endian) of sha256 of the group key (system, condition) joined by '|'."""
    seed = int.from_bytes(hashlib.sha256("|".join(key).encode()).digest()[:4], "little")
    rng = np.random.default_rng(seed)
    values = np.asarray(values, float)
    means = [values[rng.integers(0, len(values), size=len(values))].mean() for _ in range(200)]
    return tuple(np.quantile(means, [0.025, 0.975]))


def test_forecast_intervals_by_hand():
    """System s: items 1, 2, 4, 8 (mae); item 3 answered but unusable, item 4 unanswered
    (both penalised, counted in the means, not in mae_parsed)."""
    block = scored_rows(
        [1.0, 2.0, 4.0, 8.0], usable=[True, True, False, False], answered=[True, True, True, False]
    )
    other = scored_rows([3.0], system="t", kind="reference")
    out = marts.forecast_intervals(pd.concat([other, block], ignore_index=True))
    assert list(out["system_id"]) == ["s", "t"]
    s = out.iloc[0]
    assert (s["n_scored"], s["n_items"], s["n_unanswered"], s["n_unparseable"]) == (2, 4, 1, 1)
    assert (s["n_samples"], s["n_usable_samples"]) == (8, 4)
    assert s["system_kind"] == "language_model" and out.iloc[1]["system_kind"] == "reference"
    assert s["mae"] == 3.75 and s["mse"] == 7.5 and s["mae_parsed"] == 1.5
    assert s["baseline_mae"] == 4.75 and s["baseline_mae_minmax"] == 6.75
    key = ("s", "without_context")  # system and condition: not the suite run "r"
    for k, column in enumerate(marts.ERROR_COLUMNS):
        low, high = bootstrap(np.array([1.0, 2.0, 4.0, 8.0]) * (k + 1), key)
        assert s[f"{column}_ci_low"] == pytest.approx(low, rel=1e-12)
        assert s[f"{column}_ci_high"] == pytest.approx(high, rel=1e-12)
    t = out.iloc[1]
    assert (t["n_items"], t["mae"], t["mae_ci_low"], t["mae_ci_high"]) == (1, 3.0, 3.0, 3.0)


def test_mean_errors_skip_missing_values_and_are_missing_without_any():
    """A NaN error is left out of the mean (mean of 1, 3 = 2, not the median of 1, 3, 20
    nor NaN); a system with no usable forecast has no mae_parsed."""
    block = scored_rows([1.0, np.nan, 3.0, 20.0], usable=[True, True, True, False])
    s = marts.forecast_intervals(block).iloc[0]
    assert s["mae_parsed"] == 2.0
    assert s["mae"] == pytest.approx(8.0)
    none = marts.forecast_intervals(scored_rows([5.0, 6.0], usable=[False, False])).iloc[0]
    assert np.isnan(none["mae_parsed"]) and none["mae"] == 5.5 and none["n_scored"] == 0


def test_the_interval_table_keeps_its_dtypes_even_empty():
    for frame in (scored_rows([1.0, 2.0]), scored_rows([]).iloc[0:0]):
        out = marts.forecast_intervals(frame)
        assert out["n_scored"].dtype == np.int64
        for column in marts.INTERVAL_COLUMNS[4:]:
            assert out[column].dtype == np.float64, column
        for column in marts.COUNT_COLUMNS:
            assert out[column].dtype == np.int64, column
    assert marts.INTERVAL_COLUMNS[4] == "mae"


# --------------------------------------------------------------------------- ratings


def test_rating_scores_long_table():
    accuracy = pd.DataFrame(
        {
            "suite_run_id": "r",
            "system_id": ["s", "s"],
            "task": ["etiological", "qa_two"],
            "accuracy": [0.5, 0.75],
            "series_gap": [np.nan, 0.25],
        }
    )
    errors = pd.DataFrame(
        {
            "suite_run_id": "r",
            "system_id": ["s"],
            "condition": ["with_context"],
            "mae": [1.0],
            "mse": [2.0],
            "crps": [3.0],
        }
    )
    context = pd.DataFrame({"suite_run_id": "r", "system_id": ["s"], "mae_gain": [0.5]})
    out = marts.rating_scores(accuracy, errors, context)
    assert list(out.index) == list(range(7))
    got = list(out[["metric", "task", "raw_score"]].itertuples(index=False, name=None))
    assert got == [
        ("accuracy", "etiological", 0.5),
        ("accuracy", "qa_two", 0.75),
        ("series_gap", "qa_two", 0.25),
        ("mae", "forecast_with_context", 1.0),
        ("mse", "forecast_with_context", 2.0),
        ("crps", "forecast_with_context", 3.0),
        ("context_gain", "forecast", 0.5),
    ]


def choice_rows(rows):
    """rows: (system, task, item, condition, is_correct, is_answered, parse_ok)."""
    return pd.DataFrame(
        rows,
        columns=[
            "system_id", "task", "item_id", "condition", "is_correct", "is_answered", "parse_ok"
        ],
    ).assign(suite_run_id="r")  # fmt: skip


def test_item_values_accuracy_gap_and_context_gain():
    responses = choice_rows(
        [
            ("s", "qa_single", "a", "with_series", True, True, True),
            ("s", "qa_single", "a", "without_series", False, True, True),
            ("s", "qa_single", "b", "with_series", None, False, False),  # unanswered: 0
            ("s", "qa_single", "b", "without_series", True, True, True),
            ("s", "etiological", "c", "with_series", True, True, True),
            # t never answers without the series: no gap
            ("t", "qa_single", "a", "with_series", True, True, True),
            ("t", "qa_single", "a", "without_series", None, False, False),
            # u never answers with the series: no gap either
            ("u", "qa_single", "a", "with_series", None, True, False),
            ("u", "qa_single", "a", "without_series", True, True, True),
        ]
    )
    scored = pd.DataFrame(
        {
            "suite_run_id": "r",
            "item_id": ["f", "f", "g", "g"],
            "system_id": "s",
            "condition": ["without_context", "with_context"] * 2,
            "usable": [True, True, True, False],
            "mae": [3.0, 1.0, 2.0, 9.0],
            "mse": [1.0, 1.0, 1.0, 1.0],
            "crps": [0.5, 0.5, 0.5, 0.5],
        }
    )
    out = marts.item_values(responses, scored)
    values = {
        (r.metric, r.task, r.item_id, r.system_id): r.value for r in out.itertuples(index=False)
    }
    assert values[("accuracy", "qa_single", "a", "s")] == 1.0
    assert values[("accuracy", "qa_single", "b", "s")] == 0.0
    assert values[("accuracy", "etiological", "c", "s")] == 1.0
    assert values[("accuracy", "qa_single", "a", "u")] == 0.0
    gaps = {k: v for k, v in values.items() if k[0] == "series_gap"}
    assert gaps == {
        ("series_gap", "qa_single", "a", "s"): 1.0,
        ("series_gap", "qa_single", "b", "s"): -1.0,
    }
    assert values[("mae", "forecast_with_context", "g", "s")] == 9.0
    assert values[("crps", "forecast_without_context", "f", "s")] == 0.5
    gains = {k: v for k, v in values.items() if k[0] == "context_gain"}
    assert gains == {("context_gain", "forecast", "f", "s"): 2.0}  # g: with context unusable
    assert list(out.index) == list(range(len(out)))


def test_item_values_without_forecasts_or_questions():
    responses = choice_rows([("s", "etiological", "c", "with_series", False, True, True)])
    out = marts.item_values(responses, pd.DataFrame(columns=["suite_run_id"]))
    assert list(out[["metric", "value"]].itertuples(index=False, name=None)) == [("accuracy", 0.0)]


def group_draws(seed, key, matrix, resamples):
    """The item resamples of one group: generator seeded by [seed, first four bytes
    (little-endian) of sha256 of 'reasoning|metric|task'], each resample len(items) row indices,
    each system's mean over the drawn items (NaN left out)."""
    digest = hashlib.sha256("|".join(key).encode()).digest()[:4]
    rng = np.random.default_rng([seed, int.from_bytes(digest, "little")])
    out = []
    for _ in range(resamples):
        rows = matrix[rng.integers(0, len(matrix), len(matrix))]
        out.append([np.mean(col[~np.isnan(col)]) for col in rows.T])
    return np.array(out)


def test_rating_stability_intervals_are_the_resampled_means():
    values = pd.DataFrame(
        {
            "suite_run_id": "r",
            "metric": "mae",
            "task": "forecast_without_context",
            "item_id": ["a", "b", "c", "d", "a", "b", "c", "d"],
            "system_id": ["s"] * 4 + ["t"] * 4,
            "value": [1.0, 2.0, 6.0, 9.0, 1.0, np.nan, 1.5, 2.0],
        }
    )
    # another run and another task: their published rows must not be mixed in
    values = pd.concat(
        [values, values.assign(suite_run_id="q"), values.assign(task="forecast_with_context")],
        ignore_index=True,
    )
    ratings = pd.DataFrame(
        {
            "suite_run_id": ["r", "r", "q", "q", "r"],
            "metric": "mae",
            "task": ["forecast_without_context"] * 4 + ["forecast_with_context"],
            "system_id": ["s", "t", "s", "t", "t"],
            "raw_score": [4.5, 1.5, 4.5, 1.5, 1.5],
            "rating": [1, 2, 1, 2, 2],
            "rating_reason": None,
        }
    )
    out = marts.rating_stability_table(values, ratings, levels=3, resamples=50, seed=4)
    got = out.set_index(["suite_run_id", "task", "system_id"])
    assert sorted(got.index) == [
        ("q", "forecast_without_context", "s"),
        ("q", "forecast_without_context", "t"),
        ("r", "forecast_with_context", "t"),
        ("r", "forecast_without_context", "s"),
        ("r", "forecast_without_context", "t"),
    ]
    matrix = np.array([[1.0, 1.0], [2.0, np.nan], [6.0, 1.5], [9.0, 2.0]])
    for run, task in (("r", "forecast_without_context"), ("q", "forecast_without_context"),
                      ("r", "forecast_with_context")):  # fmt: skip
        draws = group_draws(4, ("reasoning", "mae", task), matrix, 50)  # not the run
        for k, system in enumerate(("s", "t")):
            if (run, task, system) not in got.index:
                continue
            row = got.loc[(run, task, system)]
            low, high = np.quantile(draws[:, k], [0.025, 0.975])
            low, high = min(low, row["raw_score"]), max(high, row["raw_score"])
            assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low), pytest.approx(high))
            assert (row["n_resamples"], row["n_items"]) == (50, 4)
    # the default seed is 0, the default resample count the suite's 200
    default = marts.rating_stability_table(values, ratings, levels=3).set_index(
        ["suite_run_id", "task", "system_id"]
    )
    draws = group_draws(0, ("reasoning", "mae", "forecast_without_context"), matrix, 200)
    low, high = np.quantile(draws[:, 0], [0.025, 0.975])
    row = default.loc[("r", "forecast_without_context", "s")]
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low), pytest.approx(high))


def test_a_group_without_any_value_has_no_interval():
    """A rated group whose item values are all missing: no item to resample (n_items 0),
    so no interval and no share, rather than an error."""
    values = pd.DataFrame(
        {
            "suite_run_id": "r",
            "metric": "series_gap",
            "task": "qa_single",
            "item_id": ["a", "b"],
            "system_id": "s",
            "value": [np.nan, np.nan],
        }
    )
    ratings = pd.DataFrame(
        {
            "suite_run_id": ["r"],
            "metric": "series_gap",
            "task": "qa_single",
            "system_id": ["s"],
            "raw_score": [np.nan],
            "rating": [None],
            "rating_reason": None,
        }
    )
    row = marts.rating_stability_table(values, ratings, levels=3, resamples=5).iloc[0]
    assert row["n_items"] == 0 and row["n_resamples"] == 5
    assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
    assert np.isnan(row["share_at_rating"])
