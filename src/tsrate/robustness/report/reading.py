"""The report's reading: one paragraph that reads the results in words (the most and least
robust systems, the perturbation that hurts most, the confounders), every number a traceable
mart value, followed inside the same section by its warnings (:mod:`.fallbacks`' windows a
system did not really forecast or copied, :mod:`.sources`' systems forecast on other prices).
A function of :class:`ReportData` returning HTML."""

from __future__ import annotations

import math

import pandas as pd

from tsrate.html.charts import esc
from tsrate.robustness.report import coverage, fallbacks, sources
from tsrate.robustness.report.data import ROBUSTNESS_METRICS, ReportData
from tsrate.robustness.report.numbers import num, source_note, system_order, tied_at

#: a mean sign accuracy (%) below this, far below chance (about 50 %), is explained as a
#: forecast that does not move
FLAT_SIGN_ACCURACY = 5.0


def flat_forecasts(traces: pd.DataFrame) -> set[str]:
    """The systems whose every plotted forecast (``marts.forecast_traces`` rows of the
    report's windows) holds one value over the horizon, to 1e-9 of its size (1e-9 absolute
    for values under 1)."""
    if traces.empty or not {"system_id", "forecast"} <= set(traces.columns):
        return set()
    keys = ["system_id", "ticker", "window_end_date", "perturbation_id"]
    spread = traces.groupby(keys)["forecast"].agg(["min", "max"])
    size = spread.abs().max(axis=1).clip(lower=1.0)
    flat = ((spread["max"] - spread["min"]) <= 1e-9 * size).groupby(level="system_id").all()
    return {str(system) for system, is_flat in flat.items() if is_flat}


def flat_sign_note(data: ReportData) -> str:
    """Under the summary table: why a system's sign accuracy is near 0 % (a forecast that
    does not move: sign(0) matches only an unchanged close), as the study section says why
    Biased's is near 100 %; "" when every mean sign accuracy is at least
    :data:`FLAT_SIGN_ACCURACY`."""
    summary = data.system_summary
    if summary.empty or "metric" not in summary.columns:
        return ""
    rows = summary[summary["metric"] == "sign_accuracy"].set_index("system_id")["avg_raw_score"]
    order = system_order(data)
    order += sorted(str(s) for s in rows.index if s not in order)  # a summary-only system
    low = [s for s in order if s in rows.index and rows[s] < FLAT_SIGN_ACCURACY]
    if not low:
        return ""
    flat = flat_forecasts(data.traces)

    def named(system: str) -> str:
        where = {"run_id": data.run_id, "system_id": system, "metric": "sign_accuracy"}
        value = num(float(rows[system]), "system_summary", "avg_raw_score", where)
        plotted = ", its plotted forecasts flat" if system in flat else ""
        return f"<code>{esc(system)}</code> ({value} %{plotted})"

    naive = " (naive repeats the last context value over the horizon)" if "naive" in low else ""
    return (
        '<p class="note flat-sign-note"><b>A sign accuracy near 0 % is a flat forecast, not '
        "a bug.</b> "
        + ", ".join(named(s) for s in low)
        + ": sign accuracy (the paper's eq. 6) counts a horizon step when the forecast's move "
        "has the sign of the actual's move. A forecast that holds one value"
        + naive
        + " moves by 0 at every step after the first (the first is measured from the clean "
        "context's last value), and sign(0) matches only a step where the close did not "
        "move, so it scores near 0 % where chance is about 50 %. It says the forecast does not "
        "move, not that it moves the wrong way: read such a system's SMAPE and MASE.</p>"
    )


def reading_warnings(data: ReportData) -> str:
    """The reading's warning paragraphs, each empty unless a system is flagged: fallback
    windows, then copied windows, then systems rated from forecasts on other prices."""
    return fallbacks.fallback_note(data) + sources.source_note(data)


