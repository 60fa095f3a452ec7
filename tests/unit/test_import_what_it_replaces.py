"""What an ML engineer importing their own model is told: an import that replaces an earlier
import of the same id in a study names it (and how to keep both); a later ``--metadata``
names the fields it drops; ``tsrate systems`` lists every study an id is imported into; a
rejected file's problems carry their hints, every kind found at once, and a file made for
another study is told so.

Uses tests/unit/conftest.py's ``warehouse`` (AAPL, JPM prices) and ``good`` (the import
study's full grid) fixtures; imports without baselines, so no system is run."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pandas as pd
import pytest

from tests.support.import_study import STUDY, imported, rejected
from tsrate.platform.warehouse import connect
from tsrate.robustness import studies
from tsrate.robustness.blackbox.validation import ImportValidationError
from tsrate.robustness.forecast.plan import load_series

FULL = {
    "display_name": "Mine",
    "family": "foundation",
    "architecture": "decoder-only",
    "is_foundation_model": "true",
}
#: a file name too long for a line of `tsrate systems`
LONG_NAME = "wide_" + "x" * 90 + ".csv"
#: a study of the same tickers from later on: its windows are the last ones of STUDY's
LATER = dataclasses.replace(STUDY, start=dt.date(2022, 10, 15))


def windows_of(good, series):
    """The rows of ``good`` on the windows of ``series`` (another study's)."""
    ends = {t: {str(d) for d in s.window_end_dates} for t, s in series.items()}
    pairs = zip(good["ticker"], good["window_end_date"], strict=True)
    return good[[date in ends[ticker] for ticker, date in pairs]]


def shifted(good, by):
    frame = good.copy()
    frame["forecast"] = frame["forecast"].astype(float) + by
    return frame


def test_a_reimport_under_the_same_id_names_what_it_replaces(warehouse, good, tmp_path):
    _, first = imported(warehouse, good, tmp_path, "first.csv", "again_model")
    assert not [line for line in first if "replaces" in line]
    _, same = imported(warehouse, good, tmp_path, "first.csv", "again_model")
    assert not [line for line in same if "replaces" in line]  # the same forecasts: no change
    _, said = imported(warehouse, shifted(good, 0.5), tmp_path, "second.csv", "again_model")
    notes = [line for line in said if "replaces it" in line]
    assert len(notes) == 1, said
    note = notes[0]
    assert "from first.csv" in note and "new forecasts only" in note
    assert "--system again_model_v1" in note and "docs/ratings.md" in note
    assert "\n" not in note


def test_an_import_into_another_study_replaces_nothing_and_is_listed(warehouse, good, tmp_path):
    imported(warehouse, good, tmp_path, LONG_NAME, "two_studies")
    with connect(warehouse) as con:
        later = load_series(con, LATER)
    _, said = imported(
        warehouse, windows_of(good, later), tmp_path, "narrow.csv", "two_studies", LATER
    )
    assert not [line for line in said if "replaces" in line]
    with connect(warehouse) as con:
        lines = studies.imported_system_lines(con)
    mine = [i for i, line in enumerate(lines) if line.startswith("two_studies  ")]
    assert len(mine) == 1, lines
    also = lines[mine[0] + 1]
    assert also.startswith("  also in study ") and "wide_xxxx" in also, lines
    assert len(also) + 2 <= 100  # printed indented by two
    assert "narrow.csv" in lines[mine[0]]


def test_a_later_metadata_names_the_fields_it_drops(warehouse, good, tmp_path):
    imported(warehouse, good, tmp_path, "m1.csv", "meta_model", metadata=FULL)
    _, said = imported(
        warehouse, good, tmp_path, "m2.csv", "meta_model", metadata={"display_name": "Mine 2"}
    )
    notes = [line for line in said if "drops" in line]
    assert len(notes) == 1, said
    for field in ("family=foundation", "architecture=decoder-only", "is_foundation_model"):
        assert field in notes[0]
    assert "display_name" not in notes[0] and "hint:" in notes[0]
    _, kept = imported(warehouse, good, tmp_path, "m3.csv", "meta_model", metadata=FULL)
    assert not [line for line in kept if "drops" in line]  # nothing set before is left out


def test_bad_values_and_steps_carry_hints_and_are_reported_together(warehouse, good, tmp_path):
    frame = good.copy().astype({"forecast": object})
    frame.loc[3, "forecast"] = "abc"
    extra = frame.iloc[[10]].copy()
    extra["horizon_step"] = STUDY.horizon + 1
    bad = pd.concat([frame.drop(index=[20]), extra], ignore_index=True)  # step 21; a gap
    message = rejected(
        warehouse,
        lambda: imported(warehouse, bad, tmp_path, "bad.csv", "bad_model"),
        "forecast is not a number (first: 'abc'); every forecast must be a price",
        f"horizon_step outside 1..{STUDY.horizon} (first: {STUDY.horizon + 1}); the file must "
        f"hold steps 1..{STUDY.horizon}",
        "incomplete grid, 1 of",
        error=ImportValidationError,
    )
    assert "\n" not in message


def test_a_file_of_another_study_is_told_so(warehouse, good, tmp_path):
    with connect(warehouse) as con:
        later = load_series(con, LATER)
    narrow = windows_of(good, later)
    assert 0 < len(narrow) < len(good) * 0.75
    with pytest.raises(ImportValidationError) as caught:
        imported(warehouse, narrow, tmp_path, "narrow2.csv", "other_study")
    assert "the file does not match this study" in str(caught.value)
    assert "incomplete grid" not in str(caught.value)
    assert "--manifest of the export it was made from" in caught.value.hint
    few = good.drop(index=good.index[: STUDY.horizon])  # one window short: a gap, not a study
    with pytest.raises(ImportValidationError) as caught:
        imported(warehouse, few, tmp_path, "few.csv", "other_study")
    assert "incomplete grid" in str(caught.value)
    assert "does not match" not in str(caught.value)


def test_a_reimport_of_a_withdrawn_system_says_it_brings_it_back(warehouse, good, tmp_path):
    from tsrate.robustness.withdrawals import withdraw_system

    imported(warehouse, good, tmp_path, "kept.csv", "kept_model")
    _, first = imported(warehouse, good, tmp_path, "back.csv", "back_model")
    assert not [line for line in first if "withdrawn" in line]
    with connect(warehouse) as con:
        (study_id,) = con.execute(
            "select distinct study_id from raw.study_imports where system_id = 'back_model'"
        ).fetchone()
        withdrawal = withdraw_system(con, "back_model", study_id, reason="a wrong file")
    assert withdrawal.recorded
    imported(warehouse, shifted(good, 1.0), tmp_path, "kept2.csv", "kept_model")  # another id
    _, said = imported(warehouse, good, tmp_path, "back.csv", "back_model")
    notes = [line for line in said if "withdrawn" in line]
    assert len(notes) == 1, said
    note = notes[0]
    assert note.startswith(f"back_model was withdrawn from study {withdrawal.study_name} at ")
    assert f"{withdrawal.withdrawn_at:%Y-%m-%d %H:%M} (a wrong file)" in note
    assert "brings it back" in note and "`tsrate withdraw back_model --study " in note
    _, again = imported(warehouse, good, tmp_path, "back.csv", "back_model")  # back already
    assert not [line for line in again if "withdrawn" in line], again
    _, other = imported(warehouse, good, tmp_path, "kept.csv", "kept_model")  # never withdrawn
    assert not [line for line in other if "withdrawn" in line], other
