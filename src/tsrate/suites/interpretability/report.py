"""The interpretability report: prediction errors in the shape of Table 2 and the
sensitivity curves of Figures 14-17 (:mod:`.paper_shapes`), heatmaps of mean beta against
the ground truth (paper Figures 4, 6, 9, 11, 12), TCDF's retrieval shares, correctness and
ratings, in one offline HTML file.

:func:`heatmap_svg` is pure (matrix in, SVG out). :func:`write_report` reads the suite's
marts (``interp_*``) from a DuckDB file read-only and writes the HTML. Heatmap convention
(as the paper): rows = target series, columns = source series; darker = larger. Each panel
pair shows the model's mean over seeds beside the truth (normalised |coefficients| summed
over lags); the std over seeds is in every cell's tooltip. Alpha panels (paper Figures 5
and 10): rows = target, columns = lag 1..window (1 = most recent) of the target's own series.
A cell the model cannot attend to by construction (DA-RNN's beta diagonal: its input
attention never covers the target, so the 0 it stores is a structural zero, not a measured
one; ``interp_attention_summary.applicable`` false) is drawn as not applicable: blank with a
cross, named in the panel's caption, never as a 0.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from tsrate.html.charts import chart_name, figure
from tsrate.html.page import frame_table
from tsrate.suites.interpretability.baselines import best_blind_prior
from tsrate.suites.interpretability.paper_shapes import sensitivity_html, table_2_html
from tsrate.suites.publishing import check_snapshot, html_page, read_marts, write_html
from tsrate.suites.verdict import floor_share, not_rated_html, summary_table_html, verdict_html

#: a heatmap's cell side in pixels (smaller for large matrices)
CELL = 22
#: fill and mark of a not-applicable cell (:func:`heatmap_spec`'s ``not_applicable``)
NOT_APPLICABLE_FILL = "#ffffff"
NOT_APPLICABLE_MARK = "\u00d7"
#: the caption of a panel with not-applicable cells (DA-RNN's beta diagonal)
NOT_APPLICABLE_NOTE = (
    f"{NOT_APPLICABLE_MARK} = not applicable: DA-RNN's input attention never covers the "
    "target's own series, so its beta diagonal is 0 by construction (a structural zero, not "
    "a measured one)."
)


def heatmap_spec(
    matrix: np.ndarray,
    title: str,
    std: np.ndarray | None = None,
    top: float | None = None,
    first_col: int = 0,
    not_applicable: np.ndarray | None = None,
) -> dict:
    """A (rows x columns) heatmap as a Vega-Lite spec; NaN cells are drawn grey.

    Row i, column j holds ``matrix[i, j]`` (one data row per cell: ``row``, ``col``
    (0-based), ``label_col`` (from ``first_col``: 1 for lags), ``value``, ``std``);
    ``top`` is the value drawn darkest (default the matrix maximum). ``not_applicable``
    (boolean, same shape): cells the model cannot attend to by construction, drawn blank
    with a cross (:data:`NOT_APPLICABLE_MARK`) and ``not applicable`` in the tooltip, never
    coloured by their value."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2:
        raise ValueError("a heatmap needs a 2-D matrix")
    na = (
        np.zeros(matrix.shape, dtype=bool)
        if not_applicable is None
        else np.asarray(not_applicable, dtype=bool)
    )
    if na.shape != matrix.shape:
        raise ValueError("a heatmap's not_applicable mask needs the matrix's shape")
    matrix = np.where(na, np.nan, matrix)
    n_rows, n_cols = matrix.shape
    finite = matrix[np.isfinite(matrix)]
    top = float(top if top is not None else (finite.max() if finite.size else 1.0))
    cell = CELL if max(n_rows, n_cols) <= 20 else max(4, 440 // max(n_rows, n_cols))
    cells = []
    for i in range(n_rows):
        for j in range(n_cols):
            value = matrix[i, j]
            row = {
                "row": i,
                "col": j,
                "label_col": j + first_col,
                "missing": not np.isfinite(value),
            }
            if np.isfinite(value):
                row["value"] = float(value)
            if std is not None and np.isfinite(std[i, j]) and not na[i, j]:
                row["std"] = float(std[i, j])
            if na.any():
                row["not_applicable"] = bool(na[i, j])
                if na[i, j]:
                    row["missing"] = False
                    row["note"] = "not applicable (structural zero)"
            cells.append(row)
    tooltip = [{"field": "row", "type": "ordinal", "title": "target"},
               {"field": "label_col", "type": "ordinal", "title": "source" if not first_col else "lag"},
               {"field": "value", "type": "quantitative", "format": ".3g"}]  # fmt: skip
    if std is not None:
        tooltip.append({"field": "std", "type": "quantitative", "format": ".3g", "title": "std"})
    if na.any():
        tooltip.append({"field": "note", "type": "nominal", "title": "note"})
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.4.1.json",
        "title": {"text": title, "anchor": "start", "fontSize": 12},
        "data": {"values": cells},
        "width": cell * n_cols,
        "height": cell * n_rows,
        "mark": {"type": "rect", "stroke": "#ffffff", "strokeWidth": 0.5},
        "encoding": {
            "x": {"field": "label_col", "type": "ordinal", "title": None},
            "y": {"field": "row", "type": "ordinal", "title": None},
            "color": {
                "condition": {"test": "datum.missing", "value": "#eeeeee"},
                "field": "value",
                "type": "quantitative",
                "scale": {"domain": [0, top if top > 0 else 1], "range": ["#ffffff", "#212166"]},
                "legend": None,
            },
            "tooltip": tooltip,
        },
    }
    if not na.any():
        return spec
    # a layer of crosses over the blank not-applicable cells
    rect = {"mark": spec.pop("mark"), "encoding": spec.pop("encoding")}
    rect["encoding"]["color"]["condition"] = [
        {"test": "datum.not_applicable", "value": NOT_APPLICABLE_FILL},
        {"test": "datum.missing", "value": "#eeeeee"},
    ]
    cross = {
        "transform": [{"filter": "datum.not_applicable"}],
        "mark": {
            "type": "text",
            "text": NOT_APPLICABLE_MARK,
            "color": "#888888",
            "fontSize": max(6, int(cell * 0.7)),
        },
        "encoding": {
            "x": {"field": "label_col", "type": "ordinal", "title": None},
            "y": {"field": "row", "type": "ordinal", "title": None},
            "tooltip": tooltip,
        },
    }
    spec["layer"] = [rect, cross]
    return spec