def reading_paragraph(data: ReportData) -> str:
    """The reading section: one paragraph reading the results, every number a traceable mart
    value, then its source line and its :func:`reading_warnings`."""
    summary, per_perturbation = data.system_summary, data.perturbation_summary
    sentences: list[str] = []
    run = {"run_id": data.run_id}
    if summary.empty:
        return (
            '<section id="reading"><h2>Reading the results</h2><p>No ratings in this run.</p>'
            + reading_warnings(data)
            + "</section>"
        )
    systems = system_order(data)
    robustness = summary[summary["metric"].isin(ROBUSTNESS_METRICS)]
    means = robustness.groupby("system_id")["avg_rating"].mean().dropna().sort_values()
    if not means.empty:
        best_value, worst_value = means.iloc[0], means.iloc[-1]
        best = [s for s in systems if s in means.index and math.isclose(means[s], best_value)]
        worst = [s for s in systems if s in means.index and math.isclose(means[s], worst_value)]
        metrics = sorted(set(robustness["metric"]))
        fewer = coverage.fewer_robustness(data, [*best, *worst])

        def rating_of(system: str) -> str:
            return num(
                float(means[system]),
                "system_summary",
                "avg_rating",
                {**run, "system_id": system, "metric": metrics},
                agg="avg",
            )

        sentences.append(
            f"Across {len(systems)} rated systems, the most robust is "
            + " and ".join(f"<b>{esc(s)}</b> (mean robustness rating {rating_of(s)})" for s in best)
            + ", the least robust "
            + " and ".join(f"<b>{esc(s)}</b> ({rating_of(s)})" for s in worst)
            + " on a 1 (best) to "
            + num(
                float(summary["rating_levels"].max()),
                "system_summary",
                "rating_levels",
                run,
                agg="max",
                integer=True,
            )
            + (
                f" scale, averaged over the {len(metrics)} robustness metrics and the perturbations."
                if not fewer
                else " scale, averaged over the robustness metrics and perturbations each is rated on."
            )
        )
        sentences.extend(fewer)  # a system rated on fewer perturbations: on what it rests
    ape = per_perturbation[per_perturbation["metric"].isin(["ape_industry", "ape_company"])]
    means = ape.groupby("perturbation_id")["avg_raw_score"].mean().dropna()
    if not means.empty:  # a perturbation whose APE is undefined everywhere names nothing
        hurts, mildest = tied_at(means, max), tied_at(means, min)
        worst, apes = hurts[0], {**run, "metric": ["ape_company", "ape_industry"]}
        sentences.append(
            (
                f"The perturbation that hurts most is <b>{esc(worst)}</b>: its"
                if len(hurts) == 1
                else "The perturbations that hurt most are "
                + " and ".join(f"<b>{esc(p)}</b>" for p in hurts)
                + ": their"
            )
            + " mean perturbation effect (APE, industry and company confounders, over "
            "systems) is "
            + num(
                float(means[worst]),
                "perturbation_summary",
                "avg_raw_score",
                {**apes, "perturbation_id": worst},
                agg="avg",
            )
            + " price units"
            + (
                ", against "
                + num(
                    float(means[mildest[0]]),
                    "perturbation_summary",
                    "avg_raw_score",
                    {**apes, "perturbation_id": mildest[0]},
                    agg="avg",
                )
                + f" for the mildest, {' and '.join(esc(p) for p in mildest)}"
                if len(hurts) < len(means)
                else ""
            )
            + "."
        )
    smape = per_perturbation[per_perturbation["metric"] == "smape"].set_index("perturbation_id")
    raised = smape.drop(index="P0", errors="ignore")["avg_raw_score"].dropna()
    if "P0" in smape.index and not raised.empty:
        most = tied_at(raised, max)  # ties: every one, by perturbation id
        worst = most[0]
        sentences.append(
            "For accuracy, "
            + " and ".join(f"<b>{esc(p)}</b>" for p in most)
            + f" {'raises' if len(most) == 1 else 'raise'} the mean SMAPE over systems most: from "
            + num(
                float(smape.loc["P0", "avg_raw_score"]),
                "perturbation_summary",
                "avg_raw_score",
                {**run, "perturbation_id": "P0", "metric": "smape"},
            )
            + " on clean inputs to "
            + num(
                float(smape.loc[worst, "avg_raw_score"]),
                "perturbation_summary",
                "avg_raw_score",
                {**run, "perturbation_id": worst, "metric": "smape"},
            )
            + "."
        )
    # as the verdict compares them: systems rated on different perturbations have each
    # one's mean over the shared ones ([]: every system on every perturbation)
    means, shared, _ = coverage.compared_means(data, "smape")
    lowest = means.set_index("system_id")["avg_raw_score"]
    if not lowest.empty:
        # every system at the lowest mean, in seed order: the mart's rows have no order
        ranked = [s for s in systems if s in lowest.index]
        ranked += sorted(set(lowest.index) - set(ranked))
        tied = [s for s in ranked if math.isclose(lowest[s], lowest.min())]
        best = tied[0]
        who = (
            f"system by SMAPE is <b>{esc(best)}</b>"
            if len(tied) == 1
            else "systems by SMAPE are " + " and ".join(f"<b>{esc(s)}</b>" for s in tied)
        )
        where = {**run, "system_id": best, "metric": "smape"}
        mean = (
            num(float(lowest[best]), "system_summary", "avg_raw_score", where)
            if not shared
            else num(
                float(lowest[best]),
                "ratings",
                "raw_score",
                where | {"perturbation_id": shared},
                agg="avg",
            )
        )
        over = (
            "perturbations"
            if not shared
            else f"{' '.join(shared)}, the perturbation{'s' if len(shared) > 1 else ''} every "
            "compared system is rated on"
        )
        sentences.append(f"The most accurate {who} ({mean} averaged over {esc(over)}).")
    overall = data.confounder_comparison
    if not overall.empty:
        rows = overall[(overall["grouped_by"] == "all") & overall["measure"].isin(["ape", "pie"])]
        for row in rows.sort_values("measure").itertuples():
            if pd.isna(row.industry_avg) or pd.isna(row.company_avg):
                continue
            where = {**run, "grouped_by": "all", "measure": row.measure, "system_id": None}
            where["perturbation_id"] = None
            sentences.append(
                f"With {row.measure.upper()}, "
                + (
                    "industry as the confounder shows more bias than company"
                    if row.industry_avg > row.company_avg
                    else "company as the confounder shows at least as much bias as industry"
                )
                + " ("
                + num(row.industry_avg, "confounder_comparison", "industry_avg", where)
                + " vs "
                + num(row.company_avg, "confounder_comparison", "company_avg", where)
                + ")."
            )
    return (
        '<section id="reading"><h2>Reading the results</h2><p class="reading">'
        + " ".join(sentences)
        + "</p>"
        + source_note(
            "system_summary",
            "perturbation_summary",
            "confounder_comparison",
            extra="hover a number to see the mart row it comes from",
        )
        + reading_warnings(data)
        + flat_sign_note(data)
        + "</section>"
    )
