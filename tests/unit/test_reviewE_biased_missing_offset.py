"""The Biased system and a company whose metadata has no ``biased_offset``.

``--companies FILE`` (or a price file's company columns) may leave ``biased_offset`` out:
the column is optional. Such a ticker's offset is then missing (NaN), and Biased must say
so in one line with a hint, as it does for a ticker absent from the companies, not add NaN
to the actual future and fail the run on "non-finite forecast values"."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.config import Study, load_companies
from tsrate.robustness.companies import merge_companies, read_companies_file
from tsrate.systems import biased
from tsrate.systems.base import ForecastBatch, check_forecasts


def batch(ticker: str) -> ForecastBatch:
    futures = np.array([[101.0, 102.5]])
    return ForecastBatch(
        ticker, "P0", np.array(["2022-06-01"], dtype="datetime64[D]"), np.ones((1, 5)), 2,
        futures, (0.0, 1.0),
    )  # fmt: skip


def test_a_company_without_an_offset_is_named_not_forecast_as_nan(tmp_path):
    file = tmp_path / "companies.csv"
    file.write_text("ticker,company_name,industry\nXYZ,XYZ Corp,Technology\n")
    companies = merge_companies(load_companies(), read_companies_file(file))
    study = Study.from_vars({"study_tickers": ["AAPL", "XYZ"], "systems": ["biased"]})
    system = biased.create(study, companies)
    with pytest.raises(TsrateError, match="no biased_offset for XYZ"):
        check_forecasts("biased", batch("XYZ"), system.predict(batch("XYZ")))
    # AAPL's offset is 0 in the companies seed: its forecast is the actual future
    np.testing.assert_array_equal(system.predict(batch("AAPL")), [[101.0, 102.5]])
    assert "nan" not in system.fingerprint()
