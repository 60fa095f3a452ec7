"""Whether a study is large enough for its treatment draws: the expected empty arms.

The study check (:func:`tsrate.robustness.study.check_study`) warns, without stopping the
run, when the derived confounder distributions' draws are expected to leave an arm (P0 or a
treatment) without a window often enough (:data:`EMPTY_ARM_WARNING`). Pure arithmetic, no
pandas: the check stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping

#: expected draws with an empty arm above which the study check warns
EMPTY_ARM_WARNING = 0.05


def expected_empty_arm_draws(
    windows_by_ticker: Mapping[str, int],
    industry_of: Mapping[str, str],
    treatments: int,
    draws: int,
    max_company_distributions: int = 24,
    treated_weight: float = 2.0,
    control_weight: float = 1.0,
) -> float:
    """Expected number of (distribution, draw) pairs whose draw leaves an arm empty.

    The derived distributions (one per industry, one per company up to the bound) favour
    their value: a favoured window draws P0 with probability c / (c + k t) and each
    treatment t / (c + k t), every other window uniformly 1 / (k + 1) (c = control_weight,
    t = treated_weight, k = ``treatments``). An arm is empty with probability
    prod_i (1 - p_i) over the windows; the union over the k + 1 arms is bounded above by the
    sum (exact enough for a warning). Pure arithmetic, no pandas: the check stays fast.
    """
    if treatments < 1 or draws < 1:
        return 0.0
    uniform = 1.0 / (treatments + 1)
    favoured_total = control_weight + treatments * treated_weight
    arms = [control_weight / favoured_total] + [treated_weight / favoured_total] * treatments
    tickers = sorted(windows_by_ticker)
    industries = sorted({industry_of[t] for t in tickers})
    groups = [[t for t in tickers if industry_of[t] == i] for i in industries]
    companies = [[t] for t in tickers][: max(0, int(max_company_distributions))]
    expected = 0.0
    for favoured in [*groups, *companies]:
        n_favoured = sum(windows_by_ticker[t] for t in favoured)
        n_other = sum(windows_by_ticker.values()) - n_favoured
        p_empty = sum(min(1.0, (1 - arm) ** n_favoured * (1 - uniform) ** n_other) for arm in arms)
        expected += min(1.0, p_empty) * draws
    return expected


def empty_arm_warning(
    windows_by_ticker: Mapping[str, int],
    industry_of: Mapping[str, str],
    treatments: int,
    draws: int,
    max_company_distributions: int = 24,
) -> str | None:
    """One line when a study is too small for its treatment draws, else None."""
    expected = expected_empty_arm_draws(
        windows_by_ticker, industry_of, treatments, draws, max_company_distributions
    )
    if expected < EMPTY_ARM_WARNING:
        return None
    fewest = min(windows_by_ticker.values())
    return (
        f"the study is small for its {draws} treatment draws: with {fewest} windows per "
        f"ticker about {expected:.1f} draws are expected to leave an arm empty (no window "
        "drawn P0 or a treatment); they are left out of the APE/PIE means and counted in "
        "marts.robustness_scores.n_draws_left_out (widen the period or lower --stride)"
    )
