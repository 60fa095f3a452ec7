"""The interpretability report's Table 2 and Figures 14-17 print and plot the marts' numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.support.report_trace import printed_numbers, trace_problems
from tsrate.html.charts import chart_rows, page_specs
from tsrate.suites.interpretability.paper_shapes import sensitivity_html, table_2_html


def _scores() -> pd.DataFrame:
    rows = []
    for d in (1, 2, 3):
        for m, base in (("imv_tensor", 0.01), ("tcdf", 0.02)):
            rows.append(
                {
                    "suite_run_id": "s1",
                    "variant_id": f"d{d}",
                    "dataset_id": d,
                    "model_id": m,
                    "test_mse_mean": base * d + 1e-3 / 7,
                    "test_mse_std": np.nan if (d, m) == (3, "tcdf") else base / (d + 3),
                }
            )
    return pd.DataFrame(rows)


def _sensitivity() -> pd.DataFrame:
    rows = []
    studies = {"sensitivity_f": ((2, 7), (0.1, 0.5, 0.9)), "sensitivity_sigma": ((2, 7), (0.1, 0.5)),
               "sensitivity_n": ((2, 5), (3, 5, 9))}  # fmt: skip
    rng = np.random.default_rng(0)
    for study, (datasets, values) in studies.items():
        for d in datasets:
            for m in ("imv_tensor", "da_rnn"):
                errors = rng.uniform(0.1, 1.0, len(values))
                for v, e in zip(values, errors, strict=True):
                    rel = e / errors.max()
                    rows.append(
                        {"suite_run_id": "s1", "study": study, "dataset_id": d, "model_id": m,
                         "parameter_value": float(v), "n_runs": 2, "test_mse_mean": e,
                         "relative_error": rel,
                         "relative_error_per_sigma": rel / v if study == "sensitivity_sigma" else np.nan}
                    )  # fmt: skip
    return pd.DataFrame(rows)


def test_table_2_prints_every_mean_and_std_of_the_mart():
    scores = _scores()
    page = table_2_html(scores)
    marts = {"interp_prediction_scores": scores}
    assert trace_problems(page, marts) == []
    printed = printed_numbers(page)
    assert len(printed) == 6 + 5  # six means, five stds (one is null: an en dash)
    # every cell of the frame appears, and a planted change is caught
    wrong = scores.copy()
    wrong.loc[2, "test_mse_mean"] *= 1.001
    assert trace_problems(page, {"interp_prediction_scores": wrong})


def test_figures_14_to_17_plot_every_sensitivity_row():
    sens = _sensitivity()
    page = sensitivity_html(sens)
    specs = page_specs(page)
    titles = [spec["title"]["text"] for spec in specs.values()]
    assert [t.split(":")[0] for t in titles] == ["Figure 14"] * 2 + ["Figure 15"] * 2 + [
        "Figure 16",
        "Figure 17",
    ]
    rows = chart_rows(page)
    assert len(rows) == len(sens)
    assert trace_problems(page, {"interp_sensitivity": sens}) == []
    sigma = [r for r in rows if '"sensitivity_sigma"' in r["where"]]
    assert {r["column"] for r in sigma} == {"relative_error_per_sigma"}
    wrong = sens.copy()
    wrong["relative_error"] = wrong["relative_error"] * 0.5
    assert trace_problems(page, {"interp_sensitivity": wrong})
    # no sensitivity study: one line, no chart
    assert "no sensitivity study" in sensitivity_html(sens.iloc[0:0]).lower()