_PANELS: list[int] = [0]


def heatmap_figure(matrix: np.ndarray, title: str, caption: str = "", **options) -> str:
    """:func:`heatmap_spec` as a figure of the page (a unique chart name per panel); a panel
    with not-applicable cells gets :data:`NOT_APPLICABLE_NOTE` as its caption (the legend of
    its crosses) unless ``caption`` is given."""
    _PANELS[0] += 1
    name = f"heatmap-{_PANELS[0]}-{chart_name(title)}"
    na = options.get("not_applicable")
    if not caption and na is not None and np.asarray(na, dtype=bool).any():
        caption = NOT_APPLICABLE_NOTE
    return figure(name, heatmap_spec(matrix, title, **options), caption, css="heatmap")


def _matrix(frame: pd.DataFrame, column: str) -> np.ndarray:
    n = int(max(frame["target_index"].max(), frame["source_index"].max())) + 1
    out = np.full((n, n), np.nan)
    out[frame["target_index"], frame["source_index"]] = frame[column]
    return out


def _not_applicable(frame: pd.DataFrame) -> np.ndarray:
    """(target x source) True where interp_attention_summary.applicable is false; a snapshot
    published before that column existed: DA-RNN's beta diagonal (its structural zero)."""
    if "applicable" in frame.columns:
        flag = ~frame["applicable"].astype("boolean").fillna(True).astype(bool)
    else:
        flag = (
            (frame["model_id"] == "darnn")
            & (frame["attention"] == "beta")
            & (frame["target_index"] == frame["source_index"])
        )
    return _matrix(frame.assign(_na=flag.astype(float)), "_na") == 1.0


