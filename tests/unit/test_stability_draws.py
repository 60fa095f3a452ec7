"""rating_stability resamples the PUBLISHED APE/PIE estimator (issue 25 item 3).

The published APE_m / PIE % of a system x treatment x confounder is the mean over every
treatment draw (var treatment_draws) of each distribution's estimate, then the worst case
over the confounder's distributions (perturbation_effects -> perturbation_effect_scores).
Here :func:`tsrate.robustness.marts.stability.effect_resamples` is checked

* with every multiplicity 1 against the published path itself (study_effects +
  effect_scores), and
* on random block resamples against an INDEPENDENT slow computation: units copied as often
  as their date was drawn, propensity = the stratum's treated share counted unit by unit,
  1-nearest-neighbour matching with ties averaged written as a plain loop, the mean over the
  draws that have both arms, the max |.| over distributions.

A stability that kept one draw fixed, or weighted a date wrongly, fails the second check.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.effect_study import (
    DRAWS,
    PERTS,
    SEED,
    SETTINGS,
    effect_inputs,
    published_effects,
)
from tsrate.methods.causal.distributions import CONTROL
from tsrate.methods.causal.effects import draw_matrix
from tsrate.methods.ratings import bootstrap_summary, date_multiplicities
from tsrate.platform.marts_io import Units
from tsrate.robustness.marts.stability import effect_resamples


def _slow_ape_pie(y, codes, strata, w, treat, control):
    """One draw, one distribution, one treatment: APE_m (ATE) and PIE % of units weighted
    by ``w`` (a unit of weight m stands for m copies), by a plain loop; NaN without an arm."""
    units = [i for i in range(len(y)) if w[i] > 0 and codes[i] in (treat, control)]
    t_units = [i for i in units if codes[i] == treat]
    c_units = [i for i in units if codes[i] == control]
    if not t_units or not c_units:
        return np.nan, np.nan
    share = {}
    for s in {strata[i] for i in units}:
        n_t = sum(w[i] for i in t_units if strata[i] == s)
        n_c = sum(w[i] for i in c_units if strata[i] == s)
        share[s] = n_t / (n_t + n_c)

    def matched_mean(i, pool):
        gaps = [abs(share[strata[i]] - share[strata[j]]) for j in pool]
        best = min(gaps)
        near = [j for j, g in zip(pool, gaps, strict=True) if g <= best + 1e-12]
        return sum(w[j] * y[j] for j in near) / sum(w[j] for j in near)

    total = sum(w[i] * (y[i] - matched_mean(i, c_units)) for i in t_units)
    total += sum(w[j] * (matched_mean(j, t_units) - y[j]) for j in c_units)
    ape_m = total / sum(w[i] for i in units)
    mean_t = sum(w[i] * y[i] for i in t_units) / sum(w[i] for i in t_units)
    mean_c = sum(w[j] * y[j] for j in c_units) / sum(w[j] for j in c_units)
    return ape_m, abs(abs(mean_t - mean_c) - abs(ape_m)) * 100.0


def _slow_scores(errors, distributions, weights_of_date, *, draws=DRAWS):
    """metric -> {(system, treatment): score} by the slow loop, mean over ``draws`` draws."""
    units = Units(errors)
    labels = sorted(PERTS)
    meta, matrix = draw_matrix(units.frame, distributions, labels, SEED, draws)
    n_dist = len(meta)
    w = weights_of_date[units.day_of_unit]
    out: dict[str, dict[tuple[str, str], float]] = {}
    for system in ("flat", "moved"):
        rows = errors[errors["system_id"] == system]
        grid = rows.pivot_table(
            index=["ticker", "window_end_date"],
            columns="perturbation_id",
            values="max_abs_residual",
        )
        for treatment in ("P1", "P2"):
            per_dist: dict[str, list[tuple[float, float]]] = {}
            for d in range(n_dist):
                confounder = str(meta.loc[d, "confounder"]).replace("ticker", "company")
                column = "ticker" if confounder == "company" else "industry"
                strata = units.frame[column].to_numpy()
                values = []
                for r in range(draws):
                    codes = matrix[r * n_dist + d]
                    y = np.array(
                        [
                            grid.loc[(t, pd.Timestamp(day)), labels[c]]
                            for t, day, c in zip(
                                units.frame["ticker"],
                                units.frame["window_end_date"],
                                codes,
                                strict=True,
                            )
                        ]
                    )
                    values.append(
                        _slow_ape_pie(
                            y, codes, strata, w, labels.index(treatment), labels.index(CONTROL)
                        )
                    )
                ape = np.nanmean([v[0] for v in values])
                pie = np.nanmean([v[1] for v in values])
                per_dist.setdefault(confounder, []).append((ape, pie))
            for confounder, pairs in per_dist.items():
                out.setdefault(f"ape_{confounder}", {})[(system, treatment)] = max(
                    abs(a) for a, _ in pairs
                )
                out.setdefault(f"pie_{confounder}", {})[(system, treatment)] = max(
                    p for _, p in pairs
                )
    return out


def test_point_of_the_resampling_is_the_published_score():
    errors, sets, distributions, dates = effect_inputs()
    effects, scores = published_effects(errors, sets, distributions)
    resamples = effect_resamples(
        errors, effects, 0, sets, distributions, "r1", dates, np.ones((1, dates.size)), SETTINGS
    )
    published = scores.set_index(["metric", "system_id", "perturbation_id"])["raw_score"]
    assert set(resamples) == {"ape_company", "ape_industry", "pie_company", "pie_industry"}
    for metric, (keys, boot) in resamples.items():
        index = pd.MultiIndex.from_arrays(
            [[metric] * len(keys), keys["system_id"], keys["perturbation_id"]]
        )
        np.testing.assert_allclose(boot[0], published.reindex(index).to_numpy(), rtol=1e-10)


def test_resamples_equal_the_slow_mean_over_every_draw():
    errors, sets, distributions, dates = effect_inputs()
    effects, _ = published_effects(errors, sets, distributions)
    weights = date_multiplicities(dates.size, 4, 3, seed=9)
    resamples = effect_resamples(
        errors, effects, 0, sets, distributions, "r1", dates, weights, SETTINGS
    )
    one_draw = None
    for b in range(weights.shape[0]):
        slow = _slow_scores(errors, distributions, weights[b])
        for metric, (keys, boot) in resamples.items():
            expected = [slow[metric][(s, t)] for s, t, _ in keys.itertuples(index=False)]
            np.testing.assert_allclose(boot[b], expected, rtol=1e-9, err_msg=f"{metric} {b}")
        if b == 0:
            one_draw = _slow_scores(errors, distributions, weights[b], draws=1)
    # the check can fail: draw 0 alone (the old stability) differs from the mean over draws
    keys, boot = resamples["ape_industry"]
    alone = [one_draw["ape_industry"][(s, t)] for s, t, _ in keys.itertuples(index=False)]
    assert not np.allclose(boot[0], alone, rtol=1e-6)


def test_a_planted_weight_error_is_caught():
    # resampling with the dates' multiplicities shifted by one date is a different estimate
    errors, sets, distributions, dates = effect_inputs()
    effects, _ = published_effects(errors, sets, distributions)
    weights = date_multiplicities(dates.size, 4, 1, seed=2)
    keys, boot = effect_resamples(
        errors, effects, 0, sets, distributions, "r1", dates, np.roll(weights, 1, axis=1), SETTINGS
    )["ape_company"]
    slow = _slow_scores(errors, distributions, weights[0])["ape_company"]
    expected = [slow[(s, t)] for s, t, _ in keys.itertuples(index=False)]
    assert not np.allclose(boot[0], expected, rtol=1e-6)


def test_noise_of_zero_is_zero_in_resamples_and_interval_ends():
    groups = pd.DataFrame({"system_id": ["a", "b"], "perturbation_id": ["P1", "P1"]})
    point = np.array([0.0, 2.0])
    boot = np.array([[4e-15, 2.1], [-3e-14, 1.9], [2e-14, 2.0]])
    out = bootstrap_summary(groups, point, boot, 3, 0.95)
    a = out[(out["system_id"] == "a")].iloc[0]
    assert a["ci_low"] == 0.0 and a["ci_high"] == 0.0
    assert a["rating"] == 1
    # the noise is snapped before rating: 'a' is rated 1 (the ideal) in every resample
    assert out.loc[(out["system_id"] == "a") & (out["rating_level"] == 1), "share"].item() == 1.0
    # a real small value is kept
    small = bootstrap_summary(groups, np.array([0.0, 2.0]), np.array([[1e-9, 2.0]]), 3, 0.95)
    assert small.loc[small["system_id"] == "a", "ci_high"].iloc[0] == pytest.approx(1e-9)


def test_an_interval_that_misses_its_point_is_widened_to_it_only_there():
    groups = pd.DataFrame({"system_id": ["a", "b"], "perturbation_id": ["P1", "P1"]})
    point = np.array([0.1, 2.0])
    # every resample of 'a' lies above its point (a worst case biased upward)
    boot = np.column_stack([np.linspace(0.2, 0.8, 41), np.linspace(1.5, 2.5, 41)])
    out = bootstrap_summary(groups, point, boot, 3, 0.95).drop_duplicates("system_id")
    a, b = out.set_index("system_id").loc["a"], out.set_index("system_id").loc["b"]
    assert a["ci_low"] == 0.1  # widened down to the point
    assert a["ci_high"] == pytest.approx(np.quantile(boot[:, 0], 0.975))
    # 'b' is unchanged: the plain percentile interval
    assert [b["ci_low"], b["ci_high"]] == pytest.approx(np.quantile(boot[:, 1], [0.025, 0.975]))


def test_chunked_products_give_the_same_resamples(monkeypatch):
    # one distribution per matrix product (the chunking used on large studies) changes nothing
    import tsrate.methods.stability as methods

    errors, sets, distributions, dates = effect_inputs()
    effects, _ = published_effects(errors, sets, distributions)
    weights = date_multiplicities(dates.size, 4, 5, seed=4)
    args = (errors, effects, 0, sets, distributions, "r1", dates, weights, SETTINGS)
    whole = effect_resamples(*args)
    monkeypatch.setattr(methods, "CHUNK_COLUMNS", 1)
    chunked = effect_resamples(*args)
    for metric, (keys, boot) in whole.items():
        pd.testing.assert_frame_equal(chunked[metric][0], keys)
        np.testing.assert_allclose(chunked[metric][1], boot, rtol=1e-12)  # BLAS blocking
