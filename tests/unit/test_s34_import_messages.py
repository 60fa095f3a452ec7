"""Import refusals a newcomer can act on, each one line with its fix:

- ``tsrate import FILE --system naive --metadata display_name=x`` said "import without
  --metadata", which was then refused as one of the study's own systems: the first refusal
  now names the fix, another id (``--system naive_imported``);
- a Parquet file's NaN or inf was quoted as numpy's ``np.float64(inf)``, a CSV's empty cell
  as ``''``: both files' values are quoted plainly (``inf``, ``nan``, ``empty``);
- a file of forecasts for steps 1..10 of a 20-step study gave one line of 1,588 characters
  (each window's list of steps, for three of its 24 pairs): the pairs with the same gap are
  named together, the gap once ("steps 11..20 in each");
- ``tsrate import --system x --metadata k=v FILE`` said only "the following arguments are
  required: FILE" (``--metadata`` takes every value up to the next option, FILE too): it now
  says which option took the file, and to put FILE before it.

The expected lines are written out by hand; the real CLI's ``main`` runs in this process on
the unit tests' small warehouse, the real validation on the hand-made grid of
tests/support/prediction_grid.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.support import prediction_grid
from tests.support.import_study import STUDY_FLAGS, in_process_tsrate, write_csv
from tests.support.prediction_grid import H, grid_rows, validate
from tsrate import cli
from tsrate.robustness.blackbox.validation import (
    ImportValidationError,
    read_prediction_file,
    validate_predictions,
)

OWN_SYSTEM = (
    "tsrate: error: system 'naive' is one of the study's own systems ['naive'], which its "
    "runs forecast themselves (with or without --no-baselines), so imported rows would replace "
    "or mix with them; import under another system id, e.g. --system naive_imported "
    "--metadata display_name='...'"
)
FORECAST_HERE = (
    "tsrate: error: system 'chronos' is a system tsrate forecasts itself (seeds/systems.csv "
    "implementation tsrate.systems.chronos_model), so imported rows would replace or mix with "
    "its own forecasts in every study that runs it; import under another system id, e.g. "
    "--system chronos_imported --metadata display_name='...'"
)


# -- a system tsrate forecasts itself, registered with --metadata ------------------------------


@pytest.mark.parametrize(
    ("system_id", "expected"), [("naive", OWN_SYSTEM), ("chronos", FORECAST_HERE)]
)
def test_registering_a_system_tsrate_forecasts_names_another_id_first(
    warehouse, good, tmp_path, capsys, monkeypatch, system_id, expected
):
    tsrate = in_process_tsrate(warehouse, capsys, monkeypatch)
    path = write_csv(tmp_path, good, "cli.csv")
    for metadata in (["--metadata", "display_name=x"], []):  # the same refusal either way
        result = tsrate(
            "import", str(path), "--system", system_id, *metadata, *STUDY_FLAGS, "--no-build"
        )
        assert result.returncode == 2 and result.stderr == expected + "\n", result.stderr


# -- values quoted plainly, from a CSV and a Parquet file alike --------------------------------


def _rejected(tmp_path, frame, name) -> str:
    with pytest.raises(ImportValidationError) as caught:
        validate(tmp_path, frame, name)
    return str(caught.value)


def test_nan_and_inf_are_quoted_plainly_from_csv_and_parquet(tmp_path):
    frame = grid_rows(tickers=("JPM",), quantiles=True)
    frame.loc[1, "forecast"] = np.inf
    frame.loc[3, "forecast"] = np.nan
    frame.loc[2, "q0.1"] = np.nan  # pandas writes a CSV's NaN as an empty cell
    frame.loc[4, "q0.9"] = np.inf
    assert _rejected(tmp_path, frame, "p.csv") == (
        f"{tmp_path / 'p.csv'}: rejected, nothing was stored: lines 3, 5: forecast is missing "
        "or not finite (first: inf); every forecast must be a finite number; lines 4, 6: "
        "quantile is missing or not finite (first: q0.1 = empty); give all nine quantiles on "
        "every row, or leave the quantile columns out"
    )
    assert _rejected(tmp_path, frame, "p.parquet") == (
        f"{tmp_path / 'p.parquet'}: rejected, nothing was stored: rows 2, 4: forecast is "
        "missing or not finite (first: inf); every forecast must be a finite number; rows 3, "
        "5: quantile is missing or not finite (first: q0.1 = nan); give all nine quantiles on "
        "every row, or leave the quantile columns out"
    )


def test_text_is_quoted_numbers_and_spelled_missing_values_are_not(tmp_path):
    frame = grid_rows(tickers=("JPM",)).astype({"forecast": object, "horizon_step": object})
    frame.loc[0, "forecast"] = "-inf"
    frame.loc[1, "forecast"] = "NaN"
    frame.loc[2, "forecast"] = "1_000"  # Python's float() takes it; pandas does not
    frame.loc[3, "horizon_step"] = "2.5"
    frame.loc[4, "forecast"] = "x" * 41
    text = _rejected(tmp_path, frame, "p.csv")
    assert "line 5: horizon_step is not a whole number (first: 2.5)" in text
    assert "lines 4, 6: forecast is not a number (first: '1_000')" in text
    assert "lines 2, 3: forecast is missing or not finite (first: -inf)" in text
    frame.loc[0, "forecast"] = "NaN"
    frame.loc[2, "forecast"] = "x" * 41  # longer than 40 characters: cut
    text = _rejected(tmp_path, frame, "p.csv")
    assert "lines 2, 3: forecast is missing or not finite (first: NaN)" in text
    assert f"lines 4, 6: forecast is not a number (first: '{'x' * 39}…')" in text


def test_a_parquet_null_and_a_parquet_timestamp_are_quoted_plainly(tmp_path):
    frame = grid_rows(tickers=("JPM",)).astype({"window_end_date": object})
    frame.loc[2, "window_end_date"] = None
    text = _rejected(tmp_path, frame, "p.parquet")
    assert "row 3: window_end_date is not a date like 2022-10-14 (first: null)" in text
    dates = grid_rows(tickers=("JPM",)).astype({"window_end_date": "datetime64[ns]"})
    dates.loc[1, "window_end_date"] += np.timedelta64(12, "h")
    text = _rejected(tmp_path, dates, "p.parquet")
    assert "row 2: window_end_date is not a date like 2022-10-14 (first: 2022-10-05 12:00:00)" in (
        text
    )


# -- an incomplete grid said once for the pairs alike -----------------------------------------


def test_short_forecasts_in_every_pair_are_one_short_problem(tmp_path):
    """Steps 1 and 2 only, for 2 tickers x 3 perturbations (the trial's file: steps 1..10 of
    20, 24 pairs, 3672 windows)."""
    frame = grid_rows(perturbations=("P0", "P1", "P2"))
    text = _rejected(tmp_path, frame[frame["horizon_step"] < H], "p.csv")
    assert text == (
        f"{tmp_path / 'p.csv'}: rejected, nothing was stored: every (ticker, perturbation) pair "
        "of the file (6): incomplete grid, 30 of 90 forecasts (windows × steps 1..3) missing, "
        "in 30 of 30 windows: step 3 in each"
    )


def test_step_runs_and_pairs_are_named_briefly(tmp_path):
    study = grid_rows(tickers=("AAPL",), perturbations=("P0", "P1", "P2", "P3"))
    # every window of P0..P2 lacks steps 1 and 3; P3 is complete
    gap = study["perturbation_id"].ne("P3") & study["horizon_step"].ne(2)
    text = _rejected(tmp_path, study[~gap], "p.csv")
    assert text.endswith(
        "AAPL P0, AAPL P1 and AAPL P2: incomplete grid, 48 of 72 forecasts (windows × steps "
        "1..3) missing, in 24 of 24 windows: steps 1, 3 in each"
    )
    # five of six pairs alike (AAPL's 8 windows, JPM's 2): three are named, two counted
    six = grid_rows(perturbations=("P0", "P1", "P2"))
    jpm_p2 = six["ticker"].eq("JPM") & six["perturbation_id"].eq("P2")
    text = _rejected(tmp_path, six[jpm_p2 | six["horizon_step"].eq(1)], "p.csv")
    assert text.endswith(
        ": AAPL P0, AAPL P1, AAPL P2 and 2 more pairs: incomplete grid, 56 of 84 forecasts "
        "(windows × steps 1..3) missing, in 28 of 28 windows: steps 2..3 in each"
    )
    # four of six: three named, one counted
    jpm = six["ticker"].eq("JPM") & six["perturbation_id"].ne("P0")
    text = _rejected(tmp_path, six[jpm | six["horizon_step"].eq(1)], "p.csv")
    assert text.endswith(
        ": AAPL P0, AAPL P1, AAPL P2 and 1 more pair: incomplete grid, 52 of 78 forecasts "
        "(windows × steps 1..3) missing, in 26 of 26 windows: steps 2..3 in each"
    )


def test_five_runs_of_steps_show_four_then_an_ellipsis(tmp_path, monkeypatch):
    monkeypatch.setattr(prediction_grid, "H", 10)  # grid_rows writes steps 1..10
    frame = grid_rows(tickers=("JPM",))
    path = tmp_path / "p.csv"
    frame[frame["horizon_step"] % 2 == 0].to_csv(path, index=False)  # steps 1, 3, 5, 7, 9 lack
    read, _ = read_prediction_file(path)
    with pytest.raises(ImportValidationError) as caught:
        study = dataclasses.replace(prediction_grid.SMALL, horizon=10)
        validate_predictions(read, str(path), study, prediction_grid.SERIES, "ext")
    assert str(caught.value).endswith("in 2 of 2 windows: steps 1, 3, 5, 7, … in each")


# -- FILE after --metadata ----------------------------------------------------------------------


def _usage_error(capsys, *args) -> str:
    with pytest.raises(SystemExit) as stop:
        cli.main(list(args))
    assert stop.value.code == 2
    return capsys.readouterr().err


TAKEN = (
    "tsrate: error: tsrate {command}: the following arguments are required: FILE (--metadata "
    "took {value!r} as one of its values: it takes every value up to the next option; put "
    "FILE before --metadata); see 'tsrate {command} --help'\n"
)
REQUIRED = (
    "tsrate: error: tsrate import: the following arguments are required: FILE; see "
    "'tsrate import --help'\n"
)


def test_a_file_after_metadata_is_named_with_the_fix(capsys, tmp_path):
    existing = tmp_path / "a=b.csv"  # a key=value lookalike that names a file
    existing.write_text("x")
    for command, tail, taken in (
        ("import", ["--system", "x", "--metadata", "display_name=x", "good.csv"], "good.csv"),
        ("import", ["--metadata", "k=v", "good.parquet", "--system", "x"], "good.parquet"),
        ("import", ["--metadata", "m.yaml", "--system", "x", "--metadata", "p.csv"], "p.csv"),
        ("import", ["--system", "x", "--metadata", "k=v", str(existing)], str(existing)),
        ("import-predictions", ["--system", "x", "--manifest", "d", "--metadata", "f"], "f"),
        ("import", ["--system", "x", "--meta", "display_name=x", "good.csv"], "good.csv"),
    ):
        expected = TAKEN.format(command=command, value=taken)
        assert _usage_error(capsys, command, *tail) == expected


def test_a_missing_file_without_such_a_value_is_the_usual_error(capsys):
    for tail in (
        ["--system", "x", "--metadata", "display_name=x"],  # a pair
        ["--system", "x", "--metadata", "my_model.yaml"],  # a metadata file
        ["--metadata", "p.csv", "--metadata", "k=v", "--system", "x"],  # the last use counts
        ["--system", "x", "--metadata=display_name=x"],  # one value: nothing taken
        ["--system", "x"],
    ):
        assert _usage_error(capsys, "import", *tail) == REQUIRED
    # only an option is missing: FILE was given, and --metadata's last value is not taken
    line = _usage_error(capsys, "import-predictions", "f.csv", "--system", "x", "--metadata", "y")
    assert line == (
        "tsrate: error: tsrate import-predictions: the following arguments are required: "
        "--manifest; see 'tsrate import-predictions --help'\n"
    )
