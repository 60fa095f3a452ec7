"""Honest scoring of the understanding suite: every answer counts (unusable replies are wrong
or penalised), intervals, significance of position bias, rating stability. Checked against
statsmodels and hand-worked examples."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import (
    proportion_confint,
    proportion_effectsize,
    proportions_ztest,
)

from tsrate.suites import intervals
from tsrate.suites.rating import suite_spec
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.analyst import RandomAnswerer, StatisticalAnalyst
from tsrate.suites.understanding.marts import (
    RATED_METRICS,
    _groups,
    _metric_value,
    penalty_error,
    position_bias_table,
    rating_stability_table,
    rating_table,
    score_table,
    task_scores,
)
from tsrate.suites.understanding.scoring import parse_answer
from tsrate.suites.understanding.tasks import build_prompts

#: The suite's rating directions (seeds/suite_rating_specs.csv).
HIGHER_IS_BETTER = suite_spec("understanding")["higher_is_better"].to_dict()

ANSWER_COLUMNS = [
    "suite_run_id",
    "prompt_key",
    "series_key",
    "system_id",
    "dataset",
    "task",
    "feature",
    "format",
    "decimals",
    "expected",
    "quadrant",
    "series_length",
    "parse_ok",
    "parse_error",
    "answer",
    "answer_value",
    "answer_date",
]


def answers_frame(prompts, replies: dict[str, list[str]]) -> pd.DataFrame:
    """int_und_answers_selected rows for ``replies`` (system -> one reply per prompt),
    parsed with the suite's strict parser."""
    rows = []
    for system, texts in replies.items():
        for p, text in zip(prompts, texts, strict=True):
            parsed = parse_answer(p.task, text, p.options)
            rows.append(
                (
                    "run",
                    p.prompt_key,
                    p.series_key,
                    system,
                    p.dataset,
                    p.task,
                    p.feature,
                    p.format,
                    p.decimals,
                    json.dumps(p.expected),
                    p.quadrant,
                    p.length,
                    parsed.ok,
                    parsed.error,
                    parsed.answer,
                    parsed.value,
                    parsed.date,
                )
            )
    return pd.DataFrame(rows, columns=ANSWER_COLUMNS)


def options_frame(prompts) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt_key": [p.prompt_key for p in prompts],
            "options": [list(p.options) for p in prompts],
        }
    )


# ---------------------------------------------------------------------------------------
# intervals and tests against statsmodels
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "n"), [(0, 5), (3, 5), (5, 5), (17, 40), (1, 1), (250, 1000)])
def test_wilson_interval_matches_statsmodels(k, n):
    low, high = intervals.wilson_interval(k, n)
    ref = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (float(low), float(high)) == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize(
    ("k1", "n1", "k2", "n2"), [(30, 40, 60, 120), (5, 10, 5, 10), (1, 33, 20, 99)]
)
def test_two_proportion_test_matches_statsmodels(k1, n1, k2, n2):
    _, p = proportions_ztest([k1, k2], [n1, n2])
    assert intervals.two_proportion_p(k1, n1, k2, n2) == pytest.approx(p, rel=1e-10)
    assert intervals.two_proportion_p(10, 10, 30, 30) == 1.0  # all right: no evidence


def test_holm_matches_statsmodels():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5, 0.2])
    assert intervals.holm(p) == pytest.approx(multipletests(p, method="holm")[1])
    with_nan = intervals.holm([0.01, np.nan, 0.02])
    assert np.isnan(with_nan[1]) and with_nan[[0, 2]] == pytest.approx(
        multipletests([0.01, 0.02], method="holm")[1]
    )


def test_items_for_power_matches_statsmodels():
    h = proportion_effectsize(0.625, 0.375)
    n = NormalIndPower().solve_power(effect_size=h, alpha=0.05, power=0.8, ratio=1.0)
    assert intervals.items_for_power() == int(np.ceil(n))
    n3 = NormalIndPower().solve_power(effect_size=h, alpha=0.05, power=0.8, ratio=3.0)
    assert intervals.items_for_power(ratio=3.0) == int(np.ceil(n3))
    assert intervals.items_for_power(gap=0.1) > intervals.items_for_power(gap=0.25)
    # the default position sets hold enough prompts per quadrant to judge
    from tsrate.suites.understanding.suite import SMALL

    assert SMALL.position_per_cell >= intervals.items_for_power(ratio=3.0)


