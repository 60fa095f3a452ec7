"""Report sections on how far the uncertainty of each system survives a perturbation
(marts.uncertainty_effects) and how relative each rating is to the systems rated with it
(marts.rating_leave_one_out). Tables only; every number is traceable to its mart row
through the ``num`` formatter the page passes in (tsrate.robustness.report.numbers.num)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from tsrate.html.charts import esc
from tsrate.robustness.report.probabilistic import float_value, table_html

UNCERTAINTY_OUTCOMES = {
    "wql": "WQL (weighted quantile loss)",
    "coverage_error_80": "miscalibration of the 80 % interval, |coverage − 0.8|",
}


def uncertainty_section(effects: pd.DataFrame, num: Callable[..., str]) -> str:
    """Which perturbation hurts which system's WQL and calibration, by how much beyond noise:
    the mean change over windows (perturbed − clean) with its 95 % interval over clusters of
    windows, the verdict, and the confounded APE estimate with its spread over draws."""
    parts = [
        '<section id="uncertainty"><h2>Robustness of uncertainty: which perturbation hurts '
        "which system's calibration</h2>"
    ]
    if effects.empty:
        parts.append("<p>No uncertainty effects in this snapshot.</p></section>")
        return "".join(parts)
    for outcome, label in UNCERTAINTY_OUTCOMES.items():
        block = effects[effects["outcome"] == outcome]
        if block.empty:
            continue
        rows = []
        for row in block.sort_values(["system_id", "perturbation_id"]).itertuples():
            where = {
                "system_id": row.system_id,
                "perturbation_id": row.perturbation_id,
                "outcome": outcome,
            }

            def cell(column: str, row=row, where=where) -> str:
                return num(float_value(getattr(row, column)), "uncertainty_effects", column, where)

            if pd.isna(row.beyond_noise):
                # a null reason reads as NaN from DuckDB: a float, truthy
                verdict = esc(row.reason if isinstance(row.reason, str) else "not tested")
            elif bool(row.beyond_noise):
                worse = float(row.mean_change) > 0
                verdict = "<b>hurts</b> (beyond noise)" if worse else "<b>helps</b> (beyond noise)"
            else:
                verdict = "within noise"
            rows.append(
                [
                    f"<code>{esc(row.system_id)}</code>",
                    esc(row.perturbation_id),
                    cell("mean_clean"),
                    cell("mean_perturbed"),
                    cell("mean_change"),
                    f"[{cell('change_ci_low')}, {cell('change_ci_high')}]",
                    verdict,
                    cell("coverage_80_change"),
                    f"{cell('ape_industry')} ± {cell('ape_industry_spread')}",
                ]
            )
        parts.append(f'<h3 data-outcome="{esc(outcome)}">{esc(label)} (lower is better)</h3>')
        parts.append(
            table_html(
                [
                    "System",
                    "P",
                    "Clean (P0)",
                    "Perturbed",
                    "Change",
                    "95 % interval",
                    "Verdict",
                    "80 % coverage change",
                    "APE (industry) ± spread over draws",
                ],
                rows,
            )
        )
    parts.append(
        '<p class="source">Source: <code>marts.uncertainty_effects</code> — change = mean over '
        "every window of the outcome under the perturbation minus on the clean input (the "
        "true effect, every window ran under both); the interval is a 95 % t interval "
        "centred on that change, with a cluster-robust standard error over clusters of "
        "windows (a ticker's windows within one horizon of each other), "
        "<i>beyond noise</i> when it excludes 0. The APE column is the confounded estimate "
        "rated in <code>marts.ratings</code> at outcomes <code>wql</code> and "
        "<code>coverage_error_80</code>, with its standard error over treatment draws. "
        "Systems without quantile forecasts say why.</p></section>"
    )
    return "".join(parts)


def leave_one_out_section(checks: pd.DataFrame, num: Callable[..., str]) -> str:
    """For each rating (paper's outcome and accuracy): whether removing one other system or
    adding one new system would change it, and which removals do."""
    parts = [
        '<section id="leave-one-out"><h2>How relative each rating is: one system removed or '
        "added</h2>"
    ]
    if checks.empty:
        parts.append("<p>No leave-one-out check in this snapshot.</p></section>")
        return "".join(parts)
    total = len(checks)
    removed = int(checks["changes_if_one_removed"].astype(bool).sum())
    added = int(checks["changes_if_one_added"].astype(bool).sum())
    parts.append(
        f"<p>Of {total} ratings, {removed} change when one other system is removed and "
        f"{added} could change when one new system joins. Ratings are relative to the systems "
        "rated together; a rating that moves with one system says as much about the set as "
        "about the system.</p>"
    )
    rows = []
    changing = checks[checks["changes_if_one_removed"].astype(bool)]
    for row in changing.sort_values(["metric", "perturbation_id", "system_id"]).itertuples():
        where = {
            "metric": row.metric,
            "perturbation_id": row.perturbation_id,
            "system_id": row.system_id,
        }

        def cell(column: str, row=row, where=where) -> str:
            value = getattr(row, column)
            return num(
                None if pd.isna(value) else float(value),
                "rating_leave_one_out",
                column,
                where,
                integer=True,
            )

        rows.append(
            [
                esc(row.metric),
                esc(row.perturbation_id),
                f"<code>{esc(row.system_id)}</code>",
                cell("rating"),
                f"{cell('rating_min_one_removed')}–{cell('rating_max_one_removed')}",
                esc(row.changed_by_removing if isinstance(row.changed_by_removing, str) else ""),
                f"{cell('rating_min_one_added')}–{cell('rating_max_one_added')}",
            ]
        )
    if rows:
        parts.append(
            table_html(
                [
                    "Metric",
                    "P",
                    "System",
                    "Rating",
                    "One removed",
                    "Changed by removing",
                    "One added",
                ],
                rows,
            )
        )
    parts.append(
        '<p class="source">Source: <code>marts.rating_leave_one_out</code> (every rating, '
        "also those no single removal changes), at the paper's outcome and the accuracy "
        "metrics; re-rated by the same rule as <code>marts.ratings</code>.</p></section>"
    )
    return "".join(parts)
