"""The report's paper sections: what this study is and how it differs from the paper's (the
page opens with it), and the paper's printed numbers beside this run's
(``marts.paper_comparison``). Pure functions of :class:`ReportData` returning HTML."""

from __future__ import annotations

import pandas as pd

from tsrate.html.charts import esc
from tsrate.html.page import details
from tsrate.robustness.presets import PRESETS
from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.numbers import num, source_note, table_html

#: the paper's study (Sections 4.2.2, 5.1.1-5.1.3) as `tsrate run --preset paper` runs it
PAPER = PRESETS["paper"]
#: the robustness paper's title, as the page cites it
PAPER_TITLE = (
    "Creating a Causally Grounded Rating Method for Assessing the Robustness of AI Models "
    "for Time-Series Forecasting"
)
#: how tsrate settles what the paper leaves open or states two ways (docs/ratings.md,
#: "Where tsrate departs from the paper"), one item per convention
CONVENTIONS = (
    "<b>WRS's t-test</b>: two-sample, two-sided Student t-test with pooled variance, a pair "
    "rejected at level c when p &lt; 1 − c (|t| &gt; t_crit; Algorithm 1's signed "
    "<i>t_crit &gt; t</i> would depend on which group is named first). Overlapping stride-1 "
    "windows count as independent observations, as in the paper, so the p-values are too "
    "small and most WRS scores sit at their maximum.",
    "<b>Confidence levels</b>: 95 / 75 / 60 % with weights 1 / 0.8 / 0.6, the paper's text "
    "(<code>seeds/confidence_levels.csv</code> as shipped); Algorithm 1 lists 95 / 70 / 60 % "
    "with the same weights.",
    "<b>Ties</b>: the distinct raw scores are split into L groups, so a better score never "
    "gets a worse rating and equal scores share one; systems all tied are rated by their "
    "distance from the ideal (all at the maximum WRS: L). Algorithm 5 splits the values, ties "
    "included: it would rate all-tied systems 1 and can give two scores one rating.",
    "<b>Matching</b>: logistic propensity on the one-hot confounder, 1-nearest neighbour "
    "with replacement, ties averaged, no caliper, ATE unless var "
    "<code>matching_estimand</code> says ATT. With a discrete confounder this is exact "
    "stratification (the propensity is the stratum's treated share) wherever a stratum holds "
    "both arms; a one-arm stratum is matched to the stratum of nearest propensity, however "
    "far, where a caliper would drop it.",
    "<b>APE and PIE %</b>: absolute, as the paper's eqs. 2-3 (its Algorithms 2-3 are "
    "signed). PIE % = ||APE_o| − |APE_m|| × 100 is 100 × a difference in the outcome's "
    "units, with the paper's R^max a price difference: it scales with the price level and is "
    "not a percentage.",
)


def mase_convention(context_length: object) -> str:
    """The conventions' MASE item, with the count of one-step changes of the study's context."""
    try:
        n = int(context_length)
    except (TypeError, ValueError):
        n = 0
    count = f"{n - 1} for this study's context of {n}" if n > 1 else "context length − 1"
    return (
        "<b>MASE</b>: mean |residual| over the horizon divided by the mean of the clean "
        f"context's one-step changes ({count}); the paper's eq. 5 writes t = 80 changes for a "
        "context of 80, which would need a value before the context."
    )


#: the paper's eleven systems (tsrate ids); tsrate cannot run Gemini/Phi-3 without endpoints
PAPER_SYSTEMS = (
    "arima",
    "random",
    "biased",
    "chronos",
    "moment",
    "gemini_numeric",
    "gemini_numeric_image",
    "phi3_numeric",
    "phi3_numeric_image",
    "vit_num_spec_precovid",
    "vit_num_spec_covid",
)
#: the paper's printed metric names, for the comparison table
PAPER_METRICS = {
    "wrs_industry": "WRS industry (WRSI)",
    "wrs_company": "WRS company (WRSC)",
    "pie_industry": "PIE % industry (PIEI)",
    "pie_company": "PIE % company (PIEC)",
    "ape_industry": "APE industry (APEI)",
    "ape_company": "APE company (APEC)",
    "smape": "SMAPE",
    "mase": "MASE",
    "sign_accuracy": "Sign accuracy %",
    "wrs": "WRS (both)",
    "ape": "APE (both)",
    "pie": "PIE % (both)",
}


def _listed(items) -> str:
    return ", ".join(esc(i) for i in items) or "none"


