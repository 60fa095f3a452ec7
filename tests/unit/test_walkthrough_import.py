"""The ML engineer's walk-through: bringing their own model (`tsrate import`,
`tsrate import-predictions`) and reading what the import says back.

Each test reproduces a message met on the walk-through that was not one line with a hint, or
that said something wrong, through the product's own readers and checks.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tsrate.robustness.blackbox.validation import ImportValidationError, read_prediction_file
from tsrate.robustness.sources import PriceValidationError, read_price_file

#: bytes no CSV or Parquet reader takes: pandas' tokenizer error ends in a newline
GARBAGE = bytes(range(256)) * 10


def _one_line_with_hint(message: str, *fragments: str) -> None:
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message


def test_an_unreadable_prediction_csv_is_one_line_saying_what_to_write(tmp_path):
    path = tmp_path / "predictions.csv"
    path.write_bytes(GARBAGE)
    with pytest.raises(ImportValidationError) as caught:
        read_prediction_file(path)
    _one_line_with_hint(
        str(caught.value),
        "cannot be read as CSV (Error tokenizing data",
        "header line ticker,window_end_date,perturbation_id,horizon_step,forecast",
    )


def test_an_unreadable_prediction_parquet_says_what_to_write(tmp_path):
    path = tmp_path / "predictions.parquet"
    path.write_text("hello")
    with pytest.raises(ImportValidationError) as caught:
        read_prediction_file(path)
    _one_line_with_hint(
        str(caught.value),
        "cannot be read as Parquet (",
        "columns ticker,window_end_date,perturbation_id,horizon_step,forecast",
    )


def test_an_unreadable_price_file_is_one_line_saying_what_to_write(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_bytes(GARBAGE)
    with pytest.raises(PriceValidationError) as caught:
        read_price_file(path)
    _one_line_with_hint(
        str(caught.value), "cannot be read as CSV (", "header line ticker,date,close"
    )


def test_a_readable_file_still_reads(tmp_path):
    path = tmp_path / "prices.csv"
    pd.DataFrame({"ticker": ["KO"] * 3, "date": ["2022-01-03", "2022-01-04", "2022-01-05"]}).assign(
        close=[1.0, 2.0, 3.0]
    ).to_csv(path, index=False)
    assert len(read_price_file(path)) == 3
