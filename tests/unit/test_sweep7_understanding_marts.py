"""Sweep 7 (the understanding marts): what a mutation sweep of
``suites/understanding/marts.py`` found unpinned, each checked against a hand-worked frame,
a loop written here or statsmodels, never against the function itself:

- ``score_table``: a missing answer or parser label read as missing (not the text "nan" or
  "None"), a parser label kept (``regex`` the default of a parsed row), the penalty
  charged exactly when the truth is not 0 (a truth of 1 too), ``error_penalised`` only on
  penalised rows;
- ``task_scores``: ``llm`` parses counted, F1 over the prompt's options or else the truths,
  ``mape_parsed`` and ``date_accuracy`` as means, the two-step gate (every detection of the
  series right; none asked = no pass; a missing series key = no value), and the seed of
  every bootstrap rebuilt from ``hashlib`` (zero-shot groups without their prompting);
  the interval itself is the project's bootstrap, fed that seed;
- ``rating_table``: a metric is the mean over its (task, format) scores;
- rating stability: the weighted F1 against prompts repeated by their weights, a
  resampled metric as the mean over its groups, and the whole interval against resamples
  drawn here from the documented generator (seed, sha256 of the group key);
- ``position_bias_table``: cells counted by hand with statsmodels' z test, a quadrant of
  exactly the prompts needed judged (statsmodels' power), bias strictly below alpha and
  never on an undefined p (Holm replaced by fixed values), Holm per suite run."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize, proportions_ztest

from tsrate.suites.understanding.marts import (
    _bootstrap_seed,
    _groups,
    _metric_value,
    _seed_parts,
    _weighted_f1,
    position_bias_table,
    rating_stability_table,
    rating_table,
    score_table,
    task_scores,
)

ANSWER_COLUMNS = [
    "suite_run_id", "prompt_key", "series_key", "system_id", "dataset", "task", "feature",
    "format", "decimals", "expected", "quadrant", "series_length", "parse_ok", "parse_error",
    "answer", "answer_value", "answer_date",
]  # fmt: skip


def answer_row(prompt, system, task, expected, ok, answer=None, value=None, **extra):
    row = dict(
        zip(
            ANSWER_COLUMNS,
            (
                # each prompt about its own series (one question per series and format)
                "run", prompt, f"s-{prompt}", system, "trend", task, "trend", "csv", 2,
                expected, 1, 40,
                ok, None if ok else "no answer", answer, value, None,
            ),
            strict=True,
        )
    )  # fmt: skip
    return {**row, **extra}


def test_a_missing_answer_and_parser_label_are_missing_not_text():
    rows = [
        # a detection answer stored as NaN (the warehouse's missing float) and unparsed
        answer_row("p1", "a", "detection", '{"answer": "yes"}', False, answer=np.nan),
        answer_row("p1", "b", "detection", '{"answer": "yes"}', True, answer="yes"),
    ]
    frame = pd.DataFrame(rows)  # no parsed_by column: a parsed row was read by the regex
    scored = score_table(frame).set_index("system_id")
    assert pd.isna(scored.loc["a", "predicted"]) and pd.isna(scored.loc["a", "parsed_by"])
    assert scored.loc["b", "parsed_by"] == "regex" and scored.loc["b", "predicted"] == "yes"
    # a parser label given is kept; a NaN label on a parsed row falls back to the regex
    frame = pd.DataFrame(rows).assign(parsed_by=[np.nan, "llm"])
    scored = score_table(frame).set_index("system_id")
    assert scored.loc["b", "parsed_by"] == "llm" and pd.isna(scored.loc["a", "parsed_by"])
    frame = pd.DataFrame(rows).assign(parsed_by=[None, np.nan])
    assert score_table(frame).set_index("system_id").loc["b", "parsed_by"] == "regex"


def test_llm_parsed_answers_are_counted_and_none_without_the_column():
    rows = [
        answer_row(f"p{i}", "a", "detection", '{"answer": "yes"}', True, answer="yes")
        for i in range(3)
    ]
    scored = score_table(pd.DataFrame(rows).assign(parsed_by=["llm", "regex", "llm"]))
    assert task_scores(scored, pd.DataFrame(columns=["prompt_key", "options"]))[
        "n_parsed_by_llm"
    ].tolist() == [2]
    without = scored.drop(columns="parsed_by")
    assert task_scores(without, pd.DataFrame(columns=["prompt_key", "options"]))[
        "n_parsed_by_llm"
    ].tolist() == [0]


def test_the_penalty_is_charged_on_a_truth_of_one_and_not_on_zero():
    rows = [
        answer_row("one", "a", "retrieval", '{"value": 1.0}', True, answer=None, value=1.5),
        answer_row("one", "g", "retrieval", '{"value": 1.0}', False),
        answer_row("zero", "a", "retrieval", '{"value": 0.0}', True, answer=None, value=0.5),
        answer_row("zero", "g", "retrieval", '{"value": 0.0}', False),
    ]
    scored = score_table(pd.DataFrame(rows)).set_index(["prompt_key", "system_id"])
    # truth 1: a's error |1.5 - 1| / 1 = 50 % < the floor: g is charged 100 %
    assert scored.loc[("one", "a"), "abs_pct_error"] == pytest.approx(50.0)
    assert scored.loc[("one", "g"), "abs_pct_error"] == pytest.approx(100.0)
    assert scored.loc[("one", "g"), "error_penalised"]
    # truth 0: no percentage error at all, so nothing to charge
    assert pd.isna(scored.loc[("zero", "g"), "abs_pct_error"])
    assert not scored.loc[("zero", "g"), "error_penalised"]
    # only the penalised row is marked
    assert scored["error_penalised"].tolist() == [False, True, False, False]


def test_the_bootstrap_seed_is_the_first_four_bytes_of_the_key_hash():
    def seed(*parts):
        digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
        return digest[0] + 256 * digest[1] + 65536 * digest[2] + 16777216 * digest[3]

    assert _bootstrap_seed("run", "a", "retrieval") == seed("run", "a", "retrieval")
    assert _bootstrap_seed(1, 2.5) == seed("1", "2.5")
    # zero-shot keys drop their prompting (position 1); other promptings keep it
    assert _seed_parts(("run", "zero_shot", "a", "t"), 1) == ("run", "a", "t")
    assert _seed_parts(("zero_shot", "x"), 0) == ("x",)
    assert _seed_parts(("run", "cot", "a", "t"), 1) == ("run", "cot", "a", "t")
    assert _seed_parts(("run", "a", "zero_shot"), 2) == ("run", "a")


def test_f1_averages_over_the_prompt_options_or_else_the_truths():
    # truth yes, yes, no; answers yes, maybe, no. Over the options (yes, no, maybe):
    # yes 2*1/(2+0+1) = 2/3, no 1, maybe 0 (one false positive) -> 5/9; over the truths
    # only (no options stored): (2/3 + 1) / 2 = 5/6
    rows = [
        answer_row(f"p{i}", "a", "detection", f'{{"answer": "{t}"}}', True, answer=p)
        for i, (t, p) in enumerate((("yes", "yes"), ("yes", "maybe"), ("no", "no")))
    ]
    scored = score_table(pd.DataFrame(rows))
    options = pd.DataFrame(
        {"prompt_key": ["p0", "p1", "p2"], "options": [["yes", "no", "maybe"]] * 3}
    )
    assert task_scores(scored, options)["f1"].iloc[0] == pytest.approx(5 / 9)
    no_options = pd.DataFrame(columns=["prompt_key", "options"])
    assert task_scores(scored, no_options)["f1"].iloc[0] == pytest.approx(5 / 6)


def test_every_bootstrap_is_seeded_by_its_group_key():
    """The MAPE interval of a group is the project's bootstrap drawn with the seed hashed
    from the group's key (zero-shot: without its prompting); two systems with the same
    errors draw different resamples."""
    from tsrate.suites import intervals

    errors = [3.0, 40.0, 7.0, 150.0, 11.0, 0.5, 90.0]
    rows = []
    for prompting in ("zero_shot", "cot"):
        for system in ("a", "b"):
            for i, e in enumerate(errors):
                rows.append(
                    answer_row(f"p{i}", system, "retrieval", '{"value": 100.0}', True,
                               value=100.0 + e, prompting=prompting)
                )  # fmt: skip
    scores = task_scores(
        score_table(pd.DataFrame(rows)), pd.DataFrame(columns=["prompt_key", "options"])
    )
    scores = scores.set_index(["prompting", "system_id"])

    def seed(*parts):
        digest = hashlib.sha256("|".join(parts).encode()).digest()
        return int.from_bytes(digest[:4], "little")

    values = np.array(errors)
    for prompting, system in scores.index:
        parts = [system, "retrieval", "trend", "csv"]  # not the suite run
        if prompting != "zero_shot":
            parts.insert(0, prompting)
        expected = intervals.bootstrap_interval(values, seed=seed(*parts))
        row = scores.loc[(prompting, system)]
        assert (row["mape_ci_low"], row["mape_ci_high"]) == pytest.approx(expected)
    assert (
        scores.loc[("zero_shot", "a"), "mape_ci_low"]
        != scores.loc[("zero_shot", "b"), "mape_ci_low"]
    )


def test_parsed_mape_and_date_accuracy_are_means_over_their_answers():
    # arithmetic_max, truth 100 on 2020-01-05; answers 110 (right day), 120 (right day),
    # 190 (right day), garbage: mape_parsed = (10 + 20 + 90) / 3 = 40 (the median is 20);
    # date accuracy = 3 right of 4 answers = 0.75 (the unusable answer's date is wrong)
    expected = '{"value": 100.0, "dates": ["2020-01-05"]}'
    rows = [
        answer_row(f"p{i}", "a", "arithmetic_max", expected, True, value=v, answer_date=d)
        for i, (v, d) in enumerate(
            ((110.0, "2020-01-05"), (120.0, "2020-01-05"), (190.0, "2020-01-05"))
        )
    ]
    rows.append(answer_row("p3", "a", "arithmetic_max", expected, False))
    scores = task_scores(
        score_table(pd.DataFrame(rows)), pd.DataFrame(columns=["prompt_key", "options"])
    )
    row = scores.iloc[0]
    assert row["mape_parsed"] == pytest.approx(40.0)
    assert row["date_accuracy"] == pytest.approx(0.75)
    assert row["mape"] == pytest.approx((10 + 20 + 90 + 100) / 4)


def test_two_step_accuracy_needs_every_series_key():
    # series s1: detection right, classification right -> counts; series s2: detection
    # wrong, classification right -> does not; series s3: no detection asked, classification
    # right -> does not (no right detection to gate on): two-step accuracy 1 / 3
    rows = [
        answer_row(
            "d1", "a", "detection", '{"answer": "yes"}', True, answer="yes", series_key="s1"
        ),
        answer_row("d2", "a", "detection", '{"answer": "yes"}', True, answer="no", series_key="s2"),
        answer_row(
            "c1", "a", "classification", '{"answer": "up"}', True, answer="up", series_key="s1"
        ),
        answer_row(
            "c2", "a", "classification", '{"answer": "up"}', True, answer="up", series_key="s2"
        ),
    ]
    rows.append(
        answer_row(
            "c3", "a", "classification", '{"answer": "up"}', True, answer="up", series_key="s3"
        )
    )
    no_options = pd.DataFrame(columns=["prompt_key", "options"])
    scores = task_scores(score_table(pd.DataFrame(rows)), no_options).set_index("task")
    assert scores.loc["classification", "accuracy"] == 1.0
    assert scores.loc["classification", "accuracy_two_step"] == pytest.approx(1 / 3)
    # one classification prompt without its series: the gate cannot be read, no value
    rows[3]["series_key"] = None
    scores = task_scores(score_table(pd.DataFrame(rows)), no_options).set_index("task")
    assert pd.isna(scores.loc["classification", "accuracy_two_step"])


def test_the_detection_gate_needs_every_detection_of_the_series_right():
    # series s1 has two detection questions, one answered wrong: its right classification
    # does not pass the two-step gate
    rows = [
        answer_row("d1", "a", "detection", '{"answer": "yes"}', True, answer="yes"),
        answer_row("d2", "a", "detection", '{"answer": "no"}', True, answer="yes"),
        answer_row("c1", "a", "classification", '{"answer": "up"}', True, answer="up"),
    ]
    no_options = pd.DataFrame(columns=["prompt_key", "options"])
    scores = task_scores(score_table(pd.DataFrame(rows)), no_options).set_index("task")
    assert scores.loc["classification", "accuracy_two_step"] == 0.0


def test_metrics_are_means_over_formats_then_rated():
    # arithmetic accuracy over (min, csv) 0.0, (min, json) 0.1, (max, csv) 0.8: the rated
    # score is their mean 0.3 (the median would be 0.1)
    scores = pd.DataFrame(
        {
            "suite_run_id": "run",
            "prompting": "zero_shot",
            "system_id": "a",
            "task": ["arithmetic_min", "arithmetic_min", "arithmetic_max"],
            "feature": "trend",
            "format": ["csv", "json", "csv"],
            "f1": np.nan,
            "accuracy": [0.0, 0.1, 0.8],
            "mape": np.nan,
        }
    )
    ratings = rating_table(scores, 3).set_index("metric")
    assert ratings.loc["arithmetic_accuracy", "raw_score"] == pytest.approx(0.3)


def _macro_f1_by_hand(truth, predicted, labels):
    """Macro F1 over ``labels``, a label with no true and no predicted item left out."""
    scores = []
    for label in labels:
        tp = fp = fn = 0
        for t, p in zip(truth, predicted, strict=True):
            tp += t == label and p == label
            fp += t != label and p == label
            fn += t == label and p != label
        if tp + fp + fn:
            scores.append(2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores) if scores else float("nan")


def test_weighted_f1_is_f1_of_the_prompts_repeated_by_their_weights():
    truth = np.array(["up", "up", "down", "flat", "down", "up"], dtype=object)
    predicted = np.array(["up", None, "down", "up", "up", "flat"], dtype=object)
    labels = ["down", "flat", "up", "wave"]
    for weights in ([1, 1, 1, 1, 1, 1], [2, 0, 1, 3, 0, 1], [0, 0, 1, 0, 1, 0], [0, 3, 0, 0, 0, 2]):
        w = np.array(weights)
        repeated_t = [t for t, k in zip(truth, w, strict=True) for _ in range(k)]
        repeated_p = [p for p, k in zip(predicted, w, strict=True) for _ in range(k)]
        got = _weighted_f1(truth, predicted, w.astype(float), labels)
        assert got == pytest.approx(_macro_f1_by_hand(repeated_t, repeated_p, labels))
    # three labels scored 4/5 (a: tp 2, fp 1), 1 (b) and 0 (c: one miss): their mean 0.6
    three = (
        np.array(["a", "a", "b", "c"], dtype=object),
        np.array(["a", "a", "b", "a"], dtype=object),
    )
    assert _weighted_f1(*three, np.ones(4), ["a", "b", "c"]) == pytest.approx(0.6)
    # no weight at all: no label seen, undefined
    assert np.isnan(_weighted_f1(truth, predicted, np.zeros(6), labels))


def test_a_mape_group_keeps_its_finite_errors():
    """A (task, format) group with a prompt whose truth is 0 (no error) still counts its
    other prompts; a group of no finite error is left out."""
    block = pd.DataFrame(
        {
            "task": ["retrieval"] * 3 + ["arithmetic_max"] * 2,
            "format": "csv",
            "_prompt_index": [0, 1, 2, 3, 4],
            "abs_pct_error": [10.0, np.nan, 30.0, np.nan, np.nan],
            "correct": False,
            "truth": "1",
            "predicted": "1",
        }
    )
    groups = _groups("mape", block)
    assert len(groups) == 1
    assert groups[0][0].tolist() == [0, 2] and groups[0][1].tolist() == [10.0, 30.0]
    # weights 3 on prompt 0 and 1 on prompt 2: (3 * 10 + 30) / 4 = 15
    assert _metric_value("mape", groups, np.array([3, 5, 1, 0, 0]), []) == pytest.approx(15.0)


def test_a_resampled_metric_is_the_mean_over_groups_with_any_weight():
    # accuracy: group csv = prompts 0, 1 (right, wrong), group json = prompt 2 (right),
    # group txt = prompt 3 (wrong). Weights (2, 1, 1, 0): csv 2/3, json 1, txt left out
    # (no weight): (2/3 + 1) / 2; the median of three groups would differ
    groups = [
        (np.array([0, 1]), np.array([1.0, 0.0])),
        (np.array([2]), np.array([1.0])),
        (np.array([3]), np.array([0.0])),
    ]
    weights = np.array([2, 1, 1, 0])
    assert _metric_value("accuracy", groups, weights, []) == pytest.approx((2 / 3 + 1) / 2)
    weights = np.array([1, 1, 1, 1])  # every group counted: (1/2 + 1 + 0) / 3
    assert _metric_value("accuracy", groups, weights, []) == pytest.approx(0.5)
    weights = np.array([1, 0, 1, 1])  # csv 1, json 1, txt 0: mean 2/3 (median 1)
    assert _metric_value("accuracy", groups, weights, []) == pytest.approx(2 / 3)
    assert np.isnan(_metric_value("accuracy", groups, np.zeros(4, int), []))
    # F1: two groups of (indices, truth, predicted), labels given or else each group's truths
    truth_a = np.array(["up", "down", "up"], dtype=object)
    pred_a = np.array(["up", "up", None], dtype=object)
    truth_b = np.array(["down", "flat"], dtype=object)
    pred_b = np.array(["down", "down"], dtype=object)
    f1_groups = [(np.array([0, 1, 2]), truth_a, pred_a), (np.array([3, 4]), truth_b, pred_b)]
    weights = np.array([1, 2, 1, 1, 1])
    labels = ["down", "flat", "up"]
    rep_a = (["up", "down", "down", "up"], ["up", "up", "up", None])  # prompt 1 twice
    expected = (_macro_f1_by_hand(*rep_a, labels) + _macro_f1_by_hand(truth_b, pred_b, labels)) / 2
    assert _metric_value("f1", f1_groups, weights, labels) == pytest.approx(expected)
    own = (
        _macro_f1_by_hand(*rep_a, ["down", "up"])
        + _macro_f1_by_hand(truth_b, pred_b, ["down", "flat"])
    ) / 2
    assert _metric_value("f1", f1_groups, weights, []) == pytest.approx(own)


def test_rating_stability_resamples_prompts_with_the_documented_generator():
    """Retrieval accuracy of two systems over 12 prompts (one format), re-scored on prompt
    resamples drawn here from numpy's generator seeded by (seed, the first four bytes of
    sha256 of "understanding|prompting|metric|feature": the suite run is not part of it),
    weights = how often each prompt (sorted by key) is drawn; the interval is
    the 2.5 / 97.5 % quantile of the re-scored accuracies. The default seed is 0."""
    right = {
        "a": [1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1],
        "b": [0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1],
    }
    rows = []
    for prompting in ("zero_shot", "cot"):
        for system, marks in right.items():
            for i, ok in enumerate(marks):
                rows.append(
                    answer_row(f"p{i:02d}", system, "retrieval", '{"value": 100.0}', True,
                               value=100.0 if ok else 150.0, prompting=prompting)
                )  # fmt: skip
    no_options = pd.DataFrame(columns=["prompt_key", "options"])
    scored = score_table(pd.DataFrame(rows))
    ratings = rating_table(task_scores(scored, no_options), 3)
    resamples = 40
    default = rating_stability_table(scored, no_options, ratings, 3, resamples=resamples)
    seeded = rating_stability_table(scored, no_options, ratings, 3, resamples=resamples, seed=7)
    for seed, table in ((0, default), (7, seeded)):
        table = table[table["metric"] == "retrieval_accuracy"].set_index(["prompting", "system_id"])
        for prompting in ("zero_shot", "cot"):
            parts = ["understanding", prompting, "retrieval_accuracy", "trend"]
            digest = hashlib.sha256("|".join(parts).encode()).digest()[:4]
            rng = np.random.default_rng([seed, int.from_bytes(digest, "little")])
            draws = {s: [] for s in right}
            for _ in range(resamples):
                weights = np.bincount(rng.integers(0, 12, 12), minlength=12)
                for s, marks in right.items():
                    draws[s].append(np.dot(weights, marks) / weights.sum())
            for s in right:
                low, high = np.quantile(draws[s], [0.025, 0.975])
                row = table.loc[(prompting, s)]
                assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))
                assert row["n_prompts"] == 12 and row["n_resamples"] == resamples


def position_frame(cells, run="run"):
    """Scored rows of one system's retrieval prompts: ``cells`` = quadrant -> (n, right)."""
    rows = []
    for q, (n, k) in cells.items():
        for i in range(n):
            rows.append({"suite_run_id": run, "prompting": "zero_shot", "system_id": "a",
                         "dataset": "outlier", "task": "retrieval", "quadrant": q,
                         "correct": i < k, "prompt_key": f"{run}{q}-{i}"})  # fmt: skip
    return pd.DataFrame(rows)


