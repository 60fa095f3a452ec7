"""Black-box round trip: `export-inputs` writes the exact inputs, a model run "elsewhere"
(here: last value, computed from inputs.parquet alone) predicts, and the predictions are
imported against the manifest into a real warehouse."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.support.import_study import EXTERNAL_ROW
from tests.support.png import decode_png
from tsrate import TsrateError
from tsrate.config import Study
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.blackbox.export import export_inputs, read_manifest, study_from_manifest
from tsrate.robustness.blackbox.predictions import ImportValidationError, import_forecasts
from tsrate.robustness.forecast.plan import load_series, make_batch
from tsrate.robustness.sources import load_skfolio_sp500
from tsrate.systems.registry import load_systems_seed

STUDY = Study.from_mapping(
    dict(
        study_tickers=["AAPL", "JPM"],
        study_start="2022-10-03",
        study_end="2022-12-28",
        context_length=20,
        horizon=5,
        perturbations=["P0", "P1", "P3", "P4"],
        systems=["naive"],
    )
)


@pytest.fixture()
def exported(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    with connect(warehouse) as con:
        store_prices(con, load_skfolio_sp500(["AAPL", "JPM"]), "skfolio")
        summary = export_inputs(con, STUDY, tmp_path / "export", image_windows=2)
    return warehouse, summary


def last_value_predictions(inputs: pd.DataFrame, horizon: int) -> pd.DataFrame:
    """What an outside model would do with the export: the last non-missing input value."""
    last = (
        inputs.dropna(subset=["value"])
        .sort_values("context_step")
        .groupby(["ticker", "window_end_date", "perturbation_id"], as_index=False)
        .last()
    )
    steps = pd.DataFrame({"horizon_step": range(1, horizon + 1)})
    frame = last.merge(steps, how="cross")
    return frame.rename(columns={"value": "forecast"})[
        ["ticker", "window_end_date", "perturbation_id", "horizon_step", "forecast"]
    ]


def test_export_holds_exactly_the_system_inputs(exported):
    warehouse, summary = exported
    folder = summary.folder
    inputs = pd.read_parquet(folder / "inputs.parquet")
    manifest = read_manifest(folder)
    with connect(warehouse, read_only=True) as con:
        series = load_series(con, STUDY)
    assert summary.windows == sum(len(s.end_positions) for s in series.values())
    assert len(inputs) == summary.windows * 4 * 20 == manifest["files"]["inputs.parquet"]["rows"]
    for ticker, ticker_series in series.items():
        assert manifest["tickers"][ticker]["window_end_dates"] == [
            str(d) for d in ticker_series.window_end_dates
        ]
        for perturbation_id in STUDY.perturbations:
            batch = make_batch(STUDY, ticker_series, perturbation_id)
            rows = inputs[(inputs.ticker == ticker) & (inputs.perturbation_id == perturbation_id)]
            values = rows.sort_values(["window_end_date", "context_step"])["value"].to_numpy()
            np.testing.assert_array_equal(values.reshape(batch.contexts.shape), batch.contexts)
    p3 = inputs[inputs.perturbation_id == "P3"]
    assert (p3["value"].isna() == p3["is_perturbed"]).all() and p3["is_perturbed"].any()
    assert not inputs[inputs.perturbation_id.isin(["P0", "P4"])]["is_perturbed"].any()
    last = inputs[inputs.context_step == 20]
    assert (pd.to_datetime(last["price_date"]) == pd.to_datetime(last["window_end_date"])).all()
    # images: 2 windows × 2 tickers × 4 perturbations, valid PNGs; P4 blackens the centre
    pngs = sorted((folder / "images").rglob("*.png"))
    assert len(pngs) == summary.images == 2 * 2 * 4
    first = pngs[0].relative_to(folder / "images").parts
    p0 = decode_png((folder / "images" / first[0] / "P0" / first[2]).read_bytes())
    p4 = decode_png((folder / "images" / first[0] / "P4" / first[2]).read_bytes())
    assert np.argwhere((p0 != p4).any(axis=-1)).tolist() == [[64, 64]]
    assert not list(folder.parent.glob(".export.partial-*"))


def test_predictions_round_trip_through_the_manifest(exported):
    warehouse, summary = exported
    inputs = pd.read_parquet(summary.folder / "inputs.parquet")
    predictions = last_value_predictions(inputs, horizon=5)
    path = summary.folder.parent / "predictions.parquet"
    predictions.to_parquet(path, index=False)
    row = {**EXTERNAL_ROW, "accepted_perturbations": "P0 P1 P2 P3 P4 P5 P6"}
    seed = pd.concat([load_systems_seed(), pd.DataFrame([row])], ignore_index=True)
    with connect(warehouse) as con:
        study = study_from_manifest(con, read_manifest(summary.folder / "manifest.json"))
        assert study.study_hash == STUDY.study_hash
        result = import_forecasts(
            con, path, "external_demo", study, systems_seed=seed, baselines=False
        )
        stored = con.execute(
            "select ticker, window_end_date, perturbation_id, horizon_step, forecast "
            "from raw.forecasts where system_id = 'external_demo' order by all"
        ).df()
        # a file missing a window is refused by the import's validation, nothing stored
        rows_before = con.execute("select count(*) from raw.forecasts").fetchone()[0]
        predictions.iloc[5:].to_csv(path.with_suffix(".csv"), index=False)
        with pytest.raises(ImportValidationError):
            import_forecasts(
                con,
                path.with_suffix(".csv"),
                "external_demo",
                study,
                systems_seed=seed,
                baselines=False,
            )
        assert con.execute("select count(*) from raw.forecasts").fetchone()[0] == rows_before
    assert result.forecast_rows == len(predictions) == len(stored)
    expected = predictions.sort_values(
        ["ticker", "window_end_date", "perturbation_id", "horizon_step"]
    )["forecast"].to_numpy()
    np.testing.assert_allclose(stored["forecast"].to_numpy(), expected)


def test_changed_prices_or_bad_manifests_are_refused(exported, tmp_path):
    warehouse, summary = exported
    manifest = read_manifest(summary.folder)
    with connect(warehouse) as con:
        prices = load_skfolio_sp500(["AAPL"])
        prices.loc[prices.index[-1], "close"] *= 1.01
        store_prices(con, prices, "edited", replace=True)
        with pytest.raises(TsrateError, match="prices of AAPL changed since the export"):
            study_from_manifest(con, manifest)
        with pytest.raises(TsrateError, match="not an empty folder"):
            export_inputs(con, STUDY, summary.folder)
    with pytest.raises(TsrateError, match="no export manifest"):
        read_manifest(tmp_path / "nowhere")
    (tmp_path / "bad.json").write_text(json.dumps({"format_version": 99}))
    with pytest.raises(TsrateError, match="not a tsrate export manifest"):
        read_manifest(tmp_path / "bad.json")


def test_cli_export_inputs_and_import_predictions_check_the_manifest(
    exported, tmp_path, monkeypatch, capsys
):
    from tsrate.cli import main

    warehouse, summary = exported
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    flags = ["--tickers", "AAPL", "--start", "2022-10-03", "--end", "2022-12-28"]
    flags += ["--context-length", "20", "--horizon", "5", "--perturbations", "P0,P2"]
    assert main(["export-inputs", str(tmp_path / "cli-export"), *flags]) == 0
    out = capsys.readouterr().out
    assert "to " + str(tmp_path / "cli-export") in out and "(0 images)" in out
    manifest = read_manifest(tmp_path / "cli-export")
    assert manifest["perturbations"] == ["P0", "P2"] and list(manifest["tickers"]) == ["AAPL"]
    # a manifest that does not describe this warehouse's prices is refused before importing
    manifest["tickers"]["AAPL"]["prices_sha256"] = "0" * 64
    (tmp_path / "cli-export" / "manifest.json").write_text(json.dumps(manifest))
    predictions = tmp_path / "p.csv"
    predictions.write_text("ticker,window_end_date,perturbation_id,horizon_step,forecast\n")
    code = main(
        [
            "import-predictions",
            str(predictions),
            "--system",
            "external_demo",
            "--manifest",
            str(tmp_path / "cli-export"),
        ]
    )
    assert code != 0
    assert "prices of AAPL changed since the export" in capsys.readouterr().err