def test_bootstrap_interval_covers_the_mean_and_narrows_with_items():
    rng = np.random.default_rng(1)
    small = rng.normal(5, 1, 20)
    large = rng.normal(5, 1, 2000)
    lo_s, hi_s = intervals.bootstrap_interval(small, seed=3)
    lo_l, hi_l = intervals.bootstrap_interval(large, seed=3)
    assert lo_s < small.mean() < hi_s and lo_l < large.mean() < hi_l
    assert hi_l - lo_l < (hi_s - lo_s) / 5  # ~ 1 / sqrt(n)
    # the percentile interval of the mean is close to the normal one
    se = large.std(ddof=1) / np.sqrt(len(large))
    assert (hi_l - lo_l) == pytest.approx(2 * 1.96 * se, rel=0.25)


# ---------------------------------------------------------------------------------------
# every answer counts
# ---------------------------------------------------------------------------------------


def test_penalty_is_the_worst_error_on_the_prompt_hand_worked():
    # truth 100 on both prompts; on p1 a answers 110 (10 %), b 130 (30 %), g garbage;
    # on p2 a answers 100 (0 %), b 350 (250 %), g garbage
    rows = []
    for key, answers in (("p1", {"a": 110.0, "b": 130.0}), ("p2", {"a": 100.0, "b": 350.0})):
        for system in ("a", "b", "g"):
            value = answers.get(system)
            rows.append(
                (
                    "run", key, "s", system, "trend", "retrieval", "trend", "csv", 2,
                    '{"value": 100.0, "date": "2020-01-01"}', 1, 50, value is not None,
                    None if value is not None else "no number in the reply", None, value, None,
                )
            )  # fmt: skip
    scored = score_table(pd.DataFrame(rows, columns=ANSWER_COLUMNS)).set_index(
        ["prompt_key", "system_id"]
    )
    # p1: worst parsed error 30 % < the 100 % floor; p2: b's 250 % is the worst
    assert scored.loc[("p1", "g"), "abs_pct_error"] == pytest.approx(100.0)
    assert scored.loc[("p2", "g"), "abs_pct_error"] == pytest.approx(250.0)
    assert scored["error_penalised"].sum() == 2 and scored.loc[("p2", "g"), "error_penalised"]
    assert penalty_error([12.0, None, np.nan]) == 100.0 and penalty_error([400.0]) == 400.0
    scores = task_scores(scored.reset_index(), options_frame([])).set_index("system_id")
    assert scores.loc["g", "mape"] == pytest.approx(175.0)  # (100 + 250) / 2
    assert scores.loc["b", "mape"] == pytest.approx(140.0)  # (30 + 250) / 2
    assert scores.loc["a", "mape"] == pytest.approx(5.0)
    assert pd.isna(scores.loc["g", "mape_parsed"]) and scores.loc["g", "coverage"] == 0.0
    assert scores.loc["b", "mape_parsed"] == pytest.approx(140.0)
    ratings = rating_table(scores.reset_index(), 3).set_index(["metric", "system_id"])
    assert ratings.loc[("retrieval_mape", "g"), "rank"] == 3  # the highest MAPE: last
    assert ratings.loc[("retrieval_accuracy", "g"), "rank"] == 1  # the lowest accuracy


@pytest.fixture(scope="module")
def three_systems():
    """Prompts of 4 feature datasets and 1 position set in 2 formats, answered by the
    analyst, the random answerer and a system whose every reply is garbage."""
    datasets = ("trend", "seasonality", "anomalies", "volatility", "correlation")
    pool = {d: g.generate_split(d, "test", 6, 11) for d in (*datasets, "outlier")}
    prompts = []
    for samples in pool.values():
        for sample in samples:
            prompts += build_prompts(sample, ("csv", "json"), 2, pool)
    analyst, random = StatisticalAnalyst(), RandomAnswerer(0)
    replies = {
        "und_analyst": [analyst.answer(p) for p in prompts],
        "und_random": [random.answer(p) for p in prompts],
        "garbage": ["<|endoftext|> lorem ipsum" for _ in prompts],
    }
    scored = score_table(answers_frame(prompts, replies))
    scores = task_scores(scored, options_frame(prompts))
    return prompts, scored, scores, rating_table(scores, 3)


