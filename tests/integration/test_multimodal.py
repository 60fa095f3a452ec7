"""A tiny multi-modal study end to end: a trained ViT-num-spec on P0, P4, P5, P6 through
forecasting (parallel workers), raw.sentiments and a real dbt build of the rating marts.

Real pieces only: skfolio prices, the tiny ViT and the line-plot sentiment classifier
trained here (settings through TSRATE_MULTIMODAL_VARS), a temporary DuckDB file and dbt.
"""

from __future__ import annotations

import json

import pytest

from tests.integration.builds import forecast_and_build
from tests.support.warehouses import ingest, read, small_study
from tsrate.config import load_companies
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import run_forecasts

pytestmark = pytest.mark.slow

TICKERS = ["AAPL", "MSFT", "JPM", "BAC"]
TINY_VARS = {
    "vit_size": "tiny",
    "vit_training_tickers": ["KO", "XOM"],  # never a study company
    "vit_max_training_windows": 160,
    "vit_max_epochs": 2,
    "sentiment_training_walks": 300,
    "sentiment_epochs": 2,
}
SELECT = "+window_errors +accuracy_scores +ratings +int_perturbation_sets_derived stg_sentiments stg_model_checkpoints +window_leakage"


def test_vit_study_with_image_perturbations_reaches_the_marts(tmp_path, monkeypatch, dbt_target):
    monkeypatch.setenv("TSRATE_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("TSRATE_MULTIMODAL_VARS", json.dumps(TINY_VARS))
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, TICKERS)
    study = small_study(
        study_tickers=TICKERS,
        perturbations=["P0", "P4", "P5", "P6"],
        systems=["vit_num_spec_covid", "naive", "random"],
    )
    run_id = forecast_and_build(warehouse, study, dbt_target, select=SELECT)

    windows = read(warehouse, "select count(*) as n from raw.windows where run_id = ?", [run_id])
    n_windows = int(windows["n"][0])
    errors = read(
        warehouse,
        "select system_id, perturbation_id, count(*) as n from marts.window_errors "
        "group by all order by all",
    )
    counts = {(r.system_id, r.perturbation_id): r.n for r in errors.itertuples()}
    for perturbation in ("P0", "P4", "P5", "P6"):
        assert counts[("vit_num_spec_covid", perturbation)] == n_windows
        assert counts[("random", perturbation)] == n_windows
    assert ("naive", "P4") not in counts and counts[("naive", "P0")] == n_windows

    # the image perturbations changed the ViT's forecasts, not the numbers it was given
    moved = read(
        warehouse,
        "select e.perturbation_id, avg(abs(e.max_abs_residual - c.max_abs_residual)) as moved "
        "from marts.window_errors e join marts.window_errors c using (system_id, ticker, window_end_date) "
        "where system_id = 'vit_num_spec_covid' and c.perturbation_id = 'P0' group by all",
    ).set_index("perturbation_id")["moved"]
    assert moved["P0"] == 0 and (moved[["P4", "P5", "P6"]] > 0).all()
    same_inputs = read(
        warehouse,
        "select count(*) as n from raw.perturbed_inputs where run_id = ? and "
        "(is_perturbed or input_value <> clean_value)",
        [run_id],
    )
    assert same_inputs["n"][0] == 0

    ratings = read(
        warehouse,
        "select distinct perturbation_id from marts.ratings where system_id = 'vit_num_spec_covid'",
    )
    assert {"P4", "P5", "P6"} <= set(ratings["perturbation_id"])
    accuracy = read(
        warehouse,
        "select perturbation_id, n from marts.accuracy_scores "
        "where system_id = 'vit_num_spec_covid' and metric = 'smape'",
    )
    assert set(accuracy["perturbation_id"]) == {"P0", "P4", "P5", "P6"}
    sets = read(
        warehouse,
        "select system_id, perturbation_set from intermediate.int_perturbation_sets_derived where run_id = ?",
        [run_id],
    ).set_index("system_id")["perturbation_set"]
    assert sets["vit_num_spec_covid"] == "P0 P4 P5 P6" and sets["naive"] == "P0"

    sentiments = read(
        warehouse,
        "select * from staging.stg_sentiments where run_id = ? order by ticker, window_end_date",
        [run_id],
    )
    assert len(sentiments) == n_windows and set(sentiments["ticker"]) == set(TICKERS)
    assert set(sentiments["sentiment_system_id"]) == {"lineplot_cnn"}
    assert set(sentiments["sentiment"]) <= {-1, 0, 1}
    expected = sentiments["sentiment"].map({-1: 0, 0: 128, 1: 255})
    assert (sentiments["stripe_intensity"] == expected).all()

    # a rerun reuses every partition and the cached model (no retraining)
    checkpoints = sorted((tmp_path / "models" / "vit_num_spec").glob("*.pt"))
    assert len(checkpoints) == 1
    registered = read(warehouse, "select * from staging.stg_model_checkpoints")
    assert list(registered["checkpoint_path"]) == [str(checkpoints[0])]
    assert registered["tickers"][0] == "KO,XOM" and registered["git_revision"][0]
    # leakage is decided from the checkpoint's own tickers and dates: KO and XOM are not
    # study tickers, so no window of the ViT lies in its training data
    leakage = read(
        warehouse,
        "select * from marts.window_leakage where system_id = 'vit_num_spec_covid'",
    )
    assert len(leakage) and (leakage["leakage_basis"] == "checkpoint").all()
    assert (leakage["checkpoint_key"] == registered["checkpoint_key"][0]).all()
    assert not leakage["in_training_data"].astype(bool).any()
    stamp = checkpoints[0].stat().st_mtime_ns
    with connect(warehouse) as con:
        summary = run_forecasts(con, study, load_companies(), workers=2, progress=lambda m: None)
    assert summary.computed == 0 and summary.reused == summary.partitions
    assert checkpoints[0].stat().st_mtime_ns == stamp
