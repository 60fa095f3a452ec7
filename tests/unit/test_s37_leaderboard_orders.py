"""The leaderboard section says when win rate and skill score order the systems differently,
naming them and why (report/probabilistic.py's order_note, over hand-built rows of
marts.leaderboard); and marts.leaderboard's own statistics do disagree so on errors made for
it (a system that wins most tasks narrowly and loses one badly)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tsrate.robustness.marts.leaderboard import skill_scores, win_rates
from tsrate.robustness.report.numbers import num
from tsrate.robustness.report.probabilistic import (
    discordant_pairs,
    leaderboard_section,
    order_note,
)


def board(rows: dict[str, tuple[float, float]], metric: str = "mase") -> pd.DataFrame:
    """Leaderboard rows of scope all: {system: (skill_score, win_rate)}."""
    return pd.DataFrame(
        [
            {
                "run_id": "r1",
                "scope": "all",
                "metric": metric,
                "system_id": system,
                "skill_score": skill,
                "skill_score_lower": skill - 0.05,
                "skill_score_upper": skill + 0.05,
                "win_rate": win,
                "win_rate_lower": win - 0.1,
                "win_rate_upper": win + 0.1,
                "average_rank": 1.0,
                "n_tasks": 8,
                "num_failures": 0,
                "n_tasks_zero_baseline": 0,
                "baseline_system_id": "seasonal_naive",
                "reason": None,
            }
            for system, (skill, win) in rows.items()
        ]
    )


def plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_orders_that_agree_say_nothing():
    agree = board({"a": (0.3, 0.8), "b": (0.1, 0.5), "c": (-0.2, 0.2)})
    assert discordant_pairs(agree) == []
    assert order_note(agree, "mase", num) == ""
    # a tie in either order is no disagreement
    tied = board({"a": (0.1, 0.5), "b": (0.3, 0.5), "c": (0.05, 0.2)})
    assert order_note(tied, "mase", num) == ""


def test_the_best_win_rate_ranked_lower_on_skill_is_named_with_its_rank():
    rows = board({"naive": (0.02, 0.7), "x": (0.2, 0.5), "y": (0.1, 0.3)})
    assert discordant_pairs(rows) == [("naive", "x"), ("naive", "y")]
    text = plain(order_note(rows, "mase", num))
    assert "naive has the best win rate (0.7) but ranks 3rd on skill score" in text
    assert "x has the best, 0.2" in text
    assert "more pair" not in text  # both pairs are naive's: said by its rank
    assert "counts the tasks a system wins against each other system" in text
    assert "wins many tasks narrowly and loses some badly ranks higher on win rate" in text
    # in the section, under the metric's table heading
    section = plain(leaderboard_section(rows, num))
    assert section.count("order the systems differently") == 1


def test_a_disagreement_lower_down_names_the_pair():
    rows = board({"a": (0.4, 0.9), "b": (0.1, 0.6), "c": (0.2, 0.4), "d": (0.0, 0.3)})
    assert discordant_pairs(rows) == [("b", "c")]
    text = plain(order_note(rows, "smape", num))
    assert "b has a higher win rate than c (0.6 against 0.4)" in text
    assert "but a lower skill score (0.1 against 0.2)" in text
    assert "more pair" not in text and "best win rate" not in text
    more = board({"a": (0.4, 0.9), "b": (0.1, 0.6), "c": (0.2, 0.4), "d": (0.3, 0.3)})
    assert len(discordant_pairs(more)) == 3  # b-c, b-d, c-d
    assert "disagree on 2 more pairs" in plain(order_note(more, "smape", num))


def test_unranked_rows_are_left_out():
    rows = board({"a": (0.3, 0.8), "b": (np.nan, 0.9), "c": (0.1, np.nan)})
    assert order_note(rows, "mase", num) == ""


def test_the_marts_statistics_disagree_on_narrow_wins_and_a_bad_loss():
    """Errors relative to the baseline over five tasks: 'narrow' beats 'steady' by 1 % on
    four and loses the fifth by a factor of 10; win rate puts narrow first, skill second."""
    narrow = [0.50, 0.50, 0.50, 0.50, 5.0]
    steady = [0.505, 0.505, 0.505, 0.505, 0.505]
    errors = np.array([narrow, steady]).T
    wins, skills = win_rates(errors), skill_scores(errors)
    assert wins[0] > wins[1] and skills[0] < skills[1]
    rows = board({"narrow": (skills[0], wins[0]), "steady": (skills[1], wins[1])})
    assert "narrow has the best win rate" in plain(order_note(rows, "mase", num))
