"""How the statistical analyst answers the understanding suite's prompts
(``understanding/analyst.py``): retrieval, extremes and search read from the printed table,
classification and detection from the detected features, the matching tasks by the facts
each description states, the random and reference answerers. Written for round 6 of the
mutation sweep (tests/planted/sweep6_understanding.json); each threshold is checked at its
exact boundary with the statistic it reads stubbed to the boundary value.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np

from tests.support.sweep6_understanding import (
    columns_of,
)
from tsrate.suites.understanding import analyst as an

# --------------------------------------------------------------------------------------
# Answering prompts
# --------------------------------------------------------------------------------------


def a_prompt(
    values, task, dataset="trend", sub="linear_up", fmt="csv", prompting="zero_shot", **kw
):
    from tsrate.suites.understanding import generators as g
    from tsrate.suites.understanding.tasks import build_prompts

    start = dt.date(2021, 3, 1)
    s = g.Sample(
        dataset,
        "test",
        kw.get("index", 0),
        kw.get("seed", 3),
        start,
        np.asarray(values, float),
        sub,
        kw.get("labels", {}),
        "q",
        "n",
    )
    (p,) = build_prompts(
        s, (fmt,), kw.get("decimals", 2), kw.get("pool", {}), tasks=(task,), promptings=(prompting,)
    )
    return p


def test_retrieval_and_extremes_are_read_from_the_table():
    values = [3.5, -1.25, 7.0, 7.0, 2.0, -1.25, 0.5]
    analyst = an.StatisticalAnalyst()
    p = a_prompt(values, "retrieval")
    q = int(np.random.default_rng([3, 7]).integers(0, 7))
    assert analyst.answer(p) == f"{values[q]:.2f}"  # as printed, at the 2 decimals
    assert analyst.answer(a_prompt(values, "arithmetic_min")) == "-1.25 on 2021-03-02"
    assert analyst.answer(a_prompt(values, "arithmetic_max")) == "7.00 on 2021-03-03"
    # a date the table does not hold
    p = dataclasses.replace(p, text=p.text.replace(f"on {p.expected['date']}?", "on 2030-01-01?"))
    assert analyst.answer(p) == "the date is not in the series"
    # chain of thought: one reasoning line naming the days read, then the same answer
    cot = a_prompt(values, "arithmetic_max", prompting="cot")
    assert analyst.answer(cot) == (
        "I read the 7 days of the series from the csv block and applied the standard "
        "statistics to the arithmetic_max question.\nAnswer: 7.00 on 2021-03-03"
    )


def test_search_answers_whether_the_printed_value_is_in_the_table():
    analyst = an.StatisticalAnalyst()
    values = [-2.5, 1.0, 3.25, 0.0]
    for index, labels in (
        (0, {"query_index": 0, "extreme": "max"}),
        (8, {"query_index": 0, "extreme": "max"}),
    ):
        p = a_prompt(values, "search", dataset="outlier", sub="max_q1", labels=labels, index=index)
        assert analyst.answer(p) == p.expected["answer"]
    p = a_prompt(
        values, "search", dataset="outlier", sub="max_q1", labels={"query_index": 0}, index=0
    )
    assert "-2.50" in p.text and analyst.answer(p) == "yes"
    p = dataclasses.replace(p, text=p.text.replace("Does the value -2.50", "Does the value -2.49"))
    assert analyst.answer(p) == "no"
    p = dataclasses.replace(p, text=p.text.replace("Does the value -2.49", "Does the value 3.25"))
    assert analyst.answer(p) == "yes"


def test_classification_outside_the_options_is_none_of_these(monkeypatch):
    analyst = an.StatisticalAnalyst()
    p = a_prompt(np.arange(30.0), "classification", dataset="anomalies", sub="single_spike")
    monkeypatch.setattr(an, "anomaly_kind", lambda x: "double_spike")
    assert analyst.answer(p) == "double_spike"
    monkeypatch.setattr(an, "anomaly_kind", lambda x: "wobble")
    assert analyst.answer(p) == "none of these"
    up = a_prompt(0.5 * np.arange(30.0), "classification", dataset="trend", sub="linear_up")
    down = a_prompt(-0.5 * np.arange(30.0), "classification", dataset="trend", sub="linear_down")
    assert analyst.answer(up) == "up" and analyst.answer(down) == "down"
    flat = a_prompt(np.zeros(30), "classification", dataset="trend", sub="linear_down")
    assert analyst.answer(flat) == "down"  # slope 0 is not > 0


def test_detection_dispatches_on_the_question(monkeypatch):
    analyst = an.StatisticalAnalyst()
    stubs = {
        "has_trend": ("trend", "trend"),
        "has_seasonality": ("seasonality", "seasonality"),
        "has_break": ("structural_breaks", "structural_breaks"),
        "has_fat_tails": ("statistical_properties", "fat_tails"),
        "is_stationary": ("statistical_properties", "stationarity"),
    }
    for name, (dataset, feature) in stubs.items():
        for verdict in (True, False):
            monkeypatch.setattr(an, name, lambda x, v=verdict: v)
            ps = [p for p in _detections(dataset) if p.feature == feature]
            assert [analyst.answer(p) for p in ps] == ["yes" if verdict else "no"], name
    for kind, present in (("none", False), ("single_spike", True)):
        monkeypatch.setattr(an, "anomaly_kind", lambda x, k=kind: k)
        assert [analyst.answer(p) for p in _detections("anomalies")] == ["yes" if present else "no"]
    for kind, changes in (
        ("constant", False),
        ("none", False),
        ("clustered", True),
        ("leverage", True),
    ):
        monkeypatch.setattr(an, "volatility_kind", lambda x, k=kind: k)
        assert [analyst.answer(p) for p in _detections("volatility")] == [
            "yes" if changes else "no"
        ]


def _detections(dataset):
    from tsrate.suites.understanding import generators as g
    from tsrate.suites.understanding.tasks import build_prompts

    s = g.Sample(
        dataset,
        "test",
        0,
        3,
        dt.date(2021, 3, 1),
        np.arange(30.0),
        "x",
        {"fat_tails": 1, "stationary": 1},
        "q",
        "n",
    )
    return build_prompts(s, ("csv",), 2, {}, tasks=("detection",))


def test_feature_flags(monkeypatch):
    analyst = an.StatisticalAnalyst()
    assert analyst._feature_flags({"a": [1.0, 2.0], "b": [2.0, 1.0]}) == {"multivariate": True}
    monkeypatch.setattr(an, "has_trend", lambda x: True)
    monkeypatch.setattr(an, "has_seasonality", lambda x: False)
    monkeypatch.setattr(an, "anomaly_kind", lambda x: "none")
    monkeypatch.setattr(an, "has_break", lambda x: True)
    monkeypatch.setattr(an, "volatility_kind", lambda x: "constant")
    monkeypatch.setattr(an, "has_fat_tails", lambda x: False)
    flags = {
        "multivariate": False,
        "trend": True,
        "seasonality": False,
        "anomalies": False,
        "structural_breaks": True,
        "volatility": False,
        "fat_tails": False,
    }
    assert analyst._feature_flags({"Value": [1.0, 2.0]}) == flags
    monkeypatch.setattr(an, "anomaly_kind", lambda x: "level_shift")
    monkeypatch.setattr(an, "volatility_kind", lambda x: "none")
    flags.update(anomalies=True)
    assert analyst._feature_flags({"Value": [1.0, 2.0]}) == flags
    monkeypatch.setattr(an, "volatility_kind", lambda x: "increasing")
    flags.update(volatility=True)
    assert analyst._feature_flags({"Value": [1.0, 2.0]}) == flags


def test_match_numbers_counts_the_facts_each_description_states():
    dates = [dt.date(2021, 3, 1) + dt.timedelta(days=i) for i in range(4)]
    columns = {"Value": [2.0, 9.5, -1.0, 3.0]}
    facts = ["2021-03-01", "2021-03-04", "-1.00", "9.50", "2021-03-03", "2021-03-02"]
    options = {
        "A": "starts 2021-03-01, peaks 9.50",  # 2 facts
        "B": "from 2021-03-01 to 2021-03-04, low -1.00 on 2021-03-03",  # 4 facts
        "C": "nothing here",
        "D": "high 9.50 on 2021-03-02, ends 2021-03-04",  # 3 facts
    }
    assert sum(f in options["B"] for f in facts) == 4
    assert an.StatisticalAnalyst._match_numbers(dates, columns, options) == "B"
    options["D"] += ", from 2021-03-01 low -1.00"  # now 5
    assert an.StatisticalAnalyst._match_numbers(dates, columns, options) == "D"
    # a tie keeps the first letter
    assert an.StatisticalAnalyst._match_numbers(dates, columns, {"A": "x", "B": "y"}) == "A"
    # the second series' extremes count too
    two = {"Series1": [2.0, 9.5, -1.0, 3.0], "Series2": [0.0, 0.0, 0.0, 7.25]}
    assert an.StatisticalAnalyst._match_numbers(dates, two, {"A": "x", "B": "reaches 7.25"}) == "B"


def test_match_keywords_scores_agreement_with_the_detected_features():
    flags = {"trend": True, "seasonality": False, "anomalies": True}
    options = {
        "A": "A series that rises with a seasonal cycle.",  # +1 -1 = 0
        "B": "A series with a spike.",  # +1
        "C": "A volatile series.",  # volatility not flagged: -1
        "D": "Two time series.",  # multivariate not flagged: -1
    }
    assert an.StatisticalAnalyst._match_keywords(flags, options) == "B"
    options["A"] = "It rises, with an OUTLIER."  # +2
    assert an.StatisticalAnalyst._match_keywords(flags, options) == "A"
    # "no clear trend" is no mention of a trend: 0, ahead of -1s
    flags = {"trend": False}
    options = {"A": "A series with a trend.", "B": "A series with no clear trend.", "C": "A cycle."}
    assert an.StatisticalAnalyst._match_keywords(flags, options) == "B"


def test_random_answerer_draws_from_the_prompt_keys_digest():
    import hashlib

    values = [3.5, -1.25, 7.0, 2.0]
    for seed in (0, 5):
        rnd = an.RandomAnswerer(seed)
        assert rnd.fingerprint() == f"und_random-v2-seed{seed}"
        for task in ("retrieval", "arithmetic_max", "arithmetic_min"):
            p = a_prompt(values, task)
            digest = hashlib.sha256(f"{seed}|{p.prompt_key}".encode()).digest()
            i = int(np.random.default_rng(int.from_bytes(digest[:8], "little")).integers(0, 4))
            want = f"{values[i]:.{p.decimals}f}" + (
                "" if task == "retrieval" else f" on {dt.date(2021, 3, 1 + i)}"
            )
            assert rnd.answer(p) == want
        p = a_prompt(values, "detection")
        digest = hashlib.sha256(f"{seed}|{p.prompt_key}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        assert rnd.answer(p) == str(rng.choice(p.options))
        cot = a_prompt(values, "detection", prompting="cot")
        assert rnd.answer(cot).startswith("I pick an admissible answer at random.\nAnswer: ")


def test_reference_answerers_are_always_available_and_answer_in_order():
    analyst, rnd = an.StatisticalAnalyst(), an.RandomAnswerer()
    assert analyst.availability().available and rnd.availability().available
    assert rnd.seed == 0 and rnd.fingerprint() == "und_random-v2-seed0"
    prompts = [
        a_prompt([1.0, 4.0, 2.0], "arithmetic_max"),
        a_prompt([1.0, 4.0, 2.0], "arithmetic_min"),
    ]
    assert analyst.answer_all(prompts) == ["4.00 on 2021-03-02", "1.00 on 2021-03-01"]
    assert rnd.answer_all(prompts) == [rnd.answer(p) for p in prompts]


def test_search_looks_in_every_column_of_the_table():
    """Search is asked of one-column position sets, but the analyst reads whatever table
    the prompt holds: a value in any column appears in the series."""
    p = a_prompt([1.0, 2.0], "search", dataset="outlier", sub="max_q1", labels={"query_index": 0})
    block = "Date,Value\n2021-03-01,1.00\n2021-03-02,2.00\n"
    assert block in p.text
    two = "Date,A,B\n2021-03-01,1.00,5.00\n2021-03-02,2.00,6.00\n"
    q = dataclasses.replace(p, text=p.text.replace(block, two))
    assert an.StatisticalAnalyst().answer(q) == "yes"  # 1.00 is in A only
    q = dataclasses.replace(q, text=q.text.replace("Does the value 1.00", "Does the value 6.00"))
    assert an.StatisticalAnalyst().answer(q) == "yes"  # 6.00 is in B only


def test_search_matches_numbers_to_within_float_parsing_only():
    """Printed values and the asked value are decimal strings: equal ones parse to equal
    floats, so only a difference under 1e-9 counts as the same number; 1e-9 and 1.5e-9
    away do not appear."""
    p = a_prompt([0.0, 1.0], "search", dataset="outlier", sub="max_q1", labels={"query_index": 0})
    assert "Does the value 0.00 appear" in p.text
    analyst = an.StatisticalAnalyst()
    for asked, answer in (("0.0000000005", "yes"), ("0.000000001", "no"), ("1.0000000015", "no")):
        q = dataclasses.replace(
            p, text=p.text.replace("Does the value 0.00", f"Does the value {asked}")
        )
        assert analyst.answer(q) == answer, asked


def test_matching_prompts_are_answered_from_the_table():
    """Intra-dataset matching: the own description states the series' first and last
    dates, extremes and their dates, so it holds the most facts; cross-dataset matching
    answers with a letter (its keyword score)."""
    from tsrate.suites.understanding import generators as g
    from tsrate.suites.understanding.tasks import build_prompts

    pool = {
        d: g.generate_split(d, "test", 5, 4)
        for d in ("trend", "seasonality", "anomalies", "volatility")
    }
    analyst = an.StatisticalAnalyst()
    for s in pool["trend"]:
        (intra,) = build_prompts(s, ("csv",), 2, pool, tasks=("matching_intra",))
        assert analyst.answer(intra) == intra.expected["answer"]
        (cross,) = build_prompts(s, ("csv",), 2, pool, tasks=("matching_cross",))
        assert analyst.answer(cross) in ("A", "B", "C", "D")


def test_match_numbers_reads_the_first_and_last_dates_and_ties_go_to_the_second_half(monkeypatch):
    dates = [dt.date(2021, 3, 1) + dt.timedelta(days=i) for i in range(4)]
    columns = {"Value": [2.0, 9.5, -1.0, 3.0]}  # extremes on days 2 and 3, not 1 or 4
    match = an.StatisticalAnalyst._match_numbers
    assert match(dates, columns, {"A": "nothing", "B": "starts on 2021-03-01"}) == "B"
    assert match(dates, columns, {"A": "nothing", "B": "ends on 2021-03-04"}) == "B"
    # dynamic correlation: equal |r| in both halves is not 'first half'
    monkeypatch.setattr(an, "half_correlations", lambda a, b: (0.5, -0.5))
    cols = columns_of(np.arange(10.0), np.arange(10.0))
    assert (
        an.StatisticalAnalyst()._classify("dynamic_correlation", cols) == "correlated_second_half"
    )
