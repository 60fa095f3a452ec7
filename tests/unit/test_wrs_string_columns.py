"""The fast text path of the WRS pair table (string_columns=True): the same table as the
object path converted with astype("string"), value for value (the scale benchmark's lever)."""

import numpy as np
import pandas as pd
import pytest

from tsrate.methods.wrs import text_array, weighted_rejection_pairs

LEVELS = pd.DataFrame({"confidence": [0.95, 0.75, 0.6], "weight": [1.0, 0.8, 0.6]})


def _errors() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for system in ("naive", "biased"):
        for pert in ("P0", "P1"):
            for industry, tickers in (("Energy", ["XOM", "CVX", "BP"]), ("Tech", ["MSFT", "AAPL"])):
                for ticker in tickers:
                    for day in range(6):
                        rows.append((system, pert, industry, ticker, day, rng.gamma(2.0, 1.0)))
    frame = pd.DataFrame(
        rows, columns=["system_id", "perturbation_id", "industry", "ticker", "day", "y"]
    )
    return frame.astype({"system_id": "category", "ticker": "category"})


@pytest.mark.parametrize("within", [None, "industry"])
def test_string_columns_equal_the_object_path(within):
    group = "industry" if within is None else "ticker"
    objects = weighted_rejection_pairs(_errors(), group, LEVELS, within, "y")
    strings = weighted_rejection_pairs(_errors(), group, LEVELS, within, "y", string_columns=True)
    text = ["system_id", "perturbation_id", "within_group", "group_a", "group_b"]
    assert (strings.dtypes[text] == "string").all()
    pd.testing.assert_frame_equal(strings, objects.astype(dict.fromkeys(text, "string")))
    if within is None:
        assert strings["within_group"].isna().all()
    else:
        assert set(strings["within_group"]) == {"Energy", "Tech"}


def test_text_array_gathers_values_by_index():
    values = np.array(["b", None, "a"], dtype=object)
    rows = np.array([2, 0, 1, 2, 0])
    got = pd.Series(text_array(values, rows))
    expected = pd.Series(values[rows], dtype=object).astype("string")
    pd.testing.assert_series_equal(got, expected)
    assert got.isna().tolist() == [False, False, True, False, False]
