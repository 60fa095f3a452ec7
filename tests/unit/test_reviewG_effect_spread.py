"""Review G: the spread of a worst-case APE / PIE score is the standard error of the mean
over draws of the distribution that gives the score, over THAT distribution's draws.

A small study leaves some treatment draws out of a distribution's mean (an arm was
empty), so distributions can average different numbers of draws. The score's spread took
the worst distribution's standard deviation but divided it by the square root of the most
draws of ANY distribution: a worst distribution averaged over 2 draws, beside one over 4,
had its standard error understated by sqrt(2), and two systems read as separable when
their scores differed by less than their noise."""

from __future__ import annotations

import math
import statistics

import pandas as pd
import pytest

from tests.support.effect_rows import effect_row
from tsrate.methods.causal.effects import effect_scores

# per distribution: the draws of APE_m and PIE % (b has two draws left out)
DRAWS = {
    "a": {"ape": [1.0, 3.0, 5.0, 7.0], "pie": [10.0, 20.0, 30.0, 40.0]},
    "b": {"ape": [-8.0, -4.0], "pie": [50.0, 70.0]},
}
TREATMENT_DRAWS = 4


def effect_rows() -> pd.DataFrame:
    rows = []
    for dist, draws in DRAWS.items():
        ape, pie = draws["ape"], draws["pie"]
        rows.append(
            effect_row(
                dist,
                n_treated=3,
                n_control=3,
                ape_observational=statistics.mean(ape),
                ape_matched=statistics.mean(ape),
                ape_oracle=statistics.mean(ape),
                matching_error=0.0,
                pie_percent=statistics.mean(pie),
                n_strata=2,
                n_draws=len(ape),
                n_draws_left_out=TREATMENT_DRAWS - len(ape),
                ape_observational_sd=statistics.stdev(ape),
                ape_matched_sd=statistics.stdev(ape),
                pie_percent_sd=statistics.stdev(pie),
            )
        )
    return pd.DataFrame(rows)


def standard_error(values: list[float]) -> float:
    return statistics.stdev(values) / math.sqrt(len(values))


def test_the_worst_distributions_spread_is_over_its_own_draws() -> None:
    scores = effect_scores(effect_rows(), "max").set_index("measure")
    # |mean APE_m|: a 4, b 6 -> b is the worst; its 2 draws give the standard error
    assert scores.loc["ape", "worst_distribution_id"] == "b"
    assert scores.loc["ape", "raw_score"] == 6.0
    assert scores.loc["ape", "score_spread"] == pytest.approx(
        standard_error(DRAWS["b"]["ape"]), rel=1e-12
    )
    # mean PIE %: a 25, b 60 -> b again, over its 2 draws
    assert scores.loc["pie", "worst_distribution_id"] == "b"
    assert scores.loc["pie", "raw_score"] == 60.0
    assert scores.loc["pie", "score_spread"] == pytest.approx(
        standard_error(DRAWS["b"]["pie"]), rel=1e-12
    )


def test_a_worst_distribution_with_every_draw_keeps_its_spread() -> None:
    rows = effect_rows()
    # make a the worst: |mean APE_m| 16 over its 4 draws
    rows.loc[rows["distribution_id"] == "a", "ape_matched"] = 16.0
    scores = effect_scores(rows, "max").set_index("measure")
    assert scores.loc["ape", "worst_distribution_id"] == "a"
    assert scores.loc["ape", "score_spread"] == pytest.approx(
        standard_error(DRAWS["a"]["ape"]), rel=1e-12
    )
