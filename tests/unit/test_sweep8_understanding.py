"""Round 8 of the mutation sweep over the understanding suite (tests/planted/mutate.py; the
survivors are tests/planted/sweep8_understanding.json): what the older tests left open in
``formats.py``, ``analyst.py`` (lines 267-320) and ``tasks.py`` (from line 517); the
report's are in test_sweep8_understanding_report.py.

Each expectation is written out by hand from the documented layout or definition (Appendix
F's strings, moves after a fall or rise counted by hand, Pearson r stubbed at a tie), never
read from the product: a changed default, bound, index or comparison changes a checked value.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from tsrate.suites.understanding import analyst as an
from tsrate.suites.understanding import formats as fmts
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.tasks import build_prompts

DAY = [dt.date(2020, 1, 1)]

# --------------------------------------------------------------------------- formats.py

#: one row, value 1.5, printed with the documented default of 2 decimals ("1.50"): a
#: default of 1 prints "1.5", of 3 "1.500"
DEFAULT_DECIMALS = {
    "csv": "Date,Value\n2020-01-01,1.50\n",
    "plain": "Date:2020-01-01,Value:1.50",
    "tsv": "Date\tValue\n2020-01-01\t1.50\n",
    "json": '{"Date":"2020-01-01","Value":1.50}\n',
    "markdown": "|Date|Value|\n|---|---|\n|2020-01-01|1.50|\n",
    "spaces": "Date,Value\n2020-01-01,1 . 5 0\n",
    "context": "Date,Value\n2020-01-01,[1.50]\n",
    "symbol": "Date,Value,DirectionIndicator\n2020-01-01,1.50,→\n",
    "custom": "Date|Value\n2020-01-01|1.50\n",
}


@pytest.mark.parametrize("fmt", sorted(DEFAULT_DECIMALS))
def test_every_format_function_prints_two_decimals_by_default(fmt):
    """Each format function called without ``decimals`` (and format_series) prints two
    places, as the module docstring says."""
    function = getattr(fmts, f"format_{fmt}")
    assert function(DAY, {"Value": [1.5]}) == DEFAULT_DECIMALS[fmt]
    assert fmts.format_series(fmt, DAY, {"Value": [1.5]}) == DEFAULT_DECIMALS[fmt]


@pytest.mark.parametrize("fmt", sorted(DEFAULT_DECIMALS))
def test_a_one_row_series_reads_back(fmt):
    """A series of a single row (json reads its column names from the first record: there
    is no second one)."""
    dates, columns = fmts.parse_formatted(fmt, DEFAULT_DECIMALS[fmt])
    assert dates == DAY and columns == {"Value": [1.5]}


# --------------------------------------------------------------------------- analyst.py


def prices(changes):
    """A series whose day-to-day changes are exactly ``changes`` (integers: exact floats)."""
    return np.concatenate([[0.0], np.cumsum(changes)])


def test_leverage_counts_a_move_after_a_flat_day_as_after_a_rise():
    """The move after an unchanged day (change 0) belongs to the after-rise group (``>= 0``).
    Changes 0, 4, -1, 3, 1 repeated 8 times: after a fall (-1) comes 3 each time (8 moves,
    mean 3); after a change >= 0 come 4, 1, 1, 0 per block plus 0 at each block edge: 31
    moves summing 4*8 + 8 + 8 = 48, mean 48/31 = 1.548; 3 > 2 x 1.548 fails: no leverage.
    Leaving out the moves after a 0 (strictly rising days only): 23 moves, mean 16/23, and
    3 > 1.39 would call it leverage."""
    changes = np.tile([0.0, 4.0, -1.0, 3.0, 1.0], 8)
    after = np.abs(changes[1:][changes[:-1] >= 0])
    assert after.size == 31 and after.sum() == 48
    assert an.volatility_kind(prices(changes)) != "leverage"


def test_leverage_needs_strictly_more_than_twice_the_after_rise_move():
    """After each fall of 1 a rise of 2, after each rise a fall of 1: the mean move after a
    fall (2) is exactly twice the mean move after a rise (1): not leverage (strict >)."""
    assert an.volatility_kind(prices(np.tile([-1.0, 2.0], 20))) != "leverage"


def test_leverage_needs_only_four_moves_after_a_fall():
    """Four falls (each followed by a move of 3) among rises of 1 (14 moves after a rise,
    mean 1): 3 > 2 x 1 with 4 > 3 moves after a fall, so leverage."""
    changes = np.array([1.0, 1, 1, -1, 3, 1, 1, -1, 3, 1, 1, -1, 3, 1, 1, -1, 3, 1, 1])
    assert (changes[:-1] < 0).sum() == 4 and (changes[:-1] >= 0).sum() == 14
    assert an.volatility_kind(prices(changes)) == "leverage"


@pytest.mark.parametrize("n", [2, 5, 9])
def test_cross_lag_of_series_too_short_for_any_lag_is_lag_zero(n):
    """Fewer than 10 days: no lag leaves 10 overlapping days, so no r is computed and the
    answer is the starting one, (lag 0, r 0) -- not some other lag."""
    rng = np.random.default_rng(n)
    a = rng.normal(0, 1, n)
    assert an.cross_lag(a, 2 * a + 1) == (0, 0.0)


def test_cross_lag_keeps_the_first_lag_unless_a_later_one_beats_it_by_more_than_1e_12(
    monkeypatch,
):
    """Lags are scanned from -8 up; a later lag replaces the best only when its |r| exceeds
    the best |r| + 1e-12 strictly. Pearson r stubbed: 0.5 at lag -8, then exactly
    0.5 + 1e-12 at lag -7 (a tie by the rule: lag -8 stays), or one float above it (lag -7
    wins); every other lag 0."""
    tie = 0.5 + 1e-12
    for second, want in ((tie, (-8, 0.5)), (np.nextafter(tie, 1.0), (-7, np.nextafter(tie, 1.0)))):
        values = iter([0.5, second] + [0.0] * 15)

        def fake_corrcoef(u, v, values=values):
            r = next(values)
            return np.array([[1.0, r], [r, 1.0]])

        monkeypatch.setattr(an.np, "corrcoef", fake_corrcoef)
        assert an.cross_lag(np.zeros(20), np.zeros(20)) == want
        monkeypatch.undo()


# --------------------------------------------------------------------------- tasks.py


def test_search_on_a_coarse_two_decimal_series_asks_one_step_above_the_maximum():
    """Printed 1.00, 1.01, 1.02, 1.01 (two decimals): the midpoints 1.005 and 1.015 print
    as 1.00 and 1.01 (binary doubles just below), both printed, so there is no gap and the
    absent value asked is the maximum plus one printed step, 1.02 + 0.01 = 1.03."""
    assert f"{1.005:.2f}" == "1.00" and f"{1.015:.2f}" == "1.01"
    s = g.Sample(
        "outlier",
        "test",
        8,  # replicate 8: (8 // 8) % 2 == 1, an absent value
        5,
        dt.date(2021, 1, 1),
        np.array([1.0, 1.01, 1.02, 1.01]),
        "max_q1",
        {"query_index": 1},
        "qual",
        "quant",
    )
    (p,) = build_prompts(s, ("csv",), 2, {}, tasks=("search",))
    assert p.expected == {"answer": "no", "value": 1.03}
    assert "Does the value 1.03 appear" in p.text


def a_sample(dataset, index, values=(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)):
    return g.Sample(
        dataset,
        "test",
        index,
        40 + index,
        dt.date(2021, 1, 1),
        np.asarray(values, dtype=float) + index,
        "linear_up",
        {},
        f"qual {dataset} {index}",
        f"quant {dataset} {index}",
    )


MATCHING = ("matching_intra", "matching_cross")


def test_a_cross_matching_question_needs_three_other_feature_datasets():
    """Four descriptions = the own one and one from each of three OTHER feature datasets.
    Beside the own dataset the pool holds two others with series, one empty and a position
    set (never a candidate): two candidates, too few -- intra matching is still asked (4
    series of the own dataset); with a third candidate the cross question appears."""
    own = [a_sample("trend", i) for i in range(4)]
    pool = {
        "trend": own,
        "seasonality": [a_sample("seasonality", i) for i in range(2)],
        "anomalies": [a_sample("anomalies", i) for i in range(2)],
        "volatility": [],
        "outlier": [a_sample("outlier", i) for i in range(2)],
    }
    tasks_asked = {p.task for p in build_prompts(own[0], ("csv",), 2, pool, tasks=MATCHING)}
    assert "matching_intra" in tasks_asked and "matching_cross" not in tasks_asked
    pool["volatility"] = [a_sample("volatility", 0)]
    tasks_asked = {p.task for p in build_prompts(own[0], ("csv",), 2, pool, tasks=MATCHING)}
    assert {"matching_intra", "matching_cross"} <= tasks_asked
