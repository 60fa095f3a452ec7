"""The registration of an imported system (tsrate.robustness.blackbox.registry) at its
edges: the known-system and new-system checks, the
``--metadata`` argument forms, every metadata default and rule at its exact length bound,
and the append-only ``raw.imported_systems`` on an in-memory DuckDB (a repeat registration
writes nothing, any changed field writes a row, the latest wins).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep8_blackbox.json): the import tests check each rule once through a
whole import; these pin the documented defaults, the 200/2000-character and 80-character
bounds, which row of the seed is read and what a repeated registration returns, with
expectations written out by hand from the module's docstrings.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import duckdb
import pandas as pd
import pytest

from tests.support.import_study import STUDY
from tsrate import TsrateError
from tsrate.robustness.blackbox.registry import (
    check_known_system,
    check_new_system,
    read_metadata,
    register_system,
    registered_systems,
    system_metadata,
)

SEED = pd.DataFrame(
    {
        "system_id": ["naive", "seeded_a", "seeded_b"],
        "accepted_perturbations": ["P0 P1 P2 P3", "P0 P2", "P1 P3"],
    }
)
REGISTERED = pd.DataFrame(
    {"system_id": ["reg_a", "reg_b"], "accepted_perturbations": ["P0 P1", "P2 P3 P5"]}
)


def problems_of(call) -> str:
    with pytest.raises(TsrateError) as caught:
        call()
    return str(caught.value)


# -- known and new systems --------------------------------------------------------------------


def test_a_known_system_gives_its_own_rows_accepted_perturbations():
    assert check_known_system("seeded_a", SEED, STUDY, REGISTERED) == ("P0", "P2")
    assert check_known_system("seeded_b", SEED, STUDY, REGISTERED) == ("P1", "P3")
    assert check_known_system("reg_b", SEED, STUDY, REGISTERED) == ("P2", "P3", "P5")
    with pytest.raises(TsrateError, match="unknown system 'reg_a'"):
        check_known_system("reg_a", SEED, STUDY)  # no registrations given: unknown
    with pytest.raises(TsrateError, match="unknown system 'other'"):
        check_known_system("other", SEED, STUDY, REGISTERED)


def test_the_studys_own_system_is_refused_with_and_without_baselines():
    # a study's runs forecast its systems themselves: imported rows under such an id would
    # replace or mix with them in the marts, so --no-baselines does not make it importable
    text = problems_of(lambda: check_known_system("naive", SEED, STUDY, REGISTERED))
    assert "system 'naive' is one of the study's own systems ['naive']" in text
    assert "with or without --no-baselines" in text and "--system naive_imported" in text
    assert check_known_system("seeded_a", SEED, STUDY, REGISTERED) == ("P0", "P2")
    check_new_system("naive_v2", SEED, STUDY)
    own = dataclasses.replace(STUDY, systems=("naive", "mine"))
    with pytest.raises(TsrateError, match="system 'mine' is one of the study's own systems"):
        check_new_system("mine", SEED, own)


def test_a_new_system_id_is_checked_and_a_long_one_shortened_in_the_message():
    check_new_system("a", SEED, STUDY)
    check_new_system("m" * 64, SEED, STUDY)
    with pytest.raises(TsrateError, match="is a row of seeds/systems.csv"):
        check_new_system("seeded_a", SEED, STUDY)
    text = problems_of(lambda: check_new_system("m" * 65, SEED, STUDY))
    assert f"system id '{'m' * 65}' (65 characters): use 1 to 64" in text
    text = problems_of(lambda: check_new_system("M" * 80, SEED, STUDY))
    assert f"system id '{'M' * 80}' (80 characters)" in text  # 80 shown whole
    text = problems_of(lambda: check_new_system("M" * 81, SEED, STUDY))
    assert f"system id '{'M' * 77}...' (81 characters)" in text  # longer: 77 + '...'


# -- --metadata arguments -----------------------------------------------------------------------


def test_pairs_files_and_paths_with_an_equals_sign(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a=b.json").write_text(json.dumps({"family": "from_file"}))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c=d.yaml").write_text("modality: numeric+image\n")
    merged = read_metadata(
        ["a=b.json", "sub/c=d.yaml", "description = see a/b ", "display_name=x=y"]
    )
    assert merged == {
        "family": "from_file",  # a file in the current folder, though it looks like a pair
        "modality": "numeric+image",  # a path with '/' before its '=' is a file
        "description": "see a/b",  # '/' after the '=' is still a pair
        "display_name": "x=y",
    }
    for item in ("=x", " =x"):
        with pytest.raises(TsrateError, match="a key=value pair needs a key"):
            read_metadata([item])
    with pytest.raises(TsrateError, match="not a file and not a key=value pair"):
        read_metadata(["sub/absent=1.yaml"])
    (tmp_path / "m.yml").write_text("family: yml\nis_foundation_model: no\n")
    assert read_metadata(["m.yml"]) == {"family": "yml", "is_foundation_model": False}
    (tmp_path / "m.txt").write_text("family: txt\n")
    with pytest.raises(TsrateError, match="use .yaml, .yml or .json, not '.txt'"):
        read_metadata(["m.txt"])
    (tmp_path / "n.json").write_text("[1, 2]")
    with pytest.raises(TsrateError, match="must hold a mapping .* got list"):
        read_metadata(["n.json"])
    (tmp_path / "y.yaml").write_text("a: 1\nb:\n  - c\n")  # YAML that is not JSON
    assert read_metadata(["y.yaml"]) == {"a": 1, "b": ["c"]}


# -- system_metadata ----------------------------------------------------------------------------


def test_given_values_are_kept_and_missing_ones_defaulted():
    given = {
        "display_name": "Shown",
        "paper_symbol": "S",
        "modality": "numeric+image",
        "family": "fam",
        "purpose": "time-series",
        "architecture": "none",
        "is_foundation_model": "yes",
        "accepted_perturbations": "p2, P0 P2",
        "description": "Told.",
        "base_model": "base",
        "training_corpus": "public series",
        "training_cutoff": "2023-06-30",
    }
    assert system_metadata("sys", given, ["P0"], "f.csv") == {
        "system_id": "sys",
        "display_name": "Shown",
        "paper_symbol": "S",
        "modality": "numeric+image",
        "family": "fam",
        "purpose": "time-series",
        "architecture": "none",
        "is_foundation_model": True,
        "accepted_perturbations": "P2 P0",  # upper-cased, commas split, first order kept
        "description": "Told.",
        "base_model": "base",
        "training_corpus": "public series",
        "training_cutoff": dt.date(2023, 6, 30),
    }
    assert system_metadata("sys", {}, ["P3", "P1"], "f.csv") == {
        "system_id": "sys",
        "display_name": "sys",
        "paper_symbol": None,
        "modality": "numeric",
        "family": "imported",
        "purpose": None,
        "architecture": None,
        "is_foundation_model": None,
        "accepted_perturbations": "P1 P3",  # the file's, sorted
        "description": "Predictions imported from f.csv.",
        "base_model": None,
        "training_corpus": None,
        "training_cutoff": None,
    }
    blank = {key: "  " for key in given}  # blanks are missing values: the defaults again
    assert system_metadata("sys", blank, ["P3", "P1"], "f.csv") == system_metadata(
        "sys", {}, ["P3", "P1"], "f.csv"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [("true", True), ("Yes", True), (" 1 ", True), ("FALSE", False), ("no", False), ("0", False)],
)
def test_is_foundation_model_spellings(text, expected):
    assert system_metadata("sys", {"is_foundation_model": text})["is_foundation_model"] is expected
    assert system_metadata("sys", {"is_foundation_model": expected})["is_foundation_model"] is (
        expected
    )


def test_text_of_exactly_the_longest_length_is_accepted():
    row = system_metadata("sys", {"display_name": "d" * 200, "description": "e" * 2000})
    assert row["display_name"] == "d" * 200 and row["description"] == "e" * 2000
    text = problems_of(lambda: system_metadata("sys", {"display_name": "d" * 201}))
    assert "display_name is 201 characters long (at most 200)" in text
    text = problems_of(lambda: system_metadata("sys", {"family": "f" * 201}))
    assert "family is 201 characters long (at most 200)" in text
    text = problems_of(lambda: system_metadata("sys", {"description": "e" * 2001}))
    assert "description is 2001 characters long (at most 2000)" in text
    text = problems_of(lambda: system_metadata("sys", {"paper_symbol": "p" * 2000}))
    assert "paper_symbol is 2000 characters long (at most 200)" in text


def test_lists_are_single_values_except_the_accepted_perturbations():
    text = problems_of(lambda: system_metadata("sys", {"display_name": ["a", "b"]}))
    assert "display_name must be a single value, got ['a', 'b']" in text
    text = problems_of(lambda: system_metadata("sys", {"family": ("a",)}))
    assert "family must be a single value, got ('a',)" in text
    row = system_metadata("sys", {"accepted_perturbations": ("p1", "P0")})
    assert row["accepted_perturbations"] == "P1 P0"
    text = problems_of(lambda: system_metadata("sys", {"description": "tab\there"}))
    assert "description 'tab\\there' holds control characters" in text


def test_each_choice_is_checked_only_when_given():
    for key, good in (("purpose", "general-purpose"), ("architecture", "encoder-only")):
        assert system_metadata("sys", {key: good})[key] == good
        text = problems_of(lambda key=key: system_metadata("sys", {key: "other"}))
        assert f"{key} 'other' is not one of" in text and "modality" not in text
    text = problems_of(lambda: system_metadata("sys", {"modality": "image"}))
    assert "modality 'image' is not one of numeric, numeric+image" in text
    text = problems_of(lambda: system_metadata("sys", {"is_foundation_model": "maybe"}))
    assert text.endswith(
        "rejected, nothing was stored: is_foundation_model 'maybe' is not true or false"
    )


def test_accepted_perturbations_against_the_file_and_the_modality():
    row = system_metadata("sys", {"accepted_perturbations": "P0 P1 P2"}, ["P1"])
    assert row["accepted_perturbations"] == "P0 P1 P2"  # more than the file: kept
    text = problems_of(
        lambda: system_metadata("sys", {"accepted_perturbations": "P0 p7 X"}, ["P0"])
    )
    assert "accepted_perturbations: unknown perturbation id(s) ['P7', 'X']; known: P0, P1" in text
    row = system_metadata(
        "sys", {"modality": "numeric+image", "accepted_perturbations": "P4 P5 P6"}, ["P5"]
    )
    assert row["accepted_perturbations"] == "P4 P5 P6"
    text = problems_of(lambda: system_metadata("sys", {"accepted_perturbations": "P0 P6 P4"}))
    assert "accepted_perturbations ['P6', 'P4'] perturb the image input, but modality is" in text
    text = problems_of(
        lambda: system_metadata("sys", {"accepted_perturbations": "P0 P2"}, ["P0", "P1", "P3"])
    )
    assert "the file has perturbation(s) ['P1', 'P3'] that accepted_perturbations (P0 P2)" in text


# -- raw.imported_systems -----------------------------------------------------------------------


def test_registrations_append_only_when_something_changed():
    con = duckdb.connect(":memory:")
    try:
        assert registered_systems(con).empty  # no table yet
        assert list(registered_systems(con).columns)[0] == "system_id"
        first = system_metadata("sys_a", {"display_name": "A"}, ["P0"], "a.csv")
        assert register_system(con, first, "a.csv") is True
        assert register_system(con, first, "again.csv") is False  # the same: nothing written
        other = system_metadata("sys_b", {"display_name": "B"}, ["P1"], "b.csv")
        assert register_system(con, other, "b.csv") is True
        assert register_system(con, first, "a.csv") is False  # sys_b's row is not sys_a's
        changed = {**first, "base_model": "base"}  # one field of ten changed: a new row
        assert register_system(con, changed, "c.csv") is True
        count = con.execute("select count(*) from raw.imported_systems").fetchone()[0]
        assert count == 3
        latest = registered_systems(con).set_index("system_id")
        assert list(latest.index) == ["sys_a", "sys_b"]
        assert latest.loc["sys_a", "base_model"] == "base"
        assert latest.loc["sys_b", "display_name"] == "B"
        assert register_system(con, changed, "d.csv") is False
        assert register_system(con, first, "e.csv") is True  # back to the first: the latest
        latest = registered_systems(con).set_index("system_id")
        assert pd.isna(latest.loc["sys_a", "base_model"])
    finally:
        con.close()
