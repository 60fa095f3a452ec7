"""The export of a study's inputs (tsrate.robustness.blackbox.export) on a tiny hand-made
series, without a warehouse (``load_series`` replaced by the series itself): every context
row against a slice of the clean prices cut by hand, the perturbed values against their
documented rules, the folder rules (an empty folder is reused, a file or a non-empty folder
refused, missing parents made), the manifest's fields and every malformed manifest refused.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep8_blackbox.json): tests/unit/test_input_export.py round-trips a real
export through a warehouse; these pin the window arithmetic, the counts, the defaults
and the manifest checks one by one, with expectations written out by hand.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.support.png import decode_png
from tsrate import TsrateError
from tsrate.config import Study
from tsrate.robustness.blackbox import export
from tsrate.robustness.blackbox.export import (
    export_inputs,
    input_frame,
    prices_digest,
    read_manifest,
    study_from_manifest,
)
from tsrate.robustness.forecast.plan import TickerSeries

N = 4
STUDY = Study.from_mapping(
    dict(
        study_tickers=["AAPL", "JPM"],
        study_start="2022-10-03",
        study_end="2022-10-18",
        context_length=N,
        horizon=2,
        perturbations=["P0", "P1", "P2", "P3"],
        systems=["naive"],
    )
)
DATES = pd.bdate_range("2022-10-03", periods=12).values.astype("datetime64[D]")
CLEAN = {"AAPL": 100.0 + np.arange(12.0), "JPM": 50.0 + 0.5 * np.arange(12.0)}
ENDS = {"AAPL": [3, 4, 5, 6, 7, 8, 9], "JPM": [5, 7]}
SERIES = {t: TickerSeries(t, DATES, CLEAN[t], np.array(ENDS[t])) for t in ("AAPL", "JPM")}
COLUMNS = [
    "ticker",
    "window_end_date",
    "perturbation_id",
    "context_step",
    "price_date",
    "value",
    "is_perturbed",
]


@pytest.fixture()
def no_warehouse(monkeypatch):
    monkeypatch.setattr(export, "load_series", lambda con, study: SERIES)


def test_every_row_is_a_slice_of_the_clean_prices_ending_at_the_window_end():
    frame = input_frame(STUDY, SERIES)
    assert list(frame.columns) == COLUMNS
    assert len(frame) == (7 + 2) * 4 * N
    assert frame.index.equals(pd.RangeIndex(len(frame)))
    for (ticker, end_date, perturbation), rows in frame.groupby(
        ["ticker", "window_end_date", "perturbation_id"]
    ):
        end = int(np.flatnonzero(DATES == np.datetime64(end_date, "D"))[0])
        assert end in ENDS[ticker]
        clean = CLEAN[ticker][end - N + 1 : end + 1]  # the n closes up to the origin
        assert rows["context_step"].tolist() == [1, 2, 3, 4]
        dates = pd.to_datetime(rows["price_date"]).to_numpy().astype("datetime64[D]")
        np.testing.assert_array_equal(dates, DATES[end - N + 1 : end + 1])
        values = rows["value"].to_numpy(dtype=float)
        flagged = rows["is_perturbed"].to_numpy()
        if perturbation == "P0":
            np.testing.assert_array_equal(values, clean)
            assert not flagged.any()
        else:  # the documented rules: P1 zero, P2 halved, P3 missing; the rest untouched
            changed = {"P1": 0.0 * clean, "P2": clean / 2, "P3": np.full(N, np.nan)}[perturbation]
            np.testing.assert_array_equal(values[flagged], changed[flagged])
            np.testing.assert_array_equal(values[~flagged], clean[~flagged])
    for perturbation in ("P1", "P2", "P3"):
        assert frame.loc[frame["perturbation_id"] == perturbation, "is_perturbed"].any()


def test_prices_digest_is_the_closes_to_ten_decimals_and_the_dates():
    series = SERIES["JPM"]
    expected = hashlib.sha256(series.clean.tobytes())  # the closes are exact at 10 decimals
    expected.update(DATES.astype(np.int64).tobytes())
    assert prices_digest(series) == expected.hexdigest()

    def digest(clean):
        return prices_digest(TickerSeries("X", DATES, clean, np.array([5])))

    base = np.full(12, 100.0)
    noise, change = base.copy(), base.copy()
    noise[3] += 4e-11  # below the 10th decimal: the same prices
    change[3] += 4e-10  # at the 10th decimal: other prices
    assert digest(noise) == digest(base)
    assert digest(change) != digest(base)


def test_the_export_writes_the_inputs_and_the_manifest(tmp_path, no_warehouse):
    folder = tmp_path / "export"
    summary = export_inputs(None, STUDY, folder)
    assert (summary.folder, summary.input_rows, summary.windows, summary.images) == (
        folder,
        (7 + 2) * 4 * N,
        9,
        0,
    )
    assert sorted(p.name for p in folder.iterdir()) == ["inputs.parquet", "manifest.json"]
    assert pq.read_schema(folder / "inputs.parquet").names == COLUMNS
    text = (folder / "manifest.json").read_text()
    manifest = json.loads(text)
    assert text == json.dumps(manifest, indent=2) + "\n"
    assert manifest["format_version"] == 1
    assert (manifest["context_length"], manifest["horizon"]) == (N, 2)
    assert manifest["perturbations"] == ["P0", "P1", "P2", "P3"]
    assert manifest["tickers"]["JPM"] == {
        "prices_sha256": prices_digest(SERIES["JPM"]),
        "window_end_dates": ["2022-10-10", "2022-10-12"],
    }
    inputs = (folder / "inputs.parquet").read_bytes()
    assert manifest["files"] == {
        "inputs.parquet": {"sha256": hashlib.sha256(inputs).hexdigest(), "rows": 144}
    }
    assert manifest["predictions"]["columns"] == [
        "ticker",
        "window_end_date",
        "perturbation_id",
        "horizon_step",
        "forecast",
    ]
    assert manifest["predictions"]["quantile_columns"][0] == "q0.1"
    assert manifest["predictions"]["horizon_step"].startswith("1..2 ")
    assert manifest["images"] == 0
    assert not list(tmp_path.glob(".export.partial-*"))
    assert read_manifest(folder)["study_hash"] == STUDY.study_hash


def test_the_export_folder_rules(tmp_path, no_warehouse):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert export_inputs(None, STUDY, empty).input_rows == 144  # an empty folder is used
    deep = tmp_path / "a" / "b" / "export"
    assert export_inputs(None, STUDY, deep).folder == deep  # missing parents are made
    with pytest.raises(TsrateError, match="exists and is not an empty folder"):
        export_inputs(None, STUDY, empty)  # now full
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(TsrateError, match="exists and is not an empty folder"):
        export_inputs(None, STUDY, afile)
    with pytest.raises(TsrateError, match="--images must be 0 or more, got -1"):
        export_inputs(None, STUDY, tmp_path / "neg", image_windows=-1)
    assert not (tmp_path / "neg").exists()


def test_images_are_the_first_windows_at_128_pixels(tmp_path, no_warehouse):
    study = dataclasses.replace(STUDY, perturbations=("P0", "P4"))
    summary = export_inputs(None, study, tmp_path / "export", image_windows=3)
    pngs = sorted((tmp_path / "export" / "images").rglob("*.png"))
    # 3 of AAPL's 7 windows and both of JPM's, for each of the two perturbations
    assert summary.images == len(pngs) == (3 + 2) * 2
    names = sorted(p.relative_to(tmp_path / "export" / "images").as_posix() for p in pngs)
    assert names[:3] == [
        "AAPL/P0/2022-10-06.png",
        "AAPL/P0/2022-10-07.png",
        "AAPL/P0/2022-10-10.png",
    ]
    assert "JPM/P4/2022-10-12.png" in names
    assert decode_png(pngs[0].read_bytes()).shape == (128, 128, 3)
    assert json.loads((tmp_path / "export" / "manifest.json").read_text())["images"] == 10


# -- the manifest ---------------------------------------------------------------------------------


def _manifest(**changes) -> dict:
    manifest = {
        "format_version": 1,
        "study": json.loads(STUDY.to_json()),
        "horizon": 2,
        "tickers": {
            t: {
                "prices_sha256": prices_digest(s),
                "window_end_dates": [str(d) for d in s.window_end_dates],
            }
            for t, s in SERIES.items()
        },
    }
    manifest.update(changes)
    return manifest


def _read(tmp_path, manifest) -> dict:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    return read_manifest(tmp_path)  # the folder: its manifest.json


def test_a_well_formed_manifest_of_format_1_is_read(tmp_path):
    assert _read(tmp_path, _manifest()) == _manifest()
    assert read_manifest(tmp_path / "manifest.json") == _manifest()


@pytest.mark.parametrize(
    ("manifest", "fragment"),
    [
        ([1, 2], "not a tsrate export manifest of format 1"),
        (_manifest(format_version=2), "not a tsrate export manifest of format 1"),
        ({k: v for k, v in _manifest().items() if k != "tickers"}, "the manifest has no 'tickers'"),
        ({k: v for k, v in _manifest().items() if k != "study"}, "the manifest has no 'study'"),
        ({k: v for k, v in _manifest().items() if k != "horizon"}, "the manifest has no 'horizon'"),
        (_manifest(study=[1]), "malformed export manifest: 'study' is not a mapping"),
        (_manifest(tickers=["AAPL"]), "'tickers' is not a mapping of ticker to its windows"),
        (_manifest(tickers={"AAPL": "x"}), "tickers.AAPL is not a mapping"),
        (
            _manifest(tickers={"AAPL": {"window_end_dates": []}}),
            "tickers.AAPL has no prices_sha256 text",
        ),
        (
            _manifest(tickers={"AAPL": {"prices_sha256": "0", "window_end_dates": "2022"}}),
            "tickers.AAPL.window_end_dates is not a list of dates",
        ),
        (
            _manifest(tickers={"AAPL": {"prices_sha256": "0", "window_end_dates": ["a", 1]}}),
            "tickers.AAPL.window_end_dates is not a list of dates",
        ),
        (
            _manifest(
                tickers={
                    "AAPL": {"prices_sha256": "0", "window_end_dates": ["a"]},
                    "JPM": {"prices_sha256": 0, "window_end_dates": ["a"]},
                }
            ),
            "tickers.JPM has no prices_sha256 text",
        ),
    ],
)
def test_every_malformed_manifest_is_one_error(tmp_path, manifest, fragment):
    with pytest.raises(TsrateError, match=fragment.replace(".", r"\.").replace("(", r"\(")):
        _read(tmp_path, manifest)


def test_manifest_tickers_with_empty_window_lists_are_well_formed(tmp_path):
    manifest = _manifest(tickers={"AAPL": {"prices_sha256": "0", "window_end_dates": []}})
    assert _read(tmp_path, manifest)["tickers"]["AAPL"]["window_end_dates"] == []


def test_the_study_of_a_manifest_is_checked_against_the_prices(no_warehouse):
    assert study_from_manifest(None, _manifest()) == STUDY
    changed = _manifest()
    changed["tickers"]["JPM"]["prices_sha256"] = "0" * 64
    with pytest.raises(TsrateError, match="the stored prices of JPM changed since the export"):
        study_from_manifest(None, changed)
    moved = _manifest()
    moved["tickers"]["AAPL"]["window_end_dates"] = moved["tickers"]["AAPL"]["window_end_dates"][1:]
    with pytest.raises(
        TsrateError, match=r"tickers\.AAPL\.window_end_dates differ from the windows"
    ):
        study_from_manifest(None, moved)
    extra = _manifest()
    extra["tickers"]["MSFT"] = extra["tickers"]["JPM"]
    with pytest.raises(TsrateError, match="the manifest's ticker MSFT is not in the study"):
        study_from_manifest(None, extra)


def test_inside_refuses_a_plain_path_that_a_link_leads_out(tmp_path):
    folder, elsewhere = tmp_path / "export", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (folder / "images").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(TsrateError, match="would leave the folder"):
        export.inside(folder, Path("images", "AAPL"))  # plain names, relative, yet outside
    (folder / "own").mkdir()
    assert export.inside(folder, Path("own", "AAPL")) == folder / "own" / "AAPL"


def test_a_study_naming_a_perturbation_twice_is_refused():
    # its export would hold every input row of that perturbation twice (and write its
    # images folder twice), as a ticker named twice would; both are refused
    with pytest.raises(TsrateError, match=r"names a perturbation twice: \['P0', 'P4', 'P4'\]"):
        dataclasses.replace(STUDY, perturbations=("P0", "P4", "P4"))
    with pytest.raises(TsrateError, match="names a perturbation twice"):
        Study.from_mapping(
            dict(
                study_tickers=["AAPL"],
                study_start="2022-10-03",
                study_end="2022-10-18",
                context_length=N,
                perturbations="P0,P1,P1",
            )
        )