def rated_systems(data: ReportData) -> tuple[list[str], set[str]]:
    """The systems the report rates (those of ``marts.ratings``: the study's own and any
    other run's or import's of the study, the study's own first) and which of them came from
    an import (``system_catalog.origin``); the study's systems when no rating is known."""
    own = [str(s) for s in data.study.get("systems", [])]
    if data.ratings.empty or "system_id" not in data.ratings:
        return own, set()
    ids = [str(s) for s in pd.unique(data.ratings["system_id"].dropna())]
    rated = [s for s in own if s in ids] + sorted(s for s in ids if s not in own)
    imported: set[str] = set()
    if {"system_id", "origin"} <= set(data.systems.columns):
        origin = data.systems.set_index("system_id")["origin"].astype(str)
        imported = {s for s in rated if origin.get(s) == "imported"}
    return rated, imported


def study_differences(
    study: dict, rated: list[str] | None = None, imported: set[str] | frozenset = frozenset()
) -> list[str]:
    """One sentence per way the run's study differs from the paper's (empty: none).
    ``rated``: the systems rated (default: the study's); ``imported``: those of them whose
    predictions were imported, named apart from tsrate's own."""
    lines = []
    tickers = [str(t).upper() for t in study.get("tickers", [])]
    if sorted(tickers) != sorted(PAPER["study_tickers"]):
        lines.append(
            f"Tickers: {_listed(tickers)} here; the paper's are "
            f"{_listed(PAPER['study_tickers'])} (Section 5.1.3)."
        )
    period = (str(study.get("start", "?")), str(study.get("end", "?")))
    if period != (PAPER["study_start"], PAPER["study_end"]):
        lines.append(
            f"Period: {esc(period[0])} to {esc(period[1])} here; the paper's is "
            f"{PAPER['study_start']} to {PAPER['study_end']}."
        )
    shape = (study.get("context_length"), study.get("horizon"))
    if shape != (PAPER["context_length"], PAPER["horizon"]):
        lines.append(
            f"Window: context {esc(shape[0])}, horizon {esc(shape[1])} here; the paper's "
            f"t = {PAPER['context_length']}, T = {PAPER['horizon']} (Section 4.2.2)."
        )
    systems = [str(s) for s in (study.get("systems", []) if rated is None else rated)]
    theirs = [s for s in PAPER_SYSTEMS if s not in systems]
    ours = [s for s in systems if s not in PAPER_SYSTEMS and s not in imported]
    brought = [s for s in systems if s in imported]
    added = [
        *([f"tsrate's own {_listed(ours)}"] if ours else []),
        *([f"the imported {_listed(brought)}"] if brought else []),
    ]
    if theirs or added:
        lines.append(
            f"Systems: of the paper's eleven, this run lacks {_listed(theirs)}"
            + (f"; it adds {' and '.join(added)}" if added else "")
            + "."
        )
    perturbations = [str(p) for p in study.get("perturbations", [])]
    if sorted(perturbations) != sorted(PAPER["perturbations"]):
        lines.append(
            f"Perturbations: {_listed(perturbations)} here; the paper applies P0-P6 (each "
            "system only those its inputs take)."
        )
    return lines


def paper_study_section(data: ReportData) -> str:
    """What the study is and how it differs from the paper's: the page opens with this."""
    study = data.study
    rated, imported = rated_systems(data)
    lines = study_differences(study, rated, imported)
    what = (
        f"<p>This report rates {len(rated)} forecasting systems on "
        f"daily closes of {_listed(study.get('tickers', []))} from "
        f"{esc(study.get('start', '?'))} to {esc(study.get('end', '?'))} with the method of "
        f"the robustness paper, <i>{PAPER_TITLE}</i> (WRS, APE, PIE %, SMAPE, MASE, sign accuracy; ratings with "
        "L = 3). Its tables and charts are laid out in the shape of the paper's Tables 2, "
        "5, 6 and Figures 4-9; they are this run's numbers, not a reproduction of the "
        "paper's.</p>"
    )
    if lines:
        body = (
            "<p>How this study differs from the paper's:</p><ul>"
            + "".join(f"<li>{line}</li>" for line in lines)
            + "</ul><p>Run the paper's study with <code>tsrate run --preset paper --file "
            "PRICES.csv</code> (the bundled sample ends in 2022 and lacks META, GOOG, WFC and "
            "C).</p>"
        )
    else:
        body = (
            "<p>The run has the paper's tickers, period, window, perturbations and systems; "
            "its prices, seeds and model versions still differ from the paper's.</p>"
        )
    conventions = details(
        "Method conventions: how tsrate reads the paper where it is open or inconsistent",
        "<ul>"
        + "".join(
            f"<li>{item}</li>"
            for item in (*CONVENTIONS, mase_convention(study.get("context_length")))
        )
        + '</ul><p>Each with an example from the default study: docs/ratings.md, "Where '
        'tsrate departs from the paper".</p>',
    )
    return (
        '<section id="paper-study"><h2>This study and the paper\'s</h2>'
        f"{what}{body}{conventions}</section>"
    )


