"""Tests written for what round 6 of the mutation sweep let through in the understanding
suite (tests/planted/sweep6_understanding.json): the position-bias generator
(``generators/position.py``) and the statistical analyst's rules (``analyst.py``).

The position series are rebuilt from the generator's documented definition (its docstring
and the paper's Appendix C/E.1), drawing in the same order from a generator with the same
seed; quadrants are computed with integer arithmetic (``4 * index // n + 1``), and the
lengths include ones not divisible by four, where the rejection loop for the queried day
has to reject. The analyst's rules are checked against hand-worked series and textbook
statistics written out here (least squares, the periodogram, the Gaussian likelihood
ratio, Pearson's r), never against the product's own helpers.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.suites.understanding import cot_parser, tasks
from tsrate.suites.understanding import formats as fmts
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.generators import position as pos
from tsrate.suites.understanding.scoring import parse_reply
from tsrate.suites.understanding.tasks import build_prompts

# --------------------------------------------------------------------------------------
# Position-bias series (Appendix C)
# --------------------------------------------------------------------------------------

POSITION_KINDS = ("brownian", "outlier", "sinusoidal", "monotone", "monotone_noise")
LENGTHS = (4, 7, 10, 13, 40, 175)  # 175 is the suite's default; 7, 10, 13 are not multiples of 4


def ref_quadrant(i: int, n: int) -> int:
    """Quarter 1..4 of day ``i`` of ``n`` (0-based), in exact integer arithmetic."""
    return 4 * i // n + 1


def ref_query(rng: np.random.Generator, n: int, quadrant: int) -> int:
    """A day drawn uniformly from the integer range [(q-1) n // 4, q n // 4), redrawn until it
    lies in quarter ``q``."""
    while True:
        i = int(rng.integers((quadrant - 1) * n // 4, quadrant * n // 4))
        if ref_quadrant(i, n) == quadrant:
            return i


def ref_position(seed: int, kind: str, n: int, extreme: str, quadrant: int):
    rng = np.random.default_rng(seed)
    pick = np.argmax if extreme == "max" else np.argmin
    if kind == "brownian":
        while True:
            x = 100.0 + np.cumsum(rng.normal(0.0, 1.0, n))
            if ref_quadrant(int(pick(x)), n) == quadrant:
                break
    elif kind == "outlier":
        x = 100.0 + rng.normal(0.0, 1.0, n)
        spike = ref_query(rng, n, quadrant)
        size = rng.uniform(10, 20)
        x[spike] = x[spike] + size if extreme == "max" else x[spike] - size
    elif kind == "sinusoidal":
        t = np.arange(n, dtype=float)
        amplitude = rng.uniform(5, 15)
        period = rng.uniform(n / 6, n / 2)
        while True:
            phase = rng.uniform(0.0, 2.0 * np.pi)
            x = 100.0 + amplitude * np.sin(2.0 * np.pi * t / period + phase)
            x = x + rng.normal(0.0, 0.5, n)
            if ref_quadrant(int(pick(x)), n) == quadrant:
                break
    else:
        # the extreme at the end of the quadrant's side: max late (q3/q4) means rising
        rising = (extreme == "max") is (quadrant in (3, 4))
        steps = rng.uniform(0.2, 1.0, n)
        if kind == "monotone_noise":
            steps = steps + rng.normal(0.0, 1.0, n)
        x = 100.0 + np.cumsum(steps) if rising else 100.0 - np.cumsum(steps)
    at = int(pick(x))
    return x, at, ref_quadrant(at, n), ref_query(rng, n, quadrant)


def position_cases():
    for kind in POSITION_KINDS:
        for n in LENGTHS:
            for quadrant in (1, 2, 3, 4):
                for extreme in ("max", "min"):
                    yield kind, n, quadrant, extreme


@pytest.mark.parametrize("kind", POSITION_KINDS)
def test_position_series_are_the_documented_draws(kind):
    for _, n, quadrant, extreme in (c for c in position_cases() if c[0] == kind):
        for seed in (0, 1, 7):
            x, labels, qualitative = pos.position_series(
                np.random.default_rng(seed), kind, n, extreme, quadrant
            )
            rx, at, at_quadrant, query = ref_position(seed, kind, n, extreme, quadrant)
            np.testing.assert_allclose(x, rx, rtol=0, atol=1e-9)
            assert labels == {
                "extreme": extreme,
                "extreme_index": at,
                "extreme_quadrant": at_quadrant,
                "query_index": query,
                "query_quadrant": quadrant,
            }
            if kind not in ("monotone", "monotone_noise"):
                assert at_quadrant == quadrant
            assert ref_quadrant(query, n) == quadrant
            assert isinstance(qualitative, str) and qualitative


def test_position_qualitative_descriptions():
    rng = np.random.default_rng
    assert "Brownian" in pos.position_series(rng(0), "brownian", 40, "max", 2)[2]
    assert "one outlier" in pos.position_series(rng(0), "outlier", 40, "max", 2)[2]
    assert "sine wave" in pos.position_series(rng(0), "sinusoidal", 40, "max", 2)[2]
    # max in quarter 4 -> rising; max in quarter 1 -> falling; min in quarter 1 -> rising
    assert pos.position_series(rng(0), "monotone", 40, "max", 4)[2] == (
        "This time series rises steadily."
    )
    assert pos.position_series(rng(0), "monotone", 40, "max", 1)[2] == (
        "This time series falls steadily."
    )
    assert pos.position_series(rng(0), "monotone_noise", 40, "min", 1)[2] == (
        "This time series rises with noise."
    )
    assert pos.position_series(rng(0), "monotone_noise", 40, "min", 3)[2] == (
        "This time series falls with noise."
    )


def test_monotone_steps_lie_between_a_fifth_and_one():
    for seed in range(5):
        for extreme, quadrant, sign in (
            ("max", 4, 1),
            ("max", 2, -1),
            ("min", 1, 1),
            ("min", 3, -1),
        ):
            x, labels, _ = pos.position_series(
                np.random.default_rng(seed), "monotone", 200, extreme, quadrant
            )
            steps = sign * np.diff(x)
            assert steps.min() >= 0.2 - 1e-12 and steps.max() <= 1.0 + 1e-12
            # the first value is 100 plus (or minus) the first step, itself in [0.2, 1]
            assert 0.2 <= sign * (x[0] - 100) <= 1.0
            assert labels["extreme_quadrant"] == (4 if (extreme == "max") == (sign > 0) else 1)


def test_quadrant_of_on_every_day_of_odd_lengths():
    for n in (1, 2, 3, 5, 7, 9, 10, 13, 175):
        assert [pos.quadrant_of(i, n) for i in range(n)] == [ref_quadrant(i, n) for i in range(n)]


def test_position_series_rejects_bad_arguments():
    rng = np.random.default_rng(0)
    for extreme, quadrant in (("mean", 1), ("max", 0), ("min", 5)):
        with pytest.raises(TsrateError, match="bad extreme"):
            pos.position_series(rng, "brownian", 40, extreme, quadrant)
    with pytest.raises(TsrateError, match="unknown position dataset"):
        pos.position_series(rng, "zigzag", 40, "max", 1)


# --------------------------------------------------------------------------------------
# Text formats (Appendix F) and reading them back
# --------------------------------------------------------------------------------------

D0 = dt.date(2020, 1, 30)
DATES3 = [D0, D0 + dt.timedelta(days=1), D0 + dt.timedelta(days=2)]


def test_number_prints_the_decimals_and_never_minus_zero():
    assert fmts.number(103.254, 2) == "103.25"
    assert fmts.number(-0.001, 2) == "0.00"
    assert fmts.number(-0.006, 2) == "-0.01"
    assert fmts.number(-0.4, 0) == "0"
    assert fmts.number(7, 0) == "7"
    assert fmts.number(0.0, 3) == "0.000"


ONE = {"Value": [100.0, 105.0, 104.996]}
TWO = {"Series1": [1.0, -2.5, 3.0], "Series2": [10.0, 10.0, 9.0]}


@pytest.mark.parametrize(
    ("fmt", "columns", "decimals", "text"),
    [
        ("csv", ONE, 0, "Date,Value\n2020-01-30,100\n2020-01-31,105\n2020-02-01,105\n"),
        (
            "csv",
            TWO,
            1,
            "Date,Series1,Series2\n2020-01-30,1.0,10.0\n2020-01-31,-2.5,10.0\n2020-02-01,3.0,9.0\n",
        ),
        (
            "plain",
            TWO,
            0,
            "Date:2020-01-30,Series1:1,Series2:10\nDate:2020-01-31,Series1:-2,Series2:10\n"
            "Date:2020-02-01,Series1:3,Series2:9",
        ),
        (
            "tsv",
            ONE,
            2,
            "Date\tValue\n2020-01-30\t100.00\n2020-01-31\t105.00\n2020-02-01\t105.00\n",
        ),
        (
            "json",
            TWO,
            0,
            '{"Date":"2020-01-30","Series1":1,"Series2":10}\n'
            '{"Date":"2020-01-31","Series1":-2,"Series2":10}\n'
            '{"Date":"2020-02-01","Series1":3,"Series2":9}\n',
        ),
        (
            "markdown",
            TWO,
            0,
            "|Date|Series1|Series2|\n|---|---|---|\n|2020-01-30|1|10|\n|2020-01-31|-2|10|\n"
            "|2020-02-01|3|9|\n",
        ),
        (
            "spaces",
            ONE,
            1,
            "Date,Value\n2020-01-30,1 0 0 . 0\n2020-01-31,1 0 5 . 0\n2020-02-01,1 0 5 . 0\n",
        ),
        (
            "context",
            TWO,
            0,
            "Date,Series1,Series2\n2020-01-30,[1],[10]\n2020-01-31,[-2],[10]\n2020-02-01,[3],[9]\n",
        ),
        (
            "symbol",
            ONE,
            2,
            "Date,Value,DirectionIndicator\n2020-01-30,100.00,→\n2020-01-31,105.00,↑\n2020-02-01,105.00,→\n",
        ),
        (
            "symbol",
            TWO,
            0,
            "Date,Series1,Series2,Series1Direction,Series2Direction\n2020-01-30,1,10,→,→\n"
            "2020-01-31,-2,10,↓,→\n2020-02-01,3,9,↑,↓\n",
        ),
        ("custom", ONE, 0, "Date|Value\n2020-01-30|100\n2020-01-31|105\n2020-02-01|105\n"),
    ],
)
def test_formats_print_the_appendix_f_layouts(fmt, columns, decimals, text):
    """Layouts written out by hand (Appendix F); -2.5 with 0 decimals prints -2 (half to
    even), 104.996 with 2 prints 105.00 and so is unchanged (→) from 105.00."""
    assert fmts.format_series(fmt, DATES3, columns, decimals) == text
    dates, back = fmts.parse_formatted(fmt, text)
    assert dates == DATES3 and list(back) == list(columns)
    for name, values in columns.items():
        assert back[name] == [float(fmts.number(v, decimals)) for v in values]


def test_symbol_arrows_compare_the_printed_values():
    text = fmts.format_symbol(DATES3, {"Value": [1.0, 1.004, 0.994]}, 2)
    assert [line.rsplit(",", 1)[1] for line in text.splitlines()[1:]] == ["→", "→", "↓"]
    text = fmts.format_symbol(DATES3, {"Value": [1.0, 0.994, 0.995]}, 2)
    assert [line.rsplit(",", 1)[1] for line in text.splitlines()[1:]] == ["→", "↓", "→"]
    text = fmts.format_symbol(DATES3, {"Value": [5.0, 6.0, 5.5]}, 0)
    assert [line.rsplit(",", 1)[1] for line in text.splitlines()[1:]] == ["→", "↑", "→"]


def test_formats_refuse_what_they_cannot_print_or_read():
    with pytest.raises(TsrateError, match="at least one column"):
        fmts.format_csv(DATES3, {}, 2)
    with pytest.raises(TsrateError, match="has 2 values for 3 dates"):
        fmts.format_csv(DATES3, {"Value": [1.0, 2.0]}, 2)
    with pytest.raises(TsrateError, match="unknown format"):
        fmts.format_series("xml", DATES3, ONE)
    with pytest.raises(TsrateError, match="unknown format"):
        fmts.parse_formatted("xml", "Date,Value\n")
    with pytest.raises(TsrateError, match="no rows"):
        fmts.parse_formatted("csv", "\n\n")
    with pytest.raises(TsrateError, match="plain: cannot read line"):
        fmts.parse_formatted("plain", "Date:2020-01-30,Value100")
    with pytest.raises(TsrateError, match="plain: cannot read line"):
        fmts.parse_formatted("plain", "Day:2020-01-30,Value:1")
    with pytest.raises(TsrateError, match="json: cannot read line"):
        fmts.parse_formatted("json", '{"Date":"2020-01-30","Value":1')
    with pytest.raises(TsrateError, match="context: value"):
        fmts.parse_formatted("context", "Date,Value\n2020-01-30,[1\n")
    with pytest.raises(TsrateError, match="context: value"):
        fmts.parse_formatted("context", "Date,Value\n2020-01-30,1]\n")
    with pytest.raises(TsrateError, match="has 3 fields, header 2"):
        fmts.parse_formatted("csv", "Date,Value\n2020-01-30,1,2\n")
    with pytest.raises(TsrateError, match="is not a YYYY-MM-DD date"):
        fmts.parse_formatted("csv", "Date,Value\n2020-1-30,1\n")
    with pytest.raises(TsrateError, match="is not a number"):
        fmts.parse_formatted("tsv", "Date\tValue\n2020-01-30\tone\n")


def test_reading_back_tolerates_blank_lines_and_spaces():
    dates, cols = fmts.parse_formatted(
        "csv", "\nDate,Value\n\n2020-01-30, 1.5\n   \n2020-01-31,-2\n"
    )
    assert dates == DATES3[:2] and cols == {"Value": [1.5, -2.0]}
    dates, cols = fmts.parse_formatted("context", "Date,Value\n2020-01-30, [7.25] \n")
    assert cols == {"Value": [7.25]}
    dates, cols = fmts.parse_formatted("spaces", "Date,Value\n2020-01-30,- 1 2 . 5\n")
    assert cols == {"Value": [-12.5]}
    # markdown: the header row and the --- row are not data
    dates, cols = fmts.parse_formatted("markdown", "|Date|Value|\n|---|---|\n|2020-01-30|4|\n")
    assert dates == [D0] and cols == {"Value": [4.0]}
    # plain: a value containing ':' keeps everything after the first colon
    with pytest.raises(TsrateError, match="is not a number"):
        fmts.parse_formatted("plain", "Date:2020-01-30,Value:1:2")


# --------------------------------------------------------------------------------------
# Prompts (tasks.py): what each question asks and what its right answer is
# --------------------------------------------------------------------------------------


def make_sample(values, dataset="trend", sub="linear_up", labels=None, index=0, seed=5):
    return g.Sample(
        dataset,
        "test",
        index,
        seed,
        D0,
        np.asarray(values, dtype=float),
        sub,
        labels or {},
        f"qual {dataset} {index}",
        f"quant {dataset} {index}",
    )


def by_task(prompts):
    out = {}
    for p in prompts:
        out.setdefault(p.task, []).append(p)
    return out


def test_extreme_is_the_printed_extreme_with_every_tied_date():
    s = make_sample([1.004, 0.996, 3.0, 2.999, 1.2])
    assert tasks._extreme(s, "min", 2) == (1.0, ["2020-01-30", "2020-01-31"])
    assert tasks._extreme(s, "max", 2) == (3.0, ["2020-02-01", "2020-02-02"])
    assert tasks._extreme(s, "max", 3) == (3.0, ["2020-02-01"])


def test_retrieval_and_arithmetic_of_a_univariate_series():
    """The queried day is the first draw of the series' question stream (seed, 7); the
    extremes are the printed ones, their quadrant that of the raw argmin/argmax."""
    values = [5.0, 1.0, 7.0, 2.0, 9.0, 9.004, 3.0, 4.0, 0.5, 6.0, 8.0]
    s = make_sample(values, seed=123)
    q = int(np.random.default_rng([123, 7]).integers(0, len(values)))
    got = by_task(build_prompts(s, ("csv",), 2, {}, tasks=tasks.TASKS))
    (r,) = got["retrieval"]
    assert r.expected == {
        "value": float(f"{values[q]:.2f}"),
        "date": str(D0 + dt.timedelta(days=q)),
    }
    assert r.quadrant == ref_quadrant(q, 11) and r.options == () and r.length == 11
    (lo,) = got["arithmetic_min"]
    (hi,) = got["arithmetic_max"]
    assert lo.expected == {"value": 0.5, "dates": ["2020-02-07"]} and lo.quadrant == ref_quadrant(
        8, 11
    )
    assert hi.expected == {"value": 9.0, "dates": ["2020-02-03", "2020-02-04"]}
    assert hi.quadrant == ref_quadrant(5, 11) == 2  # the raw maximum 9.004 is day 5
    assert "minimum" in lo.text and "maximum" in hi.text
    assert "search" not in got  # search is asked of position sets only
    # over many seeds the queried day covers day 0 and the last day too
    days = set()
    for seed in range(40):
        s = make_sample(values, seed=seed)
        (r,) = build_prompts(s, ("csv",), 2, {}, tasks=("retrieval",))
        q = int(np.random.default_rng([seed, 7]).integers(0, len(values)))
        assert r.expected["date"] == str(D0 + dt.timedelta(days=q))
        days.add(q)
    assert {0, 10} <= days


def test_position_prompts_ask_about_the_labelled_query_and_extreme():
    for kind in ("outlier", "monotone"):
        for index in range(8):
            s = g.generate_sample(kind, "test", index, 3, position_length=21)
            got = by_task(build_prompts(s, ("csv",), 2, {}))
            assert set(got) == {"retrieval", f"arithmetic_{s.labels['extreme']}", "search"}
            q = s.labels["query_index"]
            (r,) = got["retrieval"]
            assert r.expected["date"] == str(s.dates[q]) and r.quadrant == ref_quadrant(q, 21)
            (a,) = got[f"arithmetic_{s.labels['extreme']}"]
            at = int(np.argmax(s.values) if s.labels["extreme"] == "max" else np.argmin(s.values))
            assert a.quadrant == ref_quadrant(at, 21)


def ref_search(sample, decimals):
    printed = [f"{v:.{decimals}f}" for v in sample.values]
    if (sample.index // 8) % 2 == 0:
        q = sample.labels["query_index"]
        return "yes", printed[q], ref_quadrant(q, sample.length)
    levels = sorted({float(p) for p in printed})
    mids = [f"{(a + b) / 2:.{decimals}f}" for a, b in zip(levels, levels[1:], strict=False)]
    gaps = [m for m in mids if m not in printed] or [f"{levels[-1] + 10**-decimals:.{decimals}f}"]
    pick = int(np.random.default_rng([sample.seed, 11]).integers(0, len(gaps)))
    return "no", gaps[pick], None


def test_search_asks_present_values_on_even_replicates_and_unprinted_midpoints_otherwise():
    seen = set()
    for index in (0, 3, 7, 8, 12, 15, 16, 24, 31):
        s = g.generate_sample("brownian", "test", index, 9, position_length=40)
        (p,) = build_prompts(s, ("csv",), 2, {}, tasks=("search",))
        answer, value, quadrant = ref_search(s, 2)
        assert p.expected == {"answer": answer, "value": float(value)} and p.quadrant == quadrant
        assert f"Does the value {value} appear" in p.text and p.options == ("yes", "no")
        seen.add(answer)
    assert seen == {"yes", "no"}
    # a coarse series: every midpoint rounds onto a printed value -> just above the maximum
    s = make_sample([1.0, 2.0, 3.0, 2.0], dataset="outlier", labels={"query_index": 1}, index=8)
    (p,) = build_prompts(s, ("csv",), 0, {}, tasks=("search",))
    assert p.expected == {"answer": "no", "value": 4.0}
    s = make_sample([1.0, 2.0, 4.0, 2.0], dataset="outlier", labels={"query_index": 1}, index=9)
    (p,) = build_prompts(s, ("csv",), 0, {}, tasks=("search",))
    assert p.expected == {"answer": "no", "value": 3.0}  # 1.5 -> "2" is printed; 3 is not
    s = make_sample([1.0, 2.0, 4.0, 2.0], dataset="outlier", labels={"query_index": 2}, index=17)
    (p,) = build_prompts(s, ("csv",), 0, {}, tasks=("search",))
    assert p.expected == {"answer": "yes", "value": 4.0} and p.quadrant == 3


def test_matching_options_hold_the_own_description_at_a_seeded_letter():
    """Draw order of the question stream (seed, 7): the retrieval day, then for intra 3 of
    the other series and the slot, then for cross 3 other datasets, a series of each and
    the slot."""
    pool = {
        d: [make_sample(np.arange(6.0) + i, dataset=d, index=i, seed=40 + i) for i in range(4)]
        for d in ("trend", "seasonality", "anomalies", "volatility", "brownian")
    }
    for i, s in enumerate(pool["trend"]):
        rng = np.random.default_rng([s.seed, 7])
        rng.integers(0, s.length)
        others = [o for o in pool["trend"] if o.series_key != s.series_key]
        picks = [others[j] for j in rng.choice(len(others), 3, replace=False)]
        slot = int(rng.integers(0, 4))
        intra = [f"{o.qualitative} {o.quantitative}" for o in picks]
        intra.insert(slot, f"{s.qualitative} {s.quantitative}")
        intra_answer = "ABCD"[slot]
        datasets = ["seasonality", "anomalies", "volatility"]
        chosen = [datasets[j] for j in rng.choice(3, 3, replace=False)]
        cross = [pool[d][int(rng.integers(0, 4))].qualitative for d in chosen]
        slot = int(rng.integers(0, 4))
        cross.insert(slot, s.qualitative)
        got = by_task(build_prompts(s, ("csv",), 2, pool))
        for task, texts, answer in (
            ("matching_intra", intra, intra_answer),
            ("matching_cross", cross, "ABCD"[slot]),
        ):
            (p,) = got[task]
            assert p.expected == {"answer": answer} and p.options == ("A", "B", "C", "D")
            for letter, text in zip("ABCD", texts, strict=True):
                assert f"\n{letter}. {text}\n" in p.text + "\n", (i, task)
    # too few others: no matching question
    small = {"trend": pool["trend"][:3], "seasonality": pool["seasonality"]}
    got = by_task(build_prompts(pool["trend"][0], ("csv",), 2, small))
    assert "matching_intra" not in got and "matching_cross" not in got


def test_detection_and_classification_truths():
    cases = [
        ("volatility", "constant", {}, "no", "constant"),
        ("volatility", "none", {}, "no", "none"),
        ("volatility", "increasing", {}, "yes", "increasing"),
        ("trend", "quadratic_down", {}, "yes", "down"),
        ("trend", "none", {}, "no", None),
        ("cross_correlation", "negative_lagged", {}, "yes", "negative_lagged"),
        ("cross_correlation", "positive_direct", {}, "no", "positive_direct"),
        ("dynamic_correlation", "constant", {}, "no", None),
        ("dynamic_correlation", "correlated_first_half", {}, "yes", "correlated_first_half"),
        ("correlation", "none", {}, "no", None),
        ("correlation", "negative", {}, "yes", "negative"),
        ("seasonality", "none", {}, "no", None),
        ("seasonality", "shifting", {}, "yes", "shifting"),
        ("anomalies", "none", {}, "no", None),
        ("anomalies", "level_shift", {}, "yes", "level_shift"),
        ("structural_breaks", "none", {}, "no", None),
        ("structural_breaks", "regime_shift", {}, "yes", "regime_shift"),
        ("statistical_properties", "seasonal", {"fat_tails": 0, "stationary": 1}, None, "seasonal"),
    ]
    for dataset, sub, labels, detected, label in cases:
        values = np.zeros((6, 2)) if dataset in g.MULTIVARIATE else np.zeros(6)
        got = by_task(build_prompts(make_sample(values, dataset, sub, labels), ("csv",), 2, {}))
        if detected is not None:
            assert [p.expected["answer"] for p in got["detection"]] == [detected], (dataset, sub)
        if label is None:
            assert "classification" not in got
        else:
            (c,) = got["classification"]
            assert c.expected == {"answer": label} and label in c.options
            # the answer form names the first class as its example
            assert f"(for example: {c.options[0]})" in c.text
    s = make_sample(
        np.zeros(6), "statistical_properties", "fat_tailed", {"fat_tails": 1, "stationary": 0}
    )
    got = by_task(build_prompts(s, ("csv",), 2, {}))
    assert [(p.feature, p.expected["answer"]) for p in got["detection"]] == [
        ("fat_tails", "yes"),
        ("stationarity", "no"),
    ]


def test_prompt_keys_and_prompting_styles():
    s = make_sample(np.arange(8.0))
    zero, cot = build_prompts(s, ("csv",), 2, {}, tasks=("retrieval",), promptings=tasks.PROMPTINGS)
    assert cot.text.startswith(zero.text.rstrip("\n") + "\n") and cot.prompting == "cot"
    assert cot.text != zero.text and zero.prompt_key != cot.prompt_key
    blob = json.dumps(
        [zero.text, zero.task, zero.feature, zero.expected, zero.options], sort_keys=True
    )
    assert zero.prompt_key == hashlib.sha256(blob.encode()).hexdigest()[:20]
    assert tasks.with_prompting("abc\n\n", "zero_shot") == "abc\n\n"
    # no template given: the file prompts/cot.txt (after its version line) is appended
    raw = (Path(tasks.__file__).parent / "prompts" / "cot.txt").read_text(encoding="utf-8")
    assert tasks.with_prompting("abc\n\n", "cot") == "abc\n" + raw.split("\n", 1)[1]
    with pytest.raises(TsrateError, match="unknown prompting"):
        tasks.with_prompting("abc", "few_shot")
    assert zero.chat() == [{"role": "user", "content": zero.text}]


# --------------------------------------------------------------------------------------
# The chain-of-thought parser model (cot_parser.py), with a scripted stand-in model
# --------------------------------------------------------------------------------------


class ScriptedModel:
    system_id = "scripted"

    def __init__(self, replies):
        self.replies, self.asked = list(replies), []

    def complete_all(self, chats):
        self.asked.append(chats)
        return self.replies[: len(chats)] if len(self.replies) >= len(chats) else self.replies

    def fingerprint(self):
        return "fp1"


def scripted_parser(replies):
    parser = object.__new__(cot_parser.CotParser)
    parser.spec, parser.model, parser.system_id = "x:y", ScriptedModel(replies), "scripted"
    return parser


def test_question_of_drops_the_series_and_the_cot_instruction():
    s = make_sample(np.arange(8.0))
    zero, cot = build_prompts(s, ("csv",), 2, {}, tasks=("retrieval",), promptings=tasks.PROMPTINGS)
    tail = zero.text.split("```\n")[-1].strip()
    assert cot_parser.question_of(cot) == tail == cot_parser.question_of(zero)
    assert tail.startswith("Question:") and "2020-01-30," not in tail
    chat = cot_parser.extraction_chat(cot, "  so it is 3.  \n")
    assert len(chat) == 1 and chat[0]["role"] == "user"
    assert tail in chat[0]["content"] and "<<<\nso it is 3.\n>>>" in chat[0]["content"]


def test_rescue_asks_only_about_unparsed_cot_replies():
    s = make_sample(np.arange(8.0))
    (zero,) = build_prompts(s, ("csv",), 2, {}, tasks=("detection",))
    (cot,) = build_prompts(s, ("csv",), 2, {}, tasks=("detection",), promptings=("cot",))
    batch = [cot, cot, zero, cot, cot, cot]
    replies = ["it rises", "x\nAnswer: no", "maybe", None, "   ", "hmm"]
    first = [
        parse_reply(p.task, r, p.options, p.prompting) for p, r in zip(batch, replies, strict=True)
    ]
    parser = scripted_parser(["yes", "perhaps"])
    parsed, parsed_by, texts = parser.rescue(batch, replies, first)
    (chats,) = parser.model.asked
    assert (
        len(chats) == 2 and "it rises" in chats[0][0]["content"] and "hmm" in chats[1][0]["content"]
    )
    assert parsed_by == ["llm", "regex", None, None, None, None]
    assert texts == ["yes", None, None, None, None, "perhaps"]
    assert parsed[0].ok and parsed[0].answer == "yes" and parsed[1].answer == "no"
    assert not parsed[5].ok and parsed[5].error.startswith(
        first[5].error + "; the parser model's extraction: "
    )
    assert parsed[2] == first[2] and parsed[3] == first[3]
    # nothing to ask: the model is not called
    quiet = scripted_parser([])
    assert quiet.rescue(
        [cot],
        ["x\nAnswer: yes"],
        [parse_reply("detection", "x\nAnswer: yes", ("yes", "no"), "cot")],
    )[1] == ["regex"]
    assert quiet.model.asked == []
    # a model that loses replies is an error; a None extraction stays unparsed
    with pytest.raises(TsrateError, match="returned 1 replies for 2"):
        scripted_parser(["yes"]).rescue([cot, cot], ["a", "b"], [first[0], first[5]])
    with pytest.raises(ValueError):  # replies and parses must pair with the prompts
        scripted_parser(["yes"]).rescue([cot], ["a", "b"], [first[0], first[5]])
    parsed, parsed_by, texts = scripted_parser([None]).rescue([cot], ["hmm"], [first[5]])
    assert parsed_by == [None] and texts == [None] and not parsed[0].ok
    assert scripted_parser([]).label() == "scripted@fp1"
