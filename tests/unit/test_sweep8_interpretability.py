"""The interpretability report's paper-shaped sections (tsrate.suites.interpretability
.paper_shapes), the tail of the dataset generators (datasets.py from dataset 10's truth on)
and of the models (models.py from DA-RNN's attention summary on), pinned where round 6's
tests left them free.

paper_shapes: every chart holds exactly the rows of its (study, dataset), a missing value is
left out of its chart (a figure whose values are all missing gets a line, not an empty
chart), an empty Table 2 says so, every printed number's ``data-where`` is the same
canonical JSON (sorted keys) as a chart row's ``where``, and the charts' layout (the report's
design values, written out in the test) is pinned so a changed size or mark shows.

models: seq2graph's parameters are those of its described architecture (alpha's score has
no bias). The end of datasets.py needed no new test: the old tests caught every mutant there.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep8_interpretability.json). No training, no processes: well under a second.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.support.report_trace import printed_numbers
from tsrate.html.charts import chart_rows, page_specs
from tsrate.suites.interpretability import models as mod
from tsrate.suites.interpretability import paper_shapes as ps

# ---------------------------------------------------------------------------- paper_shapes

#: (figure, study, dataset) of the paper's Figures 14-17 (paper_shapes' module docstring)
PAPER_FIGURES = [
    ("14", "sensitivity_f", 2),
    ("14", "sensitivity_f", 7),
    ("15", "sensitivity_sigma", 2),
    ("15", "sensitivity_sigma", 7),
    ("16", "sensitivity_n", 2),
    ("17", "sensitivity_n", 5),
]


def sensitivity_rows(missing=()):
    """Every (study, dataset) of the figures with distinct values per dataset (so a chart
    that drew another dataset's rows is told apart); ``missing``: (study, dataset, value)
    whose plotted column is NaN."""
    rows = []
    for k, (_, study, dataset) in enumerate(PAPER_FIGURES):
        for m, model in enumerate(("darnn", "imv_tensor")):
            for v, value in enumerate((0.2, 0.4, 0.8)):
                rel = (k + 1) / 10 + m / 100 + v / 1000
                column = (
                    "relative_error_per_sigma" if study == "sensitivity_sigma" else "relative_error"
                )
                row = {
                    "suite_run_id": "s1", "study": study, "dataset_id": dataset,
                    "model_id": model, "parameter_value": value, "n_runs": 3,
                    "test_mse_mean": rel * 2, "relative_error": rel,
                    "relative_error_per_sigma": rel / value if study == "sensitivity_sigma" else np.nan,
                }  # fmt: skip
                if (study, dataset, value) in missing:
                    row[column] = np.nan
                rows.append(row)
    return pd.DataFrame(rows)


def charts_by_title(page):
    return {spec["title"]["text"]: spec for spec in page_specs(page).values()}


def test_each_chart_plots_exactly_its_study_and_dataset():
    frame = sensitivity_rows()
    page = ps.sensitivity_html(frame)
    rows = chart_rows(page)
    by_chart: dict[str, list[dict]] = {}
    for row in rows:
        by_chart.setdefault(row["chart"], []).append(json.loads(row["where"]))
    assert len(by_chart) == len(PAPER_FIGURES)
    seen = set()
    for wheres in by_chart.values():
        keys = {(w["study"], w["dataset_id"]) for w in wheres}
        assert len(keys) == 1
        seen |= keys
        assert len(wheres) == 6  # two models x three values, nothing else
    assert seen == {(s, d) for _, s, d in PAPER_FIGURES}
    titles = sorted(charts_by_title(page))
    assert titles == sorted(
        {
            f"Figure {n}: dataset {d}, {label}"
            for (n, _, d), label in zip(
                PAPER_FIGURES,
                ["noise frequency f"] * 2 + ["noise scale sigma"] * 2 + ["number of series N"] * 2,
                strict=True,
            )
        }
    )
    # the y of every point is the row's own plotted value
    for row in rows:
        where = json.loads(row["where"])
        match = frame[
            (frame["study"] == where["study"])
            & (frame["dataset_id"] == where["dataset_id"])
            & (frame["model_id"] == where["model_id"])
            & (frame["parameter_value"] == where["parameter_value"])
        ]
        assert len(match) == 1
        assert row["y"] == match.iloc[0][row["column"]]


def test_a_missing_value_is_left_out_of_its_chart():
    frame = sensitivity_rows(missing={("sensitivity_f", 7, 0.4), ("sensitivity_n", 5, 0.8)})
    page = ps.sensitivity_html(frame)
    specs = charts_by_title(page)
    assert len(specs) == 6
    counts = {title: len(spec["data"]["values"]) for title, spec in specs.items()}
    assert counts["Figure 14: dataset 7, noise frequency f"] == 4  # two models lose 0.4
    assert counts["Figure 17: dataset 5, number of series N"] == 4
    assert counts["Figure 14: dataset 2, noise frequency f"] == 6
    for spec in specs.values():
        assert all(np.isfinite(v["y"]) for v in spec["data"]["values"])
    assert "4 points, mean over 3 seed(s)" in page and "6 points, mean over 3 seed(s)" in page


def test_a_figure_whose_values_are_all_missing_gets_a_line_not_a_chart():
    every = {("sensitivity_n", 2, v) for v in (0.2, 0.4, 0.8)}
    page = ps.sensitivity_html(sensitivity_rows(missing=every))
    titles = set(charts_by_title(page))
    assert len(titles) == 5
    assert not any(t.startswith("Figure 16") for t in titles)
    assert "Figure 16: dataset 2, number of series N: no sensitivity_n rows for dataset 2." in page


def test_an_empty_table_2_says_so():
    empty = pd.DataFrame(
        columns=["suite_run_id", "variant_id", "dataset_id", "model_id", "test_mse_mean"]
    )
    page = ps.table_2_html(empty)
    assert page == (
        "<h2>Prediction error, in the shape of the paper's Table 2</h2>"
        "<p>No main-study prediction scores in these marts.</p>"
    )


def test_printed_numbers_carry_the_canonical_where_of_the_chart_rows():
    """A printed number's ``data-where`` is JSON with sorted keys, the same text a chart
    row's ``where`` has for the same row (so one lookup string serves both)."""
    where = {"variant_id": "d1", "suite_run_id": "s1", "model_id": "tcdf"}
    span = ps.traced_number(0.5, "interp_prediction_scores", "test_mse_mean", where)
    (printed,) = printed_numbers(span)
    assert printed["where"] == '{"model_id": "tcdf", "suite_run_id": "s1", "variant_id": "d1"}'
    scores = pd.DataFrame(
        [{"suite_run_id": "s1", "variant_id": "d1", "dataset_id": 1, "model_id": "tcdf",
          "test_mse_mean": 0.25, "test_mse_std": 0.125}]
    )  # fmt: skip
    for number in printed_numbers(ps.table_2_html(scores)):
        assert number["where"] == json.dumps(json.loads(number["where"]), sort_keys=True)
    for row in chart_rows(ps.sensitivity_html(sensitivity_rows())):
        assert row["where"] == json.dumps(json.loads(row["where"]), sort_keys=True)


def test_sensitivity_chart_layout():
    """The charts' design values: 320 x 200 px small multiples, a 12 px title (as the
    report's heatmaps), a 1.8 px line with filled points (as the report's forecast line
    charts), and an x axis fitted to the studied values (not stretched to zero: the noise
    frequency runs 0.1-0.9, N from 3 up)."""
    for spec in page_specs(ps.sensitivity_html(sensitivity_rows())).values():
        assert (spec["width"], spec["height"]) == (320, 200)
        assert spec["title"]["fontSize"] == 12
        assert spec["layer"] == [
            {"mark": {"type": "line", "strokeWidth": 1.8}},
            {"mark": {"type": "point", "filled": True}},
        ]
        assert spec["encoding"]["x"]["scale"] == {"zero": False}


# ---------------------------------------------------------------------------- models (tail)


def gru_shapes(prefix, inputs, h, directions=1):
    """torch's GRU parameters: per direction W_ih (3h x in), W_hh (3h x h), two biases."""
    out = {}
    for suffix in ["", "_reverse"][:directions]:
        out[f"{prefix}.weight_ih_l0{suffix}"] = (3 * h, inputs)
        out[f"{prefix}.weight_hh_l0{suffix}"] = (3 * h, h)
        out[f"{prefix}.bias_ih_l0{suffix}"] = (3 * h,)
        out[f"{prefix}.bias_hh_l0{suffix}"] = (3 * h,)
    return out


@pytest.mark.parametrize(("n", "h"), [(2, 3), (4, 1)])
def test_seq2graph_parameters_are_its_architecture(n, h):
    """seq2graph's parameters, from the architecture (models.Seq2Graph's docstring): a
    bidirectional GRU over each series' values (input 1); alpha's score v^T tanh(W [enc; x]
    + b) with no bias on v (a constant added to every time step's score cannot move a
    softmax over time, so the reference has none: a bias there would never learn and would
    only shift the seeded draws of every later parameter); the summary GRU over [enc; x]
    (2h + 1); per-target beta score and output weights; the decoder GRU over the series."""
    model = mod.Seq2Graph(n, h)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    expected = {
        **gru_shapes("encoder", 1, h, directions=2),
        "alpha_w.weight": (h, 2 * h + 1),
        "alpha_w.bias": (h,),
        "alpha_v.weight": (1, h),
        **gru_shapes("summary", 2 * h + 1, h),
        "beta_w": (n, h, h),
        "beta_v": (n, h, 1),
        **gru_shapes("decoder", h, h),
        "out_w": (n, h, 1),
        "out_b": (n,),
    }
    assert shapes == expected