def test_a_system_answering_garbage_is_last_on_every_metric_it_attempted(three_systems):
    prompts, scored, scores, ratings = three_systems
    garbage = scores[scores["system_id"] == "garbage"]
    # the marts say how many answers were unusable: all of them
    assert (garbage["n_unparsed"] == garbage["n_prompts"]).all()
    assert (garbage["coverage"] == 0).all()
    assert garbage["n_unparsed"].sum() == len(prompts)
    metrics = set(ratings["metric"])
    assert {
        "retrieval_mape",
        "arithmetic_mape",
        "detection_f1",
        "matching_cross_accuracy",
    } <= metrics
    for (metric, feature), block in ratings.groupby(["metric", "feature"]):
        mine = block[block["system_id"] == "garbage"]
        assert len(mine) == 1, (metric, feature)  # rated on every metric it attempted
        others = block[block["system_id"] != "garbage"]
        if HIGHER_IS_BETTER[metric]:  # higher is better: garbage holds the lowest score
            assert (mine["raw_score"].iloc[0] <= others["raw_score"]).all(), (metric, feature)
            assert mine["rating"].iloc[0] <= others["rating"].min()
        else:  # an error: garbage holds the highest
            assert (mine["raw_score"].iloc[0] >= others["raw_score"]).all(), (metric, feature)
            assert mine["rating"].iloc[0] >= others["rating"].max()


def test_the_random_answerer_scores_near_chance_within_its_interval(three_systems):
    _, scored, _, _ = three_systems
    random = scored[scored["system_id"] == "und_random"]
    for task, chance in (("detection", 0.5), ("matching_cross", 0.25), ("matching_intra", 0.25)):
        block = random[random["task"] == task]
        k, n = int(block["correct"].sum()), len(block)
        low, high = intervals.wilson_interval(k, n)
        assert n >= 20 and low <= chance <= high, (task, k, n)
    analyst = scored[(scored["system_id"] == "und_analyst") & (scored["task"] == "detection")]
    low, _ = intervals.wilson_interval(int(analyst["correct"].sum()), len(analyst))
    assert low > 0.5  # the analyst is above chance beyond doubt


def test_scores_carry_intervals_that_hold_the_score(three_systems):
    _, _, scores, _ = three_systems
    assert (scores["accuracy_ci_low"] <= scores["accuracy"]).all()
    assert (scores["accuracy"] <= scores["accuracy_ci_high"]).all()
    f1 = scores.dropna(subset=["f1"])
    assert len(f1) and (f1["f1_ci_low"] <= f1["f1_ci_high"]).all()
    mape = scores[scores["mape"].notna() & (scores["system_id"] != "und_analyst")]
    assert len(mape) and (mape["mape_ci_low"] <= mape["mape"] + 1e-9).all()
    assert (mape["mape"] <= mape["mape_ci_high"] + 1e-9).all()
    row = scores.iloc[0]
    ref = proportion_confint(
        round(row["accuracy"] * row["n_prompts"]), row["n_prompts"], method="wilson"
    )
    assert (row["accuracy_ci_low"], row["accuracy_ci_high"]) == pytest.approx(ref)