def test_position_cells_counted_by_hand():
    # q1 3 of 4 right, q2 0 of 2, q3 1 of 1, q4 1 of 3: 10 prompts, 5 right
    cells = {1: (4, 3), 2: (2, 0), 3: (1, 1), 4: (3, 1)}
    table = position_bias_table(position_frame(cells)).set_index("quadrant")
    assert table.index.tolist() == [1, 2, 3, 4]
    for q, (n, k) in cells.items():
        row = table.loc[q]
        assert row["n_prompts"] == n and row["n_correct"] == k
        assert row["accuracy"] == pytest.approx(k / n)
        assert row["accuracy_elsewhere"] == pytest.approx((5 - k) / (10 - n))
        _, p = proportions_ztest([k, 5 - k], [n, 10 - n])
        assert row["p_value"] == pytest.approx(p)
    assert not table["judgeable"].any() and table["position_bias"].isna().all()


def test_a_quadrant_of_exactly_the_prompts_needed_is_judged():
    """80 % power for 0.375 against 0.625 at 0.05 (statsmodels), the rest three times the
    quadrant: a quadrant holding exactly that many prompts can be judged."""
    effect = proportion_effectsize(0.625, 0.375)
    need = int(np.ceil(NormalIndPower().solve_power(effect, power=0.8, alpha=0.05, ratio=3)))
    table = position_bias_table(
        position_frame(
            {1: (need, need // 2), 2: (need, need // 2), 3: (need, need // 2), 4: (need, need // 2)}
        )  # fmt: skip
    ).set_index("quadrant")
    assert (table["min_prompts_to_judge"] == need).all()
    assert table["judgeable"].all() and not table["position_bias"].any()


def test_bias_needs_a_holm_p_strictly_below_alpha(monkeypatch):
    """A judgeable quadrant is biased when its Holm p is < 0.05: exactly 0.05 is not, and a
    p-value that cannot be computed (NaN) is no evidence of bias."""
    from tsrate.suites import intervals

    monkeypatch.setattr(intervals, "holm", lambda p: np.array([0.05, np.nan, 0.0499, 0.2]))
    table = position_bias_table(position_frame({q: (50, 25) for q in (1, 2, 3, 4)})).set_index(
        "quadrant"
    )
    assert table["judgeable"].all()
    assert table["position_bias"].tolist() == [False, False, True, False]


def test_holm_runs_over_each_suite_run_on_its_own():
    # two runs with the same cells: each run's family holds its own 4 tests, so its Holm
    # p-values are those of the run alone (statsmodels' proportions_ztest, Holm by hand)
    cells = {1: (30, 25), 2: (30, 12), 3: (30, 14), 4: (30, 15)}
    one = position_frame(cells, "r1")
    table = position_bias_table(pd.concat([one, position_frame(cells, "r2")], ignore_index=True))
    p = np.array([proportions_ztest([k, 66 - k], [30, 90])[1] for _, k in cells.values()])
    order = np.argsort(p)
    holm = np.empty(4)
    holm[order] = np.minimum(np.maximum.accumulate((4 - np.arange(4)) * p[order]), 1.0)
    for run in ("r1", "r2"):
        got = table[table["suite_run_id"] == run].sort_values("quadrant")
        assert got["p_holm"].to_numpy(dtype=float) == pytest.approx(holm)