def _lag_matrix(frame: pd.DataFrame, column: str) -> np.ndarray:
    """(target x lag) from alpha rows of each target's own series; column j = lag j + 1."""
    n = int(frame["target_index"].max()) + 1
    out = np.full((n, int(frame["lag"].max())), np.nan)
    out[frame["target_index"], frame["lag"].astype(int) - 1] = frame[column]
    return out


#: the command that rebuilds the suite's marts in a warehouse (and publishes them)
REBUILD = "tsrate suite interpretability build"

#: per mart, the columns this report reads (beyond these it reads what is there: columns
#: that came later, e.g. rating_reason, applicable or share_mc_se, are optional)
REQUIRED = {
    "interp_attention_summary": (
        "variant_id", "model_id", "attention", "lag", "source_index", "target_index",
        "true_weight", "mean_value", "std_value",
    ),
    "interp_correctness": (
        "in_main_study", "variant_id", "model_id", "measure", "mean_value", "std_value",
        "mean_chance", "mean_margin",
    ),
    "interp_prediction_scores": (
        "in_main_study", "suite_run_id", "variant_id", "dataset_id", "model_id",
        "test_mse_mean", "test_mse_std",
    ),
    "interp_sensitivity": (
        "study", "dataset_id", "model_id", "parameter_value", "relative_error",
        "relative_error_per_sigma",
    ),
    "interp_ratings": (
        "suite_run_id", "metric", "variant_id", "model_id", "raw_score", "rating",
        "rating_levels", "higher_is_better",
    ),
    "interp_rating_stability": ("suite_run_id", "metric", "variant_id", "model_id", "n_seeds"),
}  # fmt: skip


def _read(path: Path) -> dict[str, pd.DataFrame]:
    check_snapshot(path, REQUIRED, REBUILD)
    queries = {
        "cells": "select * from marts.interp_attention_summary "
        "where attention in ('beta', 'tcdf_picks') and lag is null",
        "alpha": "select * from marts.interp_attention_summary "
        "where attention = 'alpha' and source_index = target_index",
        "correctness": "select * from marts.interp_correctness where in_main_study",
        "scores": "select * from marts.interp_prediction_scores where in_main_study",
        "sensitivity": "select * from marts.interp_sensitivity",
        # share_mc_se came later: an older snapshot lacks it (the regex then names one)
        "ratings": "select r.*, columns('^share_(at_rating|mc_se)$'), s.n_seeds "
        "from marts.interp_ratings r "
        "left join marts.interp_rating_stability s "
        "using (suite_run_id, metric, variant_id, model_id)",
    }
    return read_marts(path, queries)


#: the ratings table's columns (rating_reason: why a rating is null, e.g. near-uniform
#: attention; absent from snapshots published before the column existed)
RATING_TABLE = (
    "metric",
    "variant_id",
    "model_id",
    "raw_score",
    "rating",
    "share_at_rating",
    "n_seeds",
    "rating_reason",
)


def _table(frame: pd.DataFrame) -> str:
    if isinstance(frame.columns, pd.MultiIndex):  # a pivot: "mean_value · measure" headers
        frame = frame.copy()
        frame.columns = [" · ".join(str(p) for p in c if str(p)) for c in frame.columns]
    return frame_table(frame, digits=4)


#: the model_id of the report's row for the best data-blind prior
BLIND_PRIOR = "best data-blind prior"


BLIND_PRIOR_NOTE = (
    f"<p>{BLIND_PRIOR}: the best score, per measure, of rules that never see the data "
    "(uniform; recency; each series' own past; series 0; lag 3), with its own chance "
    "level. Where it reaches a model's score the dataset's fixed truth cannot tell that "
    "model's attention from a built-in prior; the ratings are margins over chance "
    "only.</p>"
)