def test_rating_stability_is_firm_for_clear_gaps_and_loose_for_near_ties(three_systems):
    prompts, scored, _, ratings = three_systems
    stability = rating_stability_table(scored, options_frame(prompts), ratings, 3, resamples=50)
    assert len(stability) == len(ratings)
    # without resampling (every prompt once) the re-scoring gives the published score
    for metric, (tasks, column) in RATED_METRICS.items():
        block = scored[scored["task"].isin(tasks) & (scored["feature"] == "trend")]
        if block.empty:
            continue
        keys = sorted(block["prompt_key"].unique())
        block = block.assign(
            _prompt_index=block["prompt_key"].map({k: i for i, k in enumerate(keys)})
        )
        labels = sorted({c for p in prompts if p.prompt_key in set(keys) for c in p.options})
        for system, mine in block.groupby("system_id"):
            again = _metric_value(column, _groups(column, mine), np.ones(len(keys), int), labels)
            published = ratings[
                (ratings["metric"] == metric)
                & (ratings["feature"] == "trend")
                & (ratings["system_id"] == system)
            ]["raw_score"]
            assert again == pytest.approx(published.iloc[0]), (metric, system)
    assert stability["share_at_rating"].between(0, 1).all()
    retrieval = stability[stability["metric"] == "retrieval_accuracy"].set_index(
        ["feature", "system_id"]
    )
    # the analyst reads every value (accuracy 1): always the best, rating 3, in every
    # resample; garbage reads none: at its published level unless a resample moves random
    # onto or off its score (higher is better: the levels fill from the best end)
    analyst = retrieval.xs("und_analyst", level="system_id")
    assert (analyst["rating"] == 3).all() and (analyst["share_at_rating"] == 1).all()
    assert retrieval.xs("garbage", level="system_id")["share_at_rating"].mean() > 0.8
    # two systems with the same answers but one flipped prompt: a near tie, not firm
    near = scored[scored["system_id"] == "und_random"].copy()
    twin = near.assign(system_id="twin")
    flip = twin.index[twin["task"] == "detection"][0]
    # flip the answer itself (F1 reads truth and answer, accuracy reads correct)
    twin.loc[flip, "predicted"] = "no" if twin.loc[flip, "predicted"] == "yes" else "yes"
    twin.loc[flip, "correct"] = twin.loc[flip, "predicted"] == twin.loc[flip, "truth"]
    both = pd.concat([near, twin])
    table = task_scores(both, options_frame(prompts))
    rated = rating_table(table, 3)
    shaky = rating_stability_table(both, options_frame(prompts), rated, 3, resamples=50)
    feature = twin.loc[flip, "feature"]
    cell = shaky[(shaky["metric"] == "detection_f1") & (shaky["feature"] == feature)]
    assert (cell["share_at_rating"] < 1).any()


def test_every_rated_score_carries_its_resampled_interval(three_systems):
    prompts, scored, _, ratings = three_systems
    stability = rating_stability_table(scored, options_frame(prompts), ratings, 3, resamples=200)
    finite = stability.dropna(subset=["ci_low", "ci_high"])
    assert len(finite) == len(stability)  # every rated score has its interval
    assert (finite["ci_low"] <= finite["raw_score"] + 1e-9).all()
    assert (finite["raw_score"] <= finite["ci_high"] + 1e-9).all()
    # garbage is wrong on every prompt: a point interval at 0 accuracy
    garbage = finite[(finite["system_id"] == "garbage") & finite["metric"].str.endswith("accuracy")]
    assert len(garbage) and (garbage["ci_low"] == 0).all() and (garbage["ci_high"] == 0).all()


def test_the_rated_score_interval_is_the_bootstrap_interval_of_a_proportion():
    """400 retrieval prompts in one format, 120 right: the resampled interval of the
    accuracy is close to the normal (Wald) interval, 0.3 +- 1.96 sqrt(0.3 * 0.7 / 400)."""
    n, right = 400, 120
    correct = np.zeros(n, dtype=bool)
    correct[np.random.default_rng(0).choice(n, right, replace=False)] = True
    scored = pd.DataFrame(
        {
            "suite_run_id": "run", "prompt_key": [f"p{i}" for i in range(n)],
            "series_key": [f"s{i}" for i in range(n)], "prompting": "zero_shot",
            "system_id": "solo", "dataset": "trend", "task": "retrieval", "feature": "trend",
            "format": "csv", "quadrant": None, "series_length": 60, "parse_ok": True,
            "parsed_by": "regex", "truth": "100.0", "predicted": "100.0", "correct": correct,
            "date_correct": None, "abs_pct_error": np.where(correct, 0.0, 5.0),
            "error_penalised": False,
        }
    )  # fmt: skip
    scores = task_scores(scored, options_frame([]))
    ratings = rating_table(scores, 3)
    stability = rating_stability_table(
        scored, options_frame([]), ratings, 3, resamples=400
    ).set_index("metric")
    half = 1.96 * np.sqrt(0.3 * 0.7 / n)
    accuracy = stability.loc["retrieval_accuracy"]
    assert accuracy["raw_score"] == pytest.approx(0.3)
    assert accuracy["ci_low"] == pytest.approx(0.3 - half, abs=0.012)
    assert accuracy["ci_high"] == pytest.approx(0.3 + half, abs=0.012)
    # MAPE = 5 % x the share wrong: its interval is the accuracy's, mirrored and scaled
    mape = stability.loc["retrieval_mape"]
    assert mape["raw_score"] == pytest.approx(3.5)
    assert mape["ci_low"] == pytest.approx(5 * (0.7 - half), abs=0.06)
    assert mape["ci_high"] == pytest.approx(5 * (0.7 + half), abs=0.06)


