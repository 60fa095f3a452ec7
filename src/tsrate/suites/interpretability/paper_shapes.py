"""The interpretability report's sections in the shape of the paper's Table 2 and
Figures 14-17, from the marts.

* :func:`table_2_html` -- prediction error per model and dataset (paper Table 2: mean test
  MSE +- its standard deviation over the seeds), from ``marts.interp_prediction_scores``
  (main-study variants); models are rows, datasets columns.
* :func:`sensitivity_html` -- error against a generator parameter (paper Figures 14-17)
  from ``marts.interp_sensitivity``: Figure 14 relative error against the noise frequency
  f (datasets 2 and 7), Figure 15 relative error divided by sigma against the noise scale
  sigma (datasets 2 and 7), Figure 16 / 17 relative error against the number of series N
  (dataset 2 / dataset 5). Relative error = the model's mean test MSE / its maximum over
  the study's values (the paper's "error divided by maximum model error").

Every printed number is a ``<span class="num">`` with ``data-mart``, ``data-column``,
``data-where`` and ``data-value``, and every plotted point a chart row with ``mart``,
``column``, ``where`` and ``value`` (:func:`tsrate.html.charts.traced`), so a test can
re-read each one from the mart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pandas as pd

from tsrate.html.charts import PALETTE, chart_name, esc, figure, traced
from tsrate.html.page import table

PREDICTION_MART = "interp_prediction_scores"
SENSITIVITY_MART = "interp_sensitivity"

#: (figure, study, dataset, plotted column, x label, y label) of the sensitivity figures
FIGURES: list[tuple[str, str, int, str, str, str]] = [
    ("14", "sensitivity_f", 2, "relative_error", "noise frequency f", "error / max error"),
    ("14", "sensitivity_f", 7, "relative_error", "noise frequency f", "error / max error"),
    ("15", "sensitivity_sigma", 2, "relative_error_per_sigma", "noise scale sigma",
     "(error / max error) / sigma"),
    ("15", "sensitivity_sigma", 7, "relative_error_per_sigma", "noise scale sigma",
     "(error / max error) / sigma"),
    ("16", "sensitivity_n", 2, "relative_error", "number of series N", "error / max error"),
    ("17", "sensitivity_n", 5, "relative_error", "number of series N", "error / max error"),
]  # fmt: skip


def _where(row: Mapping[str, object], keys: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key in keys:
        value = row[key]
        if isinstance(value, np.integer):
            value = int(value)
        elif isinstance(value, np.floating):
            value = float(value)
        out[key] = value
    return out


def traced_number(value: object, mart: str, column: str, where: Mapping[str, object]) -> str:
    """A printed number with its provenance (4 significant figures); an en dash if missing."""
    if value is None or pd.isna(value):
        return '<span class="num missing">–</span>'
    attrs = {
        "data-mart": f"marts.{mart}",
        "data-column": column,
        "data-where": json.dumps(dict(where), sort_keys=True, default=str),
        "data-value": repr(float(value)),
    }
    rendered = "".join(f' {k}="{esc(v)}"' for k, v in attrs.items())
    return f'<span class="num"{rendered}>{float(value):.4g}</span>'


def table_2_html(scores: pd.DataFrame) -> str:
    """Prediction error per model (rows) and dataset (columns), mean +- std over seeds."""
    head = "<h2>Prediction error, in the shape of the paper's Table 2</h2>"
    if scores.empty:
        return head + "<p>No main-study prediction scores in these marts.</p>"
    keys = ["suite_run_id", "variant_id", "model_id"]
    variants = list(
        dict.fromkeys(scores.sort_values(["dataset_id", "variant_id"])["variant_id"].astype(str))
    )
    models = sorted(scores["model_id"].astype(str).unique())
    by_key = {(str(r["variant_id"]), str(r["model_id"])): r for _, r in scores.iterrows()}
    rows = []
    for model in models:
        cells = [esc(model)]
        for variant in variants:
            row = by_key.get((variant, model))
            if row is None:
                cells.append("")
                continue
            where = _where(row, keys)
            mean = traced_number(row["test_mse_mean"], PREDICTION_MART, "test_mse_mean", where)
            std = traced_number(row["test_mse_std"], PREDICTION_MART, "test_mse_std", where)
            cells.append(f"{mean} ± {std}")
        rows.append(cells)
    note = (
        "<p>Mean test MSE over the model seeds ± its standard deviation (n − 1; empty with "
        "one seed), on the original scale, averaged over series "
        "(<code>marts.interp_prediction_scores</code>, main study). The paper's Table 2 "
        "also lists ES-RNN, which tsrate does not train (see docs/suites/interpretability.md).</p>"
    )
    return head + table(["model", *[esc(v) for v in variants]], rows, css="frame") + note


def sensitivity_spec(
    rows: pd.DataFrame, column: str, title: str, x_label: str, y_label: str
) -> dict:
    """A Vega-Lite line chart (one line per model, a point per parameter value) of
    ``column`` against ``parameter_value``; every point carries its provenance."""
    keys = ["suite_run_id", "study", "dataset_id", "model_id", "parameter_value"]
    values = []
    for _, row in rows.sort_values(["model_id", "parameter_value"]).iterrows():
        value = row[column]
        if value is None or pd.isna(value):
            continue
        values.append(
            {
                "x": float(row["parameter_value"]),
                "y": float(value),
                "model": str(row["model_id"]),
                **traced(SENSITIVITY_MART, column, _where(row, keys), float(value)),
            }
        )
    models = sorted({v["model"] for v in values})
    colour = {
        "field": "model",
        "type": "nominal",
        "title": "model",
        "scale": {
            "domain": models,
            "range": [PALETTE[i % len(PALETTE)] for i in range(len(models))],
        },
    }
    encoding = {
        "x": {"field": "x", "type": "quantitative", "title": x_label, "scale": {"zero": False}},
        "y": {"field": "y", "type": "quantitative", "title": y_label},
        "color": colour,
        "tooltip": [
            {"field": "model", "type": "nominal"},
            {"field": "x", "type": "quantitative", "title": x_label, "format": ".3g"},
            {"field": "y", "type": "quantitative", "title": y_label, "format": ".4g"},
        ],
    }
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.4.1.json",
        "title": {"text": title, "anchor": "start", "fontSize": 12},
        "data": {"values": values},
        "width": 320,
        "height": 200,
        "encoding": encoding,
        "layer": [
            {"mark": {"type": "line", "strokeWidth": 1.8}},
            {"mark": {"type": "point", "filled": True}},
        ],
    }


def sensitivity_html(sensitivity: pd.DataFrame) -> str:
    """Figures 14-17: one chart per (figure, dataset) with data; a line where none."""
    parts = ["<h2>Sensitivity, in the shape of the paper's Figures 14–17</h2>"]
    if sensitivity is None or sensitivity.empty:
        parts.append(
            "<p>No sensitivity study in this suite run (it was run with "
            "<code>--no-sensitivity</code>, or not at all).</p>"
        )
        return "".join(parts)
    for number, study, dataset, column, x_label, y_label in FIGURES:
        rows = sensitivity[
            (sensitivity["study"] == study) & (sensitivity["dataset_id"].astype(int) == dataset)
        ]
        title = f"Figure {number}: dataset {dataset}, {x_label}"
        if rows.empty or rows[column].isna().all():
            parts.append(f"<p>{esc(title)}: no {esc(study)} rows for dataset {dataset}.</p>")
            continue
        spec = sensitivity_spec(rows, column, title, x_label, y_label)
        caption = (
            f"<code>marts.{SENSITIVITY_MART}</code>.{esc(column)}; "
            f"{len(spec['data']['values'])} points, mean over "
            f"{int(rows['n_runs'].max())} seed(s) per point at most."
        )
        parts.append(figure(f"sensitivity-{chart_name(title)}", spec, caption))
    return "".join(parts)
