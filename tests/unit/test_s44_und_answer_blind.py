"""Answer-blind rules on the understanding suite's own closed questions (the prompts
``plan_prompts`` builds with the default seeds): a rule that reads only the options or the
question must not beat chance, and where the truths are not balanced by design (detection)
the report's chance verdict must hold a system against the most frequent answer too.

Every expectation is computed here, independently of the suite: rule accuracies against
a one-sided binomial bound, the design shares by counting the generators' kinds, the
one-sample test with statsmodels."""

from __future__ import annotations

import collections
import dataclasses
import functools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, chisquare
from statsmodels.stats.proportion import proportions_ztest

from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding import report_prompting, suite, tasks
from tsrate.suites.understanding.analyst import RandomAnswerer
from tsrate.suites.understanding.scoring import parse_answer

CLOSED = ("detection", "classification", "matching_intra", "matching_cross", "search")
#: a rule "beats chance" when a one-sided binomial test rejects chance at this level
BOUND = 1e-3


@functools.cache
def closed_prompts() -> dict[str, list]:
    """The suite's own closed questions, default seeds, csv: 40 series per feature dataset,
    10 per position cell (a few hundred questions per task)."""
    config = dataclasses.replace(
        suite.SMALL, test=40, formats=("csv",), position_per_cell=10, tasks=CLOSED
    )
    by_task = collections.defaultdict(list)
    for prompt in suite.plan_prompts(config, suite.generate_all(config)):
        by_task[prompt.task].append(prompt)
    return dict(by_task)


def option_texts(prompt) -> list[str]:
    """The options as the prompt prints them (matching: the descriptions after the letter;
    classification: "label: definition"; yes/no questions: the two words)."""
    if prompt.task.startswith("matching"):
        block = prompt.text.split("best?\n", 1)[1].split("\nAnswer with", 1)[0]
        return [line[3:] for line in block.split("\n")]
    if prompt.task == "classification":
        block = prompt.text.split("definitions:\n", 1)[1].split("\nAnswer with", 1)[0]
        return [line[2:] for line in block.split("\n")]
    return list(prompt.options)


def beats_chance(hits: list[bool], chance: float) -> bool:
    return binomtest(int(sum(hits)), len(hits), chance, alternative="greater").pvalue < BOUND