# ---------------------------------------------------------------------------------------
# position bias as a significance test
# ---------------------------------------------------------------------------------------


def position_prompts(per_cell: int):
    samples = [
        g.generate_sample("outlier", "test", i, 7, position_length=60) for i in range(8 * per_cell)
    ]
    pool = {"outlier": samples}
    out = []
    for s in samples:
        out += build_prompts(s, ("csv",), 2, pool, tasks=("retrieval", "arithmetic_max"))
    return out


def test_position_bias_flags_a_planted_bias_and_not_the_random_answerer():
    prompts = position_prompts(42)
    random = RandomAnswerer(3)
    analyst = StatisticalAnalyst()
    # "biased" reads the table right only when the queried date / extreme is in quadrant 1
    biased = [analyst.answer(p) if p.quadrant == 1 else random.answer(p) for p in prompts]
    frame = answers_frame(
        prompts, {"und_random": [random.answer(p) for p in prompts], "biased": biased}
    )
    bias = position_bias_table(score_table(frame)).set_index(["system_id", "task", "quadrant"])
    n1 = bias["n_prompts"].iloc[0]
    rest = bias.loc[bias.index[0][:2], "n_prompts"].sum() - n1
    assert bias["min_prompts_to_judge"].iloc[0] == intervals.items_for_power(ratio=rest / n1)
    retrieval = bias.loc[("biased", "retrieval")]
    assert retrieval["judgeable"].all()
    assert retrieval.loc[1, "position_bias"] and retrieval.loc[1, "p_holm"] < 0.05
    randoms = bias.loc["und_random"]
    assert randoms["judgeable"].all() and not randoms["position_bias"].any()
    # Holm over the whole run, checked against statsmodels
    flat = bias.reset_index()
    assert flat["p_holm"].to_numpy(dtype=float) == pytest.approx(
        multipletests(flat["p_value"].to_numpy(dtype=float), method="holm")[1]
    )
    # the hand count of one cell
    cell = flat[(flat["system_id"] == "biased") & (flat["task"] == "retrieval")]
    q1, rest = cell[cell["quadrant"] == 1].iloc[0], cell[cell["quadrant"] != 1]
    _, p = proportions_ztest(
        [q1["n_correct"], rest["n_correct"].sum()], [q1["n_prompts"], rest["n_prompts"].sum()]
    )
    assert q1["p_value"] == pytest.approx(p)


def test_a_small_position_cell_is_too_small_to_judge():
    prompts = position_prompts(1)
    random = RandomAnswerer(3)
    frame = answers_frame(prompts, {"und_random": [random.answer(p) for p in prompts]})
    bias = position_bias_table(score_table(frame))
    assert not bias["judgeable"].any() and bias["position_bias"].isna().all()


def test_retrieval_does_not_deduplicate_a_repeated_number():
    reply = " ".join(["103.25"] * 20)
    parsed = parse_answer("retrieval", reply)
    assert not parsed.ok and "several numbers in the reply (20)" in parsed.error
    assert not parse_answer("arithmetic_max", "5 on 2020-01-01, 5 5").ok
    assert parse_answer("retrieval", "103.25").ok


