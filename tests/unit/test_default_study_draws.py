"""On the default study no treatment draw leaves an arm empty, so leaving such draws out
(tsrate.methods.causal.effects' rule) does not touch its estimates: every one of its APE /
PIE values is the mean of all var treatment_draws draws, as before the rule existed
(tests/unit/test_empty_arm_draws.py shows that mean is what study_effects returns when no
draw is empty). The draws here are the real ones (treatment_draws with the study's seed,
distributions and window counts); the study check agrees and does not warn."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.config import load_companies, project_vars
from tsrate.methods.causal.distributions import study_distributions, treatment_draws
from tsrate.robustness.empty_arms import empty_arm_warning, expected_empty_arm_draws

#: windows per ticker of the default study: 253 trading days from 2021-12-29 to 2022-12-28,
#: less the 80-day context and the 20-day horizon (918 windows over 6 tickers)
WINDOWS_PER_TICKER = 153


def default_units() -> tuple[pd.DataFrame, dict]:
    values = project_vars()
    tickers = [str(t) for t in values["study_tickers"]]
    companies = load_companies().set_index("ticker").loc[tickers, "industry"].astype(str)
    dates = pd.bdate_range(str(values["study_start"]), periods=WINDOWS_PER_TICKER)
    units = pd.DataFrame(
        [(t, companies[t], d) for t in sorted(tickers) for d in dates],
        columns=["ticker", "industry", "window_end_date"],
    )
    return units, values


def test_no_draw_of_the_default_study_leaves_an_arm_empty():
    units, values = default_units()
    perturbations = [str(p) for p in values["perturbations"]]
    distributions = study_distributions(units[["ticker", "industry"]].drop_duplicates())
    draws = int(values["treatment_draws"])
    seed = int(values["causal_seed"])
    assert len(units) == 918 and draws == 16
    counted = 0
    for r in range(draws):
        drawn = treatment_draws(units, distributions, perturbations, seed, draw=r)
        for draw in drawn.draws:
            assigned = np.asarray(drawn.perturbations)[draw.codes]
            arms = {p: int((assigned == p).sum()) for p in perturbations}
            assert min(arms.values()) > 0, (r, draw.distribution, arms)
            counted += 1
    assert counted == draws * len(distributions)


def test_the_study_check_does_not_warn_on_the_default_study():
    units, values = default_units()
    per_ticker = units.groupby("ticker").size().to_dict()
    industry = units.drop_duplicates("ticker").set_index("ticker")["industry"].to_dict()
    treatments = len(values["perturbations"]) - 1
    draws = int(values["treatment_draws"])
    assert expected_empty_arm_draws(per_ticker, industry, treatments, draws) < 1e-6
    assert empty_arm_warning(per_ticker, industry, treatments, draws) is None
