"""DA-RNN's beta diagonal is drawn as not applicable, never as a measured 0.

DA-RNN's input attention never covers the target's own series, so the beta it stores on
the diagonal is 0 by construction. The report's heatmaps drew it as 0 (white: "no
attention"), the same as a learned zero. Now interp_attention_summary marks the cell
``applicable`` false (mean and std null) and the heatmap draws it blank with a cross and a
caption that says why; another model's diagonal (a measured attention) is drawn as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tsrate.html.charts import check_specs, page_specs, spec_rows
from tsrate.suites.interpretability import report as interp


def _cells(with_flag: bool) -> pd.DataFrame:
    """2 x 2 beta of darnn (diagonal 0, structural) and imv_tensor (diagonal 0.25, learned)."""
    rows = []
    for model_id, values in (
        ("darnn", {(0, 0): 0.0, (0, 1): 1.0, (1, 0): 1.0, (1, 1): 0.0}),
        ("imv_tensor", {(0, 0): 0.25, (0, 1): 0.75, (1, 0): 0.5, (1, 1): 0.5}),
    ):
        for (target, source), value in values.items():
            structural = model_id == "darnn" and target == source
            row = dict(
                suite_run_id="s", variant_id="d4", model_id=model_id, attention="beta",
                target_index=target, source_index=source, lag=None, n_runs=3,
                mean_value=value, std_value=0.0 if structural else 0.125,
                true_weight=float(target != source),
            )  # fmt: skip
            if with_flag:  # the mart since the column: null where not applicable
                row["applicable"] = not structural
                if structural:
                    row["mean_value"] = row["std_value"] = None
            rows.append(row)
    return pd.DataFrame(rows)


def _page(cells: pd.DataFrame) -> str:
    scores = pd.DataFrame(
        [
            dict(suite_run_id="s", variant_id="d4", dataset_id=4, model_id=m,
                 test_mse_mean=0.5, test_mse_std=0.1, in_main_study=True)
            for m in ("darnn", "imv_tensor")
        ]
    )  # fmt: skip
    empty = pd.DataFrame(
        columns=["suite_run_id", "variant_id", "model_id", "measure", "mean_value",
                 "std_value", "mean_chance", "mean_margin"]
    )  # fmt: skip
    return interp.render_report(
        {"cells": cells, "alpha": pd.DataFrame(), "correctness": empty, "scores": scores,
         "sensitivity": pd.DataFrame(), "ratings": pd.DataFrame()}
    )  # fmt: skip


def _panel(page: str, title: str) -> tuple[dict, list[dict]]:
    (spec,) = [s for s in page_specs(page).values() if s["title"]["text"] == title]
    return spec, list(spec_rows(spec))


@pytest.mark.parametrize("with_flag", [True, False], ids=["mart", "older-snapshot"])
def test_darnn_diagonal_is_drawn_not_applicable(with_flag):
    page = _page(_cells(with_flag))
    spec, rows = _panel(page, "darnn: mean beta")
    cells = {(r["row"], r["col"]): r for r in rows}
    for i in (0, 1):
        assert cells[(i, i)]["not_applicable"] is True
        assert "value" not in cells[(i, i)] and "std" not in cells[(i, i)]
        assert cells[(i, i)]["missing"] is False  # not a missing cell either
    assert cells[(0, 1)]["value"] == 1.0 and cells[(0, 1)]["not_applicable"] is False
    # drawn blank (not the colour of 0) with a cross on top, and the caption says why
    rect, cross = spec["layer"]
    assert rect["encoding"]["color"]["condition"][0] == {
        "test": "datum.not_applicable",
        "value": interp.NOT_APPLICABLE_FILL,
    }
    assert cross["transform"] == [{"filter": "datum.not_applicable"}]
    assert cross["mark"]["text"] == interp.NOT_APPLICABLE_MARK
    darnn_figure = [f for f in page.split("<figure") if "darnn: mean beta" in f][0]
    assert "structural zero" in darnn_figure.split("<figcaption>", 1)[1]
    assert check_specs(page) >= 3  # valid Vega-Lite, the layered panel included


def test_a_learned_diagonal_is_drawn_as_its_value():
    page = _page(_cells(True))
    spec, rows = _panel(page, "imv_tensor: mean beta")
    cells = {(r["row"], r["col"]): r for r in rows}
    assert cells[(0, 0)]["value"] == 0.25 and cells[(1, 1)]["value"] == 0.5
    assert not any("not_applicable" in r for r in rows) and "layer" not in spec
    imv_figure = [f for f in page.split("<figure") if "imv_tensor: mean beta" in f][0]
    assert "structural zero" not in imv_figure


def test_heatmap_spec_mask_must_match_the_matrix():
    with pytest.raises(ValueError, match="not_applicable mask"):
        interp.heatmap_spec(np.zeros((2, 2)), "t", not_applicable=np.zeros((3, 3), bool))