def test_report_shows_confusion_matrices_length_curves_and_small_cells(three_systems):
    from tsrate.suites.understanding.report import (
        confusion_html,
        length_curve_charts,
        position_bias_html,
    )

    _, scored, _, _ = three_systems
    detection = scored[scored["task"] == "detection"]
    confusion = (
        detection.assign(predicted=detection["predicted"].fillna("(unusable)"))
        .groupby(["system_id", "task", "feature", "truth", "predicted"], as_index=False)
        .size()
        .rename(columns={"size": "n_prompts"})
    )
    text = confusion_html(confusion)
    garbage_trend = confusion[
        (confusion["system_id"] == "garbage") & (confusion["feature"] == "trend")
    ]
    assert set(garbage_trend["predicted"]) == {"(unusable)"}
    assert "garbage · detection · trend" in text and "(unusable)" in text
    numeric = scored[scored["task"] == "retrieval"].assign(
        length_bin_start=lambda f: f["series_length"] // 30 * 30
    )
    curves = (
        numeric.groupby(["system_id", "task", "length_bin_start"], as_index=False)
        .agg(n=("correct", "size"), accuracy=("correct", "mean"))
        .assign(length_bin_end=lambda f: f["length_bin_start"] + 29)
    )
    charts = length_curve_charts(curves)
    assert len(charts) == 1 and "vega-spec" in charts[0] and "und_analyst" in charts[0]
    # with the bins' correct counts (as write_report reads them), each bar and the folded
    # table carry the Wilson interval of the bin's pooled prompts, as statsmodels gives it
    from tsrate.suites.understanding.report import length_curve_table_html, with_pooled_wilson

    counted = curves.assign(
        n_correct=numeric.groupby(["system_id", "task", "length_bin_start"])["correct"]
        .sum()
        .to_numpy()
    )
    assert 0 < counted["n_correct"].sum() < counted["n"].sum()
    pooled = with_pooled_wilson(counted)
    for row in pooled.itertuples(index=False):
        expected = proportion_confint(int(row.n_correct), int(row.n), method="wilson")
        assert (row.ci_low, row.ci_high) == pytest.approx(expected, abs=1e-12)
    first = pooled.iloc[0]
    label = f"{first.accuracy:.2f} [{first.ci_low:.2f}, {first.ci_high:.2f}] ({first.n} prompts)"
    from tsrate.html.charts import page_specs, spec_rows
    from tsrate.suites.understanding.report import MIN_CHART_PROMPTS

    drawn = [
        row
        for spec in page_specs(length_curve_charts(counted)[0]).values()
        for row in spec_rows(spec)
    ]
    # a bin below the chart's minimum n is not drawn (its numbers stay in the table)
    small = counted[counted["n"] < MIN_CHART_PROMPTS]
    assert len(drawn) == len(counted) - len(small)
    assert (label in [r["label"] for r in drawn]) == (first.n >= MIN_CHART_PROMPTS)
    assert f"[{first.ci_low:.2f}, {first.ci_high:.2f}]" in length_curve_table_html(counted)
    bias = position_bias_table(
        score_table(
            answers_frame(
                position_prompts(1),
                {"und_random": [RandomAnswerer(3).answer(p) for p in position_prompts(1)]},
            )
        )
    )
    shown = position_bias_html(
        bias.assign(
            accuracy_pct=100 * bias["accuracy"],
            accuracy_ci_low_pct=100 * bias["accuracy_ci_low"],
            accuracy_ci_high_pct=100 * bias["accuracy_ci_high"],
            p_holm=bias["p_holm"].astype(float),
        )
    )
    assert "too small to judge" in shown


def test_search_task_and_sinusoidal_set_of_appendix_e1():
    samples = [
        g.generate_sample("sinusoidal", "test", i, 7, position_length=80) for i in range(8 * 6)
    ]
    for s in samples:  # the extreme sits in the cell's quadrant (rejection sampling)
        pick = np.argmax if s.labels["extreme"] == "max" else np.argmin
        assert g.quadrant_of(int(pick(s.values)), len(s.values)) == s.labels["extreme_quadrant"]
        assert s.labels["extreme_quadrant"] == (s.index % 8) // 2 + 1
    prompts = [
        p for s in samples for p in build_prompts(s, ("csv", "custom"), 2, {}, tasks=("search",))
    ]
    assert {p.task for p in prompts} == {"search"} and len(prompts) == 2 * len(samples)
    by_series = {}
    for p, s in zip(prompts, [s for s in samples for _ in range(2)], strict=True):
        printed = {f"{v:.2f}" for v in s.values}
        value = f"{p.expected['value']:.2f}"
        assert (value in printed) == (p.expected["answer"] == "yes")  # absent = not printed
        assert f"Does the value {value} appear" in p.text
        if p.expected["answer"] == "no":
            assert p.quadrant is None and min(s.values) < p.expected["value"] < max(s.values)
        else:
            assert p.quadrant == s.labels["query_quadrant"]
        by_series.setdefault(s.series_key, set()).add(p.expected["answer"])
    assert all(len(a) == 1 for a in by_series.values())  # the same question in every format
    answers = [p.expected["answer"] for p in prompts]
    assert 0.3 < answers.count("yes") / len(answers) < 0.7
    analyst, random = StatisticalAnalyst(), RandomAnswerer(1)
    scored = score_table(
        answers_frame(
            prompts,
            {
                "und_analyst": [analyst.answer(p) for p in prompts],
                "und_random": [random.answer(p) for p in prompts],
            },
        )
    )
    accuracy = scored.groupby("system_id")["correct"].mean()
    assert accuracy["und_analyst"] == 1.0
    k = int(scored[scored["system_id"] == "und_random"]["correct"].sum())
    low, high = intervals.wilson_interval(k, len(prompts))
    assert low <= 0.5 <= high