def blind_prior_rows(cells: pd.DataFrame) -> pd.DataFrame:
    """The best data-blind prior's scores (:func:`baselines.best_blind_prior`) on one
    variant's truth, as rows shaped like ``interp_correctness`` (model_id
    :data:`BLIND_PRIOR`): mean_value = its score, mean_chance = its own chance level,
    mean_margin = their difference. ``cells``: the variant's beta and tcdf_picks cells of
    ``interp_attention_summary`` (their ``true_weight`` is the truth; every cell a
    candidate). The beta measures, and TCDF's where the variant has picks; the lag measure
    is left out (the report reads no cross-series lag truth). Empty without beta cells."""
    beta = cells[cells["attention"] == "beta"]
    columns = ["model_id", "measure", "mean_value", "std_value", "mean_chance", "mean_margin"]
    if beta.empty:
        return pd.DataFrame(columns=columns)
    n = int(max(beta["target_index"].max(), beta["source_index"].max())) + 1
    truth = np.zeros((n, n))
    weights = beta.groupby(["target_index", "source_index"])["true_weight"].max().fillna(0.0)
    for (target, source), weight in weights.items():
        truth[int(target), int(source)] = weight
    picks = np.ones((n, n)) if (cells["attention"] == "tcdf_picks").any() else None
    best = best_blind_prior(np.ones((n, n)), None, picks, truth, np.zeros((n, n, 1)))
    rows = [
        (BLIND_PRIOR, measure, score, np.nan, chance, score - chance)
        for measure, (score, chance, _name) in best.items()
    ]
    return pd.DataFrame(rows, columns=columns)


def render_report(data: dict[str, pd.DataFrame]) -> str:
    """The HTML report from the frames of :func:`_read` (pure)."""
    cells, scores = data["cells"], data["scores"]
    _PANELS[0] = 0
    ratings = data.get("ratings", pd.DataFrame())
    sections = [
        "<h1>Interpretability suite</h1>",
        verdict_html(
            ratings,
            "how well their attention recovers the true influences (and their test error)",
            "<code>marts.interp_ratings</code>, <code>marts.interp_rating_stability</code>",
            system="model_id",
        ),
        summary_table_html(ratings, system="model_id"),
        not_rated_html(ratings, system="model_id"),
    ]
    if scores.empty:
        sections.append(
            "<p>No interpretability suite run in these marts yet: run "
            "<code>tsrate suite interpretability run</code>.</p>"
        )
    else:
        suite_run = scores["suite_run_id"].iloc[0]
        sections.append(
            f"<p>Suite run <code>{html.escape(str(suite_run))}</code>. Heatmaps: "
            "rows = target series, columns = source series; model panels show the "
            "mean beta over seeds (std in the tooltip), the truth panel the "
            "normalised true influence.</p>"
        )
        sections.append(table_2_html(scores))
        sections.append(sensitivity_html(data.get("sensitivity", pd.DataFrame())))
    variants = list(dict.fromkeys(scores.sort_values("dataset_id")["variant_id"]))
    # dataset 4 first: the headline case (IMV-LSTM on two mutually driving series)
    variants.sort(key=lambda v: (v != "d4",))
    for variant in variants:
        block = cells[cells["variant_id"] == variant]
        if block.empty:
            continue
        sections.append(f"<h2>{html.escape(variant)}</h2><div>")
        first = block[block["attention"] == "beta"]
        if not first.empty:
            one = first[first["model_id"] == first["model_id"].iloc[0]]
            sections.append(heatmap_figure(_matrix(one, "true_weight"), "truth", top=1.0))
        for model_id, part in block.groupby("model_id", sort=True):
            for kind, label in (("beta", "mean beta"), ("tcdf_picks", "share of runs picked")):
                panel = part[part["attention"] == kind]
                if panel.empty:
                    continue
                sections.append(
                    heatmap_figure(
                        _matrix(panel, "mean_value"),
                        f"{model_id}: {label}",
                        std=_matrix(panel, "std_value"),
                        top=1.0 if kind == "tcdf_picks" else None,
                        not_applicable=_not_applicable(panel),
                    )
                )
        sections.append("</div>")
        alpha = data.get("alpha")
        if alpha is not None and not alpha.empty:
            own = alpha[alpha["variant_id"] == variant]
            if not own.empty and own["target_index"].max() < 10:
                sections.append("<div>")
                one = own[own["model_id"] == own["model_id"].iloc[0]]
                sections.append(
                    heatmap_figure(
                        _lag_matrix(one, "true_weight"), "truth: own lags", top=1.0, first_col=1
                    )
                )
                for model_id, part in own.groupby("model_id", sort=True):
                    sections.append(
                        heatmap_figure(
                            _lag_matrix(part, "mean_value"),
                            f"{model_id}: alpha on own series",
                            std=_lag_matrix(part, "std_value"),
                            first_col=1,
                        )
                    )
                sections.append("</div>")
        measures = data["correctness"]
        measures = measures[measures["variant_id"] == variant]
        if not measures.empty:
            # a rule that never saw the data, scored like the models: the fixed truths of
            # datasets 2, 3, 5, 6 and the lattice let it reach far above chance
            measures = pd.concat([measures, blind_prior_rows(block)], ignore_index=True)
            sections.append(
                _table(
                    measures.pivot_table(
                        index="model_id",
                        columns="measure",
                        values=["mean_value", "std_value", "mean_chance", "mean_margin"],
                    ).reset_index()
                )
            )
            sections.append(BLIND_PRIOR_NOTE)
    sections.append(trends_section(data["correctness"]))
    if not data["ratings"].empty:
        sections.append("<h2>Ratings</h2>")
        shown = data["ratings"][[c for c in RATING_TABLE if c in data["ratings"].columns]]
        if "share_at_rating" in shown:  # rounded down: a shaky share never reads 0.6
            shown = shown.assign(
                share_at_rating=shown["share_at_rating"].map(
                    lambda v: v if pd.isna(v) else floor_share(v, 4)
                )
            )
        sections.append(_table(shown))
        sections.append(
            "<p>share_at_rating: share of bootstrap resamples of the training seeds that give "
            "the published rating (marts.interp_rating_stability; up to 6 seeds every distinct "
            "draw weighted by its probability, so the share is exact); with few seeds it is "
            "coarse, and empty with one seed or without a published rating.</p>"
        )
    style = ".heatmap{display:inline-block;margin:4px}"
    return html_page("tsrate interpretability", "".join(sections), style)


