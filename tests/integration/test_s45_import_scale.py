"""A prediction file in cents (every forecast x100) is refused by `tsrate import-predictions
--manifest` and `tsrate import` (the CLI's main, in this process, on a real warehouse of the
bundled AAPL and JPM prices): one `tsrate: error:` line naming both tickers, their median
ratio and the unit to use, and every table of the warehouse row for row as before (no
registration, no run, no forecasts). The same file in prices, its P1 forecasts dropped to
zero (a model fed P1's drop to zero may forecast it: the effect rated, not a unit), imports.

The check's logic against hand-computed medians: tests/unit/test_s45_import_scale.py."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.support.import_study import (
    STUDY,
    STUDY_FLAGS,
    in_process_tsrate,
    prediction_grid,
    write_csv,
)
from tests.support.warehouses import ingest
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.plan import load_series


def every_table(warehouse) -> dict[str, pd.DataFrame]:
    """Every row of every table of the warehouse, in a fixed order."""
    with connect(warehouse) as con:
        names = con.execute(
            "select table_schema || '.' || table_name from information_schema.tables "
            "where table_type = 'BASE TABLE' order by all"
        ).fetchall()
        return {n: con.execute(f"select * from {n} order by all").df() for (n,) in names}


def cents_median(series, ticker: str) -> float:
    """The median, over the ticker's windows, of each window's median ratio of the P0 forecast
    in cents (100 x (actual + 1)) to the window's last clean close."""
    s = series[ticker]
    ratios = [
        np.median([100 * (s.clean[end + step] + 1.0) / s.clean[end] for step in (1, 2, 3, 4, 5)])
        for end in s.end_positions
    ]
    return float(np.median(ratios))


def test_a_file_in_cents_is_refused_in_one_line_and_stores_nothing(tmp_path, capsys, monkeypatch):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    with connect(warehouse) as con:
        series = load_series(con, STUDY)
    prices = prediction_grid(series)  # the clean actuals + 1.0
    prices.loc[prices["perturbation_id"] == "P1", "forecast"] = 0.0
    cents = prices.assign(forecast=prediction_grid(series)["forecast"] * 100)
    tsrate = in_process_tsrate(warehouse, capsys, monkeypatch)
    exported = tsrate("export-inputs", str(tmp_path / "export"), *STUDY_FLAGS)
    assert exported.returncode == 0, exported.stderr
    before = every_table(warehouse)
    assert "raw.imported_systems" in before and "raw.study_imports" in before

    cents_file = str(write_csv(tmp_path, cents, "cents.csv"))
    windows = {t: len(s.end_positions) for t, s in series.items()}
    expected = (
        f"tsrate: error: {cents_file}: rejected, nothing was stored: forecasts for AAPL are "
        f"about 100x the prices they forecast (median ratio {cents_median(series, 'AAPL'):.3g} "
        f"over {windows['AAPL']} clean windows), for JPM about 100x (median ratio "
        f"{cents_median(series, 'JPM'):.3g} over {windows['JPM']} clean windows): another "
        "unit (cents?), returns or log prices? Import price forecasts in the study's unit, that "
        "of its inputs (the value column of `tsrate export-inputs`' inputs.parquet); a median "
        "ratio to each window's last clean input outside 0.2 to 5 is not a price forecast\n"
    )
    metadata = ["--metadata", "display_name=Mine"]
    for argv in (
        ["import-predictions", cents_file, "--system", "mine", "--manifest",
         str(tmp_path / "export"), "--no-baselines", "--no-build", *metadata],
        ["import", cents_file, "--system", "mine", *STUDY_FLAGS, "--no-baselines",
         "--no-build", *metadata],
    ):  # fmt: skip
        refused = tsrate(*argv)
        assert (refused.returncode, refused.stderr) == (2, expected), argv
        after = every_table(warehouse)
        assert list(after) == list(before)
        for name, rows in before.items():
            pd.testing.assert_frame_equal(rows, after[name], obj=name)

    prices_file = str(write_csv(tmp_path, prices, "prices.csv"))
    done = tsrate(
        "import", prices_file, "--system", "mine", *STUDY_FLAGS, "--no-baselines", "--no-build",
        *metadata,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with connect(warehouse) as con:
        stored = con.execute("select count(*) from raw.forecasts where system_id = 'mine'")
        assert stored.fetchone()[0] == len(prices)
        recorded = con.execute("select count(*) from raw.study_imports where system_id = 'mine'")
        assert recorded.fetchone()[0] == 1
