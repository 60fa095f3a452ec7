"""A manifest refused because the study's companies' metadata changed since it was exported
says so, naming the tickers and fields (tsrate.robustness.blackbox.study_switch).

The study id hashes the companies' metadata, so an ingest of a price file with company
columns gives the same tickers and dates a new id; the refusal used to name two studies that
read the same ("same tickers, same dates") without saying what differs. In process (the
CLI's main), ``--no-build --no-baselines``, on a small real warehouse.
"""

from __future__ import annotations

import pandas as pd

from tests.support.import_study import (
    RAW_TABLES,
    STUDY,
    STUDY_FLAGS,
    in_process_tsrate,
    prediction_grid,
    snapshot,
    write_csv,
)
from tests.support.warehouses import ingest
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.plan import load_series


def test_a_study_whose_companies_changed_is_refused_naming_what_changed(
    tmp_path, capsys, monkeypatch
):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    tsrate = in_process_tsrate(warehouse, capsys, monkeypatch)
    exported = tmp_path / "inputs"
    assert tsrate("export-inputs", str(exported), *STUDY_FLAGS).returncode == 0
    with connect(warehouse) as con:
        grid = prediction_grid(load_series(con, STUDY))
    predictions = write_csv(tmp_path, grid[grid["perturbation_id"] == "P0"], "mine.csv")
    common = ["--system", "mine", "--no-baselines", "--no-build", "--metadata", "family=foundation"]
    first = tsrate("import-predictions", str(predictions), "--manifest", str(exported), *common)
    assert first.returncode == 0, first.stderr

    # a price file carrying AAPL's company columns, with other values than the seed's
    with connect(warehouse, read_only=True) as con:
        rows = con.execute(
            "select ticker, price_date as date, close from raw.prices where ticker = 'AAPL' "
            "order by price_date desc limit 5"
        ).df()
    prices = tmp_path / "aapl.csv"
    rows.assign(company_name="Apple Renamed", industry="Hardware").to_csv(prices, index=False)
    assert tsrate("ingest", str(prices)).returncode == 0

    again = tmp_path / "inputs-again"
    assert tsrate("export-inputs", str(again), *STUDY_FLAGS).returncode == 0
    before = snapshot(warehouse)
    refused = tsrate("import-predictions", str(predictions), "--manifest", str(again), *common)
    assert refused.returncode == 2 and refused.stdout == ""
    (line,) = refused.stderr.strip().splitlines()
    assert (
        "the two differ only in the companies' metadata, stored since that study ran (an "
        "ingest of a price file with company columns replaces it): AAPL (company_name, "
        "industry): this import would"
    ) in line, line
    after = snapshot(warehouse)
    for table in RAW_TABLES:
        pd.testing.assert_frame_equal(before[table], after[table], obj=f"raw.{table}")