TREND_VARIANTS = {9: ("d9_T", "temperature T"), 10: ("d10_r", "logistic-map r")}


def trends_section(correctness: pd.DataFrame) -> str:
    """Correctness against complexity (paper Figures 18 and 20): edge AUROC, its chance level
    and margin per model along the Ising temperature and the logistic-map r. With fewer
    than 3 points on a sweep the section says the configuration cannot show the trend."""
    parts = ["<h2>Correctness against complexity</h2>"]
    auroc = correctness[correctness["measure"] == "beta_auroc"]
    for _dataset, (prefix, label) in TREND_VARIANTS.items():
        rows = auroc[auroc["variant_id"].str.startswith(prefix)].copy()
        points = sorted(rows["variant_id"].unique(), key=lambda v: float(v[len(prefix) :]))
        if len(points) < 3:
            parts.append(
                f"<p>Along the {html.escape(label)}: {len(points)} point(s) in this suite "
                "run. This configuration cannot show the paper's trend of correctness "
                "against complexity; run the paper configuration (<code>--paper</code>: "
                "the 10 x 10 lattice at T = 2, 2.269, 2.75 and r = 1.5 ... 3.56996).</p>"
            )
        if rows.empty:
            continue
        rows[label] = rows["variant_id"].str[len(prefix) :].astype(float)
        table = rows.pivot_table(
            index=label, columns="model_id", values=["mean_value", "mean_chance", "mean_margin"]
        ).reset_index()
        parts.append(f"<h3>Edge AUROC of beta against the {html.escape(label)}</h3>")
        parts.append(_table(table))
    return "".join(parts)


def write_report(warehouse: Path, output: Path) -> Path:
    """Read the suite's marts from ``warehouse`` (read-only) and write the HTML report."""
    return write_html(output, render_report(_read(Path(warehouse))))