def test_each_task_scored_by_hand():
    from tsrate.suites.understanding.scoring import score_answer

    def score(task, expected, reply, options=()):
        return score_answer(task, expected, parse_answer(task, reply, options), 2)

    classes = ("fixed", "varying_amplitude", "shifting", "multiple")
    assert score("classification", {"answer": "shifting"}, "Shifting.", classes)["correct"]
    assert not score("classification", {"answer": "fixed"}, "multiple", classes)["correct"]
    assert score("matching_intra", {"answer": "B"}, "Answer: B", tuple("ABCD"))["correct"]
    assert not score("matching_cross", {"answer": "B"}, "(C)", tuple("ABCD"))["correct"]
    assert score("search", {"answer": "no", "value": 3.0}, "No", ("yes", "no"))["correct"]
    # max 104.50 on 2020-01-03: value right to the printed cent, date wrong
    out = score("arithmetic_max", {"value": 104.5, "dates": ["2020-01-03"]}, "104.5 on 2020-01-04")
    assert out["correct"] and out["date_correct"] is False and out["abs_pct_error"] == 0
    # retrieval 98 for 100: 2 % off, wrong at two decimals
    out = score("retrieval", {"value": 100.0}, "98")
    assert not out["correct"] and out["abs_pct_error"] == pytest.approx(2.0)


def test_two_step_classification_counts_only_after_a_right_detection(three_systems):
    _, scored, scores, _ = three_systems
    random = scored[scored["system_id"] == "und_random"]
    detections = (
        random[random["task"] == "detection"]
        .groupby(["series_key", "format"])["correct"]
        .all()
        .rename("detected")
        .reset_index()
    )
    classes = random[random["task"] == "classification"].merge(
        detections, on=["series_key", "format"], how="left"
    )
    expected = (
        (classes["correct"] & classes["detected"].fillna(False).astype(bool))
        .groupby([classes["feature"], classes["format"]])
        .mean()
    )
    mine = scores[(scores["system_id"] == "und_random") & (scores["task"] == "classification")]
    got = mine.set_index(["feature", "format"])["accuracy_two_step"].astype(float)
    assert got.sort_index().to_numpy() == pytest.approx(expected.sort_index().to_numpy())
    assert (got <= mine.set_index(["feature", "format"])["accuracy"] + 1e-12).all()
    assert (got < mine.set_index(["feature", "format"])["accuracy"]).any()  # the gate bites
    assert scores[scores["task"] != "classification"]["accuracy_two_step"].isna().all()


def test_the_default_position_sets_hold_enough_prompts_to_judge_every_quadrant():
    from tsrate.suites.understanding.suite import generate_all, plan_prompts, resolve_config

    config = resolve_config("small", {"datasets": list(g.POSITION), "train": 0, "validation": 0})
    prompts = plan_prompts(config, generate_all(config))
    random = RandomAnswerer(0)
    bias = position_bias_table(
        score_table(answers_frame(prompts, {"und_random": [random.answer(p) for p in prompts]}))
    )
    assert set(bias["task"]) == {"retrieval", "arithmetic_min", "arithmetic_max", "search"}
    assert bias["judgeable"].all(), bias[~bias["judgeable"]]
    assert not bias["position_bias"].any()  # the random answerer: no bias found