def option_rules(prompts) -> dict[str, list[bool]]:
    """Rules that read only the options: a position, a text length, the most frequent key
    position (learnt on one half of the questions, applied to the other)."""
    keys = [p.options.index(p.expected["answer"]) for p in prompts]
    lengths = [[len(t) for t in option_texts(p)] for p in prompts]
    half = len(prompts) // 2
    learnt = collections.Counter(keys[:half]).most_common(1)[0][0]
    relearnt = collections.Counter(keys[half:]).most_common(1)[0][0]
    return {
        "first": [k == 0 for k in keys],
        "last": [k == len(p.options) - 1 for k, p in zip(keys, prompts, strict=True)],
        "middle": [k == len(p.options) // 2 for k, p in zip(keys, prompts, strict=True)],
        "longest": [k == int(np.argmax(n)) for k, n in zip(keys, lengths, strict=True)],
        "shortest": [k == int(np.argmin(n)) for k, n in zip(keys, lengths, strict=True)],
        "most frequent position": [k == relearnt for k in keys[:half]]
        + [k == learnt for k in keys[half:]],
    }


@pytest.mark.parametrize("task", ["classification", "matching_intra", "matching_cross", "search"])
def test_no_option_only_rule_beats_chance(task):
    prompts = closed_prompts()[task]
    assert len(prompts) >= 200
    chance = float(np.mean([1 / len(p.options) for p in prompts]))
    for name, hits in option_rules(prompts).items():
        assert not beats_chance(hits, chance), (task, name, np.mean(hits), chance)
    if task.startswith("matching"):  # the key's letter is uniform over A-D
        letters = collections.Counter(p.expected["answer"] for p in prompts)
        assert chisquare([letters[x] for x in "ABCD"]).pvalue >= BOUND, letters


def test_cross_matching_options_share_subject_and_carry_no_numbers():
    """Without the series nothing marks the key: every option speaks of one series in the
    same words ("This time series ..."), and none holds a digit (qualitative only)."""
    for prompt in closed_prompts()["matching_cross"]:
        texts = option_texts(prompt)
        assert all(t.startswith("This time series ") for t in texts), texts
        assert not any(ch.isdigit() for t in texts for ch in t), texts
        assert len(set(texts)) == 4, texts


def test_search_value_and_question_do_not_give_the_answer():
    """The searched value's printed form (last digit, length) tells nothing: half the
    questions are about a printed value, and a rule on the value's text is at chance."""
    prompts = closed_prompts()["search"]
    truths = [p.expected["answer"] for p in prompts]
    assert collections.Counter(truths)["yes"] * 2 == len(prompts)
    values = [p.text.split("Does the value ")[1].split(" appear")[0] for p in prompts]
    for name, says in {
        "even last digit": [int(v[-1]) % 2 == 0 for v in values],
        "last digit 0 or 5": [v[-1] in "05" for v in values],
        "six characters or more": [len(v) >= 6 for v in values],
    }.items():
        for yes_when in (True, False):
            hits = [(s == yes_when) == (t == "yes") for s, t in zip(says, truths, strict=True)]
            assert not beats_chance(hits, 0.5), (name, yes_when, np.mean(hits))


def design_yes_shares() -> dict[str, float]:
    """The share of true 'yes' of each detection question, counted from the generators' kinds
    (drawn uniformly): every kind but the control has the feature, except where noted."""

    def feature(kinds, negatives):
        return (len(kinds) - len(negatives)) / len(kinds)

    return {
        "trend": feature(g.TREND_KINDS, ["none"]),
        "seasonality": feature(g.SEASONALITY_KINDS, ["none"]),
        "anomalies": feature(g.ANOMALY_KINDS, ["none"]),
        "structural_breaks": feature(g.BREAK_KINDS, ["none"]),
        "volatility": feature(g.VOLATILITY_KINDS, ["constant", "none"]),
        "fat_tails": 1 / len(g.STAT_KINDS),  # fat_tailed only
        "stationarity": 2 / len(g.STAT_KINDS),  # fat_tailed and stationary
        "correlation": feature(g.CORRELATION_KINDS, ["none"]),
        "cross_correlation": 2 / len(g.CROSS_KINDS),  # the lagged two
        "dynamic_correlation": feature(g.DCC_KINDS, ["constant"]),
    }


def test_detection_truths_are_imbalanced_as_the_design_says():
    """The suite's detection truths follow the design shares (two-sided binomial, per
    feature), which are far from balanced: so answering each question's most frequent answer
    beats one half, which is what the chance verdict has to account for."""
    expected = design_yes_shares()
    shares = tasks.design_answer_shares()
    assert {f: shares[("detection", f)]["yes"] for f in expected} == pytest.approx(expected)
    answers = tasks.most_frequent_answers()  # classes: uniform but for structural breaks
    assert answers[("classification", "structural_breaks")] == "regime_shift"  # 7 of 12
    assert answers[("classification", "trend")] == "up"  # a tie: the first class listed
    assert answers[("detection", "cross_correlation")] == "yes"  # a tie: yes
    prompts = closed_prompts()["detection"]
    by_feature = collections.defaultdict(list)
    for p in prompts:
        by_feature[p.feature].append(p.expected["answer"] == "yes")
    for feature, yes in by_feature.items():
        assert binomtest(sum(yes), len(yes), expected[feature]).pvalue >= BOUND, feature
    blind = [(p.expected["answer"] == "yes") == (expected[p.feature] >= 0.5) for p in prompts]
    assert beats_chance(blind, 0.5) and np.mean(blind) > 0.7


@functools.cache
def detection_prompts() -> list:
    """The suite's detection questions in two formats: each series is asked twice, so a
    system answering it alike twice counts it about once (effective counts)."""
    config = dataclasses.replace(
        suite.SMALL, test=40, formats=("csv", "plain"), tasks=("detection",)
    )
    return suite.plan_prompts(config, suite.generate_all(config))


def answered(prompts, answer) -> pd.DataFrame:
    """Per-question rows of a system answering ``answer(p)``, its reply parsed strictly."""
    rows = []
    for p in prompts:
        parsed = parse_answer(p.task, answer(p), p.options, p.format)
        assert parsed.ok, parsed.error
        rows.append((p.series_key, p.feature, p.format, p.expected["answer"], parsed.answer))
    return pd.DataFrame(rows, columns=["series_key", "feature", "format", "truth", "predicted"])


def marts(systems: dict[str, pd.DataFrame]) -> tuple[pd.DataFrame, ...]:
    """und_scores rows (one per feature and format), und_confusion_matrix rows and
    und_series_scores rows (one per series) of each system."""
    scores, confusion, series = [], [], []
    keys = {"prompting": "zero_shot", "task": "detection"}
    for system_id, frame in systems.items():
        frame = frame.assign(right=frame["truth"] == frame["predicted"], system_id=system_id)
        for (feature, fmt), block in frame.groupby(["feature", "format"]):
            scores.append(
                {**keys, "system_id": system_id, "feature": feature, "format": fmt,
                 "n_prompts": len(block), "n_unparsed": 0, "accuracy": block["right"].mean()}
            )  # fmt: skip
        for (feature, truth, predicted), block in frame.groupby(["feature", "truth", "predicted"]):
            confusion.append(
                {**keys, "system_id": system_id, "feature": feature, "truth": truth,
                 "predicted": predicted, "n_prompts": len(block)}
            )  # fmt: skip
        for key, block in frame.groupby("series_key"):
            series.append(
                {**keys, "system_id": system_id, "series_key": key, "n_prompts": len(block),
                 "n_correct": int(block["right"].sum())}
            )  # fmt: skip
    return pd.DataFrame(scores), pd.DataFrame(confusion), pd.DataFrame(series)


def effective(frame: pd.DataFrame) -> tuple[float, float]:
    """(correct, prompts) divided by the clustered proportion's design effect over the
    series, floored at 1 (Rao & Scott 1992), computed here by hand."""
    per = frame.groupby("series_key")["right"].agg(["sum", "count"])
    k, n = per["sum"].sum(), per["count"].sum()
    p = k / n
    d = max(1.0, ((per["sum"] - p * per["count"]) ** 2).sum() / (n * p * (1 - p)))
    return k / d, n / d


def test_a_constant_answer_is_not_reported_above_chance():
    """'Always yes' and 'each feature's most frequent answer' beat und_random's uniform
    guesses on the suite's detection questions, but read no series: their verdict is
    'not above the most frequent answer', while a system right on 9 questions in 10 is
    above chance. The majority share and its p (on the effective counts of the series)
    are recomputed here."""
    prompts = detection_prompts()
    expected = design_yes_shares()
    majority = {f: "yes" if share >= 0.5 else "no" for f, share in expected.items()}
    random = RandomAnswerer(seed=0)
    skilled = {p.prompt_key: i % 10 != 0 for i, p in enumerate(prompts)}
    flip = {"yes": "no", "no": "yes"}
    systems = {
        "und_random": answered(prompts, random.answer),
        "always_yes": answered(prompts, lambda p: "yes"),
        "majority": answered(prompts, lambda p: majority[p.feature]),
        "skilled": answered(
            prompts,
            lambda p: p.expected["answer"] if skilled[p.prompt_key] else flip[p.expected["answer"]],
        ),
    }
    scores, confusion, series = marts(systems)
    table = report_prompting.chance_table(scores, series, confusion).set_index("system_id")
    level = np.mean([p.expected["answer"] == majority[p.feature] for p in prompts])
    for system_id in ("always_yes", "majority", "skilled"):
        row = table.loc[system_id]
        assert row["majority_accuracy"] == pytest.approx(level)
        frame = systems[system_id]
        k_eff, n_eff = effective(frame.assign(right=frame["truth"] == frame["predicted"]))
        _, p = proportions_ztest(k_eff, n_eff, value=level, prop_var=level)
        assert row["majority_p_value"] == pytest.approx(p)
    assert table.loc["always_yes", "accuracy"] > table.loc["always_yes", "chance_accuracy"]
    assert table.loc["always_yes", "p_value"] < 0.05  # und_random alone would call it skilled
    assert table.loc["always_yes", "verdict"] == report_prompting.NOT_ABOVE_MAJORITY
    assert table.loc["majority", "verdict"] == report_prompting.NOT_ABOVE_MAJORITY
    assert table.loc["skilled", "verdict"] == "above chance"


def test_a_perfect_score_where_every_truth_is_the_most_frequent_answer_is_not_above_it():
    """Ten trend series, all with a trend: answering "yes" is right every time, so even a
    system right on all ten cannot beat the most frequent answer (its share is 1, and the
    test of a share against a level of 1 has no variance: p 1 when equal)."""
    keys = {"prompting": "zero_shot", "task": "detection", "feature": "trend"}
    scores = pd.DataFrame(
        [
            {**keys, "system_id": system, "format": "csv", "n_prompts": 10, "n_unparsed": 0,
             "accuracy": k / 10}
            for system, k in (("und_random", 2), ("sure", 10))
        ]
    )  # fmt: skip
    confusion = pd.DataFrame(
        [
            {**keys, "system_id": system, "truth": "yes", "predicted": answer, "n_prompts": n}
            for system, answer, n in (("und_random", "yes", 2), ("und_random", "no", 8),
                                      ("sure", "yes", 10))
        ]
    )  # fmt: skip
    (row,) = report_prompting.chance_table(scores, None, confusion).itertuples(index=False)
    assert row.p_value < 0.05 and row.accuracy == 1.0
    assert (row.majority_accuracy, row.majority_p_value) == (1.0, 1.0)
    assert row.verdict == report_prompting.NOT_ABOVE_MAJORITY