def _row_cells(row, run_id: str) -> list[str]:
    where = {
        "run_id": run_id,
        "paper_table": row.paper_table,
        "paper_label": row.paper_label,
        "perturbation_id": row.perturbation_id,
        "system_id": row.system_id,
    }

    def cell(column: str, integer: bool = False) -> str:
        value = getattr(row, column)
        if value is None or pd.isna(value):
            return "–"
        return num(float(value), "paper_comparison", column, where, integer=integer)

    note = "" if row.paper_note is None or pd.isna(row.paper_note) else esc(row.paper_note)
    return [
        f"<code>{esc(row.system_id)}</code> ({esc(row.paper_symbol)})",
        esc(PAPER_METRICS.get(row.metric, row.metric)),
        esc(row.perturbation_id),
        esc(row.paper_printed),
        cell("tsrate_value"),
        cell("difference"),
        cell("paper_rating", integer=True),
        cell("tsrate_rating", integer=True),
        note,
    ]


HEADER = [
    "System",
    "Metric",
    "Perturbation",
    "Paper",
    "tsrate",
    "Difference",
    "Paper rating",
    "tsrate rating",
    "Note",
]


def paper_comparison_section(data: ReportData) -> str:
    """The paper's printed numbers beside this run's, for the systems both have."""
    frame = data.paper_comparison
    parts = ["<section id=\"paper\"><h2>The paper's printed numbers beside this run's</h2>"]
    if frame is None or frame.empty:
        parts.append(
            "<p>No system of this run is one of the paper's (or marts.paper_comparison was "
            "not built), so there is nothing to set beside the paper's Tables 2, 5 and 6.</p>"
            "</section>"
        )
        return "".join(parts)
    same = bool(frame["same_study"].all())
    parts.append(
        "<p>"
        + (
            "This run has the paper's tickers and period, so the numbers answer the same "
            "question; prices, seeds and model versions still differ."
            if same
            else "This run's study is not the paper's (see the first section): the "
            "differences show how far apart the two studies land, not an error of either."
        )
        + " Difference = tsrate − paper. WRS values the paper prints as 4.6, 5.6, 5.9 or 6.9 "
        "cannot be matched by any run: every sum of the weights 1/0.8/0.6 is a multiple of "
        "0.2 (so 5.9 and 6.9 are out of reach), and with three pairs and nested rejections "
        "a pair adds 0, 0.6, 1.4 or 2.4 (so 4.6 and 5.6 are too). The 70 % of the paper's "
        "Algorithm 1 is a confidence level with the same weights: it reaches none of them; "
        "only weights 1/0.7/0.6, which the paper does not state, would reach all but 5.6. "
        "Table 2's averages here are "
        "over this run's perturbations (and both confounders for WRS, APE, PIE), the "
        "paper's over its own.</p>"
    )
    frame = frame.sort_values(["paper_table", "metric", "perturbation_id", "system_id"])
    averages = frame[frame["paper_table"] == "2"]
    if not averages.empty:
        parts.append("<h3>Averages per system, in the shape of Table 2</h3>")
        parts.append(
            table_html(HEADER, [_row_cells(r, data.run_id) for r in averages.itertuples()])
        )
    detail = frame[frame["paper_table"] != "2"]
    for table_id, title in (("5", "robustness, Table 5"), ("6", "accuracy, Table 6")):
        rows = detail[detail["paper_table"] == table_id]
        if rows.empty:
            continue
        body = table_html(HEADER, [_row_cells(r, data.run_id) for r in rows.itertuples()])
        parts.append(details(f"Per perturbation, {title} ({len(rows)} values)", body))
    parts.append(
        source_note(
            "paper_comparison", extra="the paper's values from <code>seeds.paper_values</code>"
        )
    )
    parts.append("</section>")
    return "".join(parts)
