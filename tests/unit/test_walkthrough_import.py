"""The ML engineer's walk-through: bringing their own model (`tsrate import`,
`tsrate import-predictions`) and reading what the import says back.

Each test reproduces a message met on the walk-through that was not one line with a hint, or
that said something wrong, through the product's own readers and checks.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.support.import_study import STUDY, write_csv
from tsrate import TsrateError
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.export import read_manifest
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.blackbox.registry import check_known_system, read_metadata
from tsrate.robustness.blackbox.validation import ImportValidationError, read_prediction_file
from tsrate.robustness.sources import PriceValidationError, read_price_file
from tsrate.systems.registry import load_systems_seed

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


# -- the system id of an import without --metadata -------------------------------------------

SEED = pd.DataFrame(
    {"system_id": ["naive", "arima"], "accepted_perturbations": ["P0 P1 P2 P3", "P0 P1 P2 P3"]}
)
REGISTERED = pd.DataFrame({"system_id": ["drift_csv"], "accepted_perturbations": ["P0 P1"]})


def _refusal(system_id: str) -> str:
    with pytest.raises(TsrateError) as caught:
        check_known_system(system_id, SEED, STUDY, REGISTERED)
    return str(caught.value)


def test_a_misspelled_earlier_import_is_named():
    # it advised registering 'drift_cvs' as a new system, which would rate the typo
    message = _refusal("drift_cvs")
    assert "unknown system 'drift_cvs' (did you mean 'drift_csv'?)" in message
    assert "did you mean" not in _refusal("xyzzy")


def test_an_id_no_system_can_have_gets_the_id_rule_not_a_seed_row_to_copy():
    # it suggested the seed row `My Model,My model,,numeric,...`, an id the rule refuses
    message = _refusal("My Model")
    assert message.startswith("system id 'My Model' (8 characters): use 1 to 64 lower-case")
    assert "seeds/systems.csv" not in message


# -- what the import says, and what it records ----------------------------------------------


def _import(warehouse, path, system_id):
    said: list[str] = []
    with connect(warehouse) as con:
        import_forecasts(
            con,
            path,
            system_id,
            STUDY,
            systems_seed=load_systems_seed(),
            baselines=False,
            metadata={"family": "statistical"},
            progress=said.append,
        )
        recorded = con.execute(
            "select source from raw.study_imports where system_id = ?", [system_id]
        ).fetchall()
    return said, recorded


def test_the_import_says_whether_the_file_brought_quantiles(warehouse, good, tmp_path):
    said, _ = _import(warehouse, write_csv(tmp_path, good), "points_only")
    stored = [line for line in said if "imported points_only" in line]
    assert len(stored) == 1 and "point forecasts only" in stored[0], said
    assert "probabilistic metrics (WQL, CRPS, coverage) are null" in stored[0]
    levels = {f"q0.{k}": good["forecast"] + (k - 5) * 0.1 for k in range(1, 10)}
    with_quantiles = good.assign(**levels)
    said, _ = _import(warehouse, write_csv(tmp_path, with_quantiles, "q.csv"), "with_q")
    stored = [line for line in said if "imported with_q" in line]
    assert len(stored) == 1 and "with quantile forecasts q0.1 … q0.9" in stored[0], said


def test_the_import_records_where_the_file_is_not_how_it_was_typed(
    warehouse, good, tmp_path, monkeypatch
):
    # `tsrate systems` listed "imported from ../drift.csv": relative to a folder it never named
    folder = tmp_path / "models"
    folder.mkdir()
    write_csv(folder, good, "drift.csv")
    monkeypatch.chdir(folder)
    _, recorded = _import(warehouse, Path("..") / "models" / "drift.csv", "relative_path")
    assert recorded == [(str(folder / "drift.csv"),)]
    with connect(warehouse) as con:
        registered = con.execute(
            "select source from raw.imported_systems where system_id = 'relative_path'"
        ).fetchall()
    assert registered == [(str(folder / "drift.csv"),)]


@pytest.mark.parametrize(("separator", "named"), [(";", "';'"), ("\t", "a tab")])
def test_a_header_with_another_separator_says_so(tmp_path, separator, named):
    # the message showed ['ticker;window_end_date;...'] as one missing-column name, no hint
    header = ["ticker", "window_end_date", "perturbation_id", "horizon_step", "forecast"]
    path = tmp_path / "predictions.csv"
    path.write_text(
        separator.join(header)
        + "\n"
        + separator.join(["AAPL", "2022-04-22", "P0", "1", "1.5"])
        + "\n"
    )
    with pytest.raises(ImportValidationError) as caught:
        read_prediction_file(path)
    hint = f"(the header is separated by {named}: write the file comma-separated)"
    assert str(caught.value).endswith(hint), caught.value
    prices = tmp_path / "prices.csv"
    prices.write_text(
        separator.join(["ticker", "date", "close"])
        + "\nKO"
        + separator
        + "2022-01-03"
        + separator
        + "1.0\n"
    )
    with pytest.raises(PriceValidationError) as caught:
        read_price_file(prices)
    assert str(caught.value).endswith(hint), caught.value


def test_a_metadata_file_that_does_not_parse_says_where_on_one_line(tmp_path):
    # PyYAML's message, joined: "cannot be read: while parsing a flow sequence; in
    # "<unicode string>", line 1, column 15:; display_name: [unclosed; ^; expected ..."
    path = tmp_path / "model.yaml"
    path.write_text("display_name: [unclosed\n")
    with pytest.raises(TsrateError) as caught:
        read_metadata([str(path)])
    message = str(caught.value)
    assert "\n" not in message and "<unicode string>" not in message, message
    assert message.startswith(
        f"metadata file {path} is not valid YAML: expected ',' or ']', but got '<stream end>' "
        "(line 2, column 1); write a mapping of the systems seed's columns"
    ), message


@pytest.mark.parametrize(
    "text",
    ["{bad", "[1, 2]", '{"format_version": 1}'],
    ids=["not JSON", "not a manifest", "no study"],
)
def test_a_refused_export_manifest_says_how_to_get_a_good_one(tmp_path, text):
    # "m1/manifest.json is not valid JSON: Expecting property name ... (char 1)", no hint
    (tmp_path / "manifest.json").write_text(text)
    with pytest.raises(TsrateError) as caught:
        read_manifest(tmp_path)
    assert str(caught.value).endswith(
        "; export again with `tsrate export-inputs` rather than editing it"
    ), caught.value
