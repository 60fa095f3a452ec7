"""Studies as stored entities (``tsrate.robustness.studies``) at the edges a mutation sweep
found untested.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep9_studies.json). What is pinned, each against values worked out here:
a ticker without company metadata (absent, None, NaN, or no companies frame at all) stores
None, never the text "None" or "nan"; the study of ``dbt_project.yml``'s vars with the seed is
named ``default`` and any other ``study-<first 8 hex digits>``; a name taken by another study
is refused in one line naming it, and a known study given a new name is renamed; an import
is recorded under its run's study (and an unknown run refused naming it); an id prefix
resolves from 4 digits on, never from 3; "no study" lists the known names sorted by name;
the listing lines show the systems of complete runs (or say there is none); imported
systems, the newest run's study, the newest complete run and the stored company metadata
read back what was written; and the current study of an empty or half-migrated warehouse
is None or a one-line refusal naming the study asked for.
"""

from __future__ import annotations

import hashlib
import json

import duckdb
import pandas as pd
import pytest

from tests.support.old_runs import STUDY, insert_run, study_with
from tests.support.warehouses import OLD_RUNS_DDL
from tsrate import TsrateError
from tsrate.config import Study
from tsrate.platform.raw_schema import COMPANIES_DDL, STUDIES_DDL
from tsrate.robustness import studies


def _hand_id(study: Study, companies: dict[str, tuple]) -> str:
    """SHA-256 of the sorted-key compact JSON of the definition, 16 hex digits (by hand)."""
    definition = {
        "arima_order": list(study.arima_order),
        "companies": [
            {"biased_offset": companies.get(t, (None,) * 3)[2],
             "company_name": companies.get(t, (None,) * 3)[0],
             "industry": companies.get(t, (None,) * 3)[1], "ticker": t}
            for t in sorted(study.tickers)
        ],
        "context_length": study.context_length, "end": str(study.end),
        "horizon": study.horizon, "perturbation_phase": study.perturbation_phase,
        "perturbations": sorted(study.perturbations), "random_seed": study.seed,
        "start": str(study.start), "stride": study.stride, "tickers": sorted(study.tickers),
    }  # fmt: skip
    text = json.dumps(definition, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.fixture
def con():
    connection = duckdb.connect()
    yield connection
    connection.close()


# --- company metadata ---------------------------------------------------------------------


def test_a_ticker_without_metadata_stores_none_not_the_text_none_or_nan():
    companies = pd.DataFrame(
        {"ticker": ["aapl ", "JPM"], "company_name": ["Apple Inc.", None],
         "industry": [float("nan"), "Banking"], "biased_offset": [None, "x"]}
    )  # fmt: skip
    rows = studies.company_rows(study_with(study_tickers=["JPM", "AAPL", "XOM"]), companies)
    assert rows == [
        {"ticker": "AAPL", "company_name": "Apple Inc.", "industry": None, "biased_offset": None},
        {"ticker": "JPM", "company_name": None, "industry": "Banking", "biased_offset": None},
        {"ticker": "XOM", "company_name": None, "industry": None, "biased_offset": None},
    ]
    assert studies._text(None) is None and studies._text(float("nan")) is None
    assert studies._text(" a ") == "a" and studies._text("  ") is None


def test_no_companies_frame_means_unknown_metadata_for_every_ticker():
    unknown = {"company_name": None, "industry": None, "biased_offset": None}
    assert studies.company_rows(STUDY, None) == [
        {"ticker": "AAPL", **unknown},
        {"ticker": "JPM", **unknown},
    ]
    empty = pd.DataFrame(columns=["ticker", "company_name", "industry", "biased_offset"])
    assert studies.company_rows(STUDY, empty) == studies.company_rows(STUDY, None)
    assert studies.study_id_of(studies.study_definition(STUDY, None)) == _hand_id(STUDY, {})


# --- names ----------------------------------------------------------------------------------


def test_the_vars_study_with_the_seed_is_named_default_and_any_other_by_its_id(con):
    from tsrate.config import load_companies

    seed = load_companies()
    default_id = studies.register_study(con, Study.from_vars(), seed)
    other_id = studies.register_study(con, STUDY, seed)
    names = dict(con.execute("select study_id, study_name from raw.studies").fetchall())
    assert names == {default_id: "default", other_id: f"study-{other_id[:8]}"}


def test_a_name_taken_by_another_study_is_refused_naming_it(con):
    first = studies.register_study(con, STUDY, None, name="mine")
    with pytest.raises(TsrateError, match=f"study name 'mine' is taken by study {first}"):
        studies.register_study(con, study_with(stride=2), None, name="mine")
    assert con.execute("select count(*) from raw.studies").fetchone()[0] == 1
    # the same study may be registered again under its own name
    assert studies.register_study(con, STUDY, None, name="mine") == first


def test_a_known_study_given_a_new_name_is_renamed_and_keeps_its_name_otherwise(con):
    study_id = studies.register_study(con, STUDY, None, name="first")
    assert studies.register_study(con, STUDY, None) == study_id
    assert con.execute("select study_name from raw.studies").fetchall() == [("first",)]
    assert studies.register_study(con, STUDY, None, name="second") == study_id
    assert con.execute("select study_name from raw.studies").fetchall() == [("second",)]


# --- imports and resolution ------------------------------------------------------------------


def test_an_import_is_recorded_under_its_runs_study_and_an_unknown_run_refused(con):
    con.execute(OLD_RUNS_DDL)
    insert_run(con, "r1", STUDY, "2026-01-01")
    study_id = studies.ensure_studies(con)[0][1]
    assert studies.record_import(con, "r1", "ext", "f.csv", "ab" * 32) == study_id
    row = con.execute(
        "select run_id, study_id, system_id, source, file_sha256 from raw.study_imports"
    ).fetchall()
    assert row == [("r1", study_id, "ext", "f.csv", "ab" * 32)]
    with pytest.raises(TsrateError, match="run 'nope' has no study"):
        studies.record_import(con, "nope", "ext", "f.csv", "cd" * 32)


def _two_studies(con) -> tuple[str, str]:
    """Two studies whose names sort the other way round from their ids."""
    a = studies.register_study(con, STUDY, None)
    b = studies.register_study(con, study_with(stride=2), None)
    low, high = sorted([a, b])
    con.execute("update raw.studies set study_name = 'zeta' where study_id = ?", [low])
    con.execute("update raw.studies set study_name = 'alpha' where study_id = ?", [high])
    return low, high


def test_an_id_prefix_resolves_from_four_digits_on(con):
    low, high = _two_studies(con)
    assert low[:4] != high[:4]
    assert studies.resolve_study(con, low[:4]) == low
    assert studies.resolve_study(con, high[:5]) == high
    assert studies.resolve_study(con, high) == high and studies.resolve_study(con, "zeta") == low
    with pytest.raises(TsrateError, match=f"no study '{low[:3]}'"):
        studies.resolve_study(con, low[:3])
    assert studies.resolve_study(con, None) is None


def test_no_study_lists_the_known_names_sorted_by_name(con):
    con.execute(STUDIES_DDL)
    with pytest.raises(TsrateError, match="no study 'x'; known studies: none yet "):
        studies.resolve_study(con, "x")
    _two_studies(con)
    with pytest.raises(TsrateError, match="no study 'x'; known studies: alpha, zeta "):
        studies.resolve_study(con, "x")


# --- listings ---------------------------------------------------------------------------------


def test_the_listing_shows_the_systems_of_complete_runs_or_says_there_is_none(con):
    con.execute(OLD_RUNS_DDL)
    assert studies.describe_studies(con) == ["no study yet: `tsrate run` defines one"]
    insert_run(con, "r1", STUDY, "2026-01-01")
    insert_run(con, "r2", study_with(stride=2, systems=["arima"]), "2026-01-02", status="failed")
    studies.ensure_studies(con)
    lines = studies.describe_studies(con)
    assert len(lines) == 6  # three per study: name and runs, tickers and window, systems
    complete = next(i for i, line in enumerate(lines) if "stride=1" in line)
    failed = next(i for i, line in enumerate(lines) if "stride=2" in line)
    assert lines[complete + 1] == "  systems: naive"
    assert lines[failed + 1] == "  systems: no complete run"
    assert lines[complete].startswith("  2 tickers (AAPL JPM) 2022-09-01..2022-12-28 n=30 d=5")


def test_every_listing_line_fits_in_100_characters_and_keeps_every_word(con):
    """A study name longer than a line, 24 tickers, long system ids and several runs: the
    name stays whole on a line of its own (to be copied into ``--study``), every other line
    stays within 100 characters, nothing is lost in the wrapping, and the continuation lines
    are indented under their part."""
    from tsrate.config import load_companies

    tickers = sorted(load_companies()["ticker"])
    systems = sorted(f"{name}_with_a_rather_long_system_id" for name in ("naive", "arima", "x"))
    systems += ["naive", "seasonal_naive"]
    study = study_with(study_tickers=tickers, systems=systems)
    con.execute(OLD_RUNS_DDL)
    for k in range(3):
        insert_run(con, f"r{k}", study, f"2026-01-0{k + 1}")
    (study_id,) = {pair[1] for pair in studies.ensure_studies(con)}
    name = "a_study_named_at_length_" * 5
    con.execute("update raw.studies set study_name = ?", [name.rstrip("_")])
    lines = studies.describe_studies(con)
    assert len(name.rstrip("_")) > studies.LISTING_WIDTH == 100
    assert len(tickers) >= 20 and max(map(len, lines[1:])) <= studies.LISTING_WIDTH, lines
    assert len(lines) > 3  # the window and the systems did not fit on a line each
    # a name longer than a line stays whole, alone on the first line; the rest goes on
    assert lines[:2] == [name.rstrip("_"), f"    {study_id}  3 runs, last 2026-01-03 00:00"]
    words = " ".join(lines).replace("(", " ").replace(")", " ").split()
    for expected in [*tickers, "2022-09-01..2022-12-28", "n=30", "stride=1", "[P0", "P3]"]:
        assert expected in words, expected
    assert "systems: " + ", ".join(sorted(systems)) == " ".join(
        " ".join(lines[lines.index(next(x for x in lines if "systems:" in x)) :]).split()
    )
    # a part's first line is indented by two, its continuation lines by six
    window = next(i for i, x in enumerate(lines) if " tickers (" in x)
    assert lines[window].startswith(f"  {len(tickers)} tickers (")
    assert all(x.startswith("      ") and x[6] != " " for x in lines[window + 1 :] if ":" not in x)


def test_imported_systems_read_back_and_none_before_both_tables_exist(con):
    assert studies.imported_systems(con) == []
    con.execute("create schema raw")
    con.execute(STUDIES_DDL.split("create table if not exists raw.study_imports")[0])
    assert studies.imported_systems(con) == []  # raw.studies alone: nothing imported yet
    con.execute(OLD_RUNS_DDL)
    insert_run(con, "r1", STUDY, "2026-01-01")
    study_id = studies.ensure_studies(con)[0][1]
    studies.record_import(con, "r1", "ext", "f.csv", "ab" * 32)
    got = studies.imported_systems(con)
    assert [(r["system_id"], r["run_id"], r["study_id"], r["source"]) for r in got] == [
        ("ext", "r1", study_id, "f.csv")
    ]
    assert studies.imported_system_lines(con)[0].startswith(
        f"ext  imported from f.csv (sha256 {'ab' * 6}) into study study-{study_id[:8]}"
    )


def test_only_study_imports_without_studies_reads_nothing(con):
    con.execute("create schema raw")
    con.execute(
        "create table raw.study_imports (run_id varchar, study_id varchar, system_id "
        "varchar, source varchar, file_sha256 varchar, imported_at timestamp)"
    )
    assert studies.imported_systems(con) == []


def test_the_newest_runs_study_and_the_newest_complete_run(con):
    con.execute(OLD_RUNS_DDL)
    insert_run(con, "r1", STUDY, "2026-01-01")
    insert_run(con, "r2", STUDY, "2026-01-02", status="forecasted")
    insert_run(con, "r3", study_with(stride=2), "2026-01-03", status="failed")
    assigned = dict(studies.ensure_studies(con))
    assert studies.study_of_newest_run(con) == assigned["r1"]
    assert studies.newest_complete_run(con, assigned["r1"]) == "r2"
    with pytest.raises(TsrateError, match=f"study {assigned['r3']} has no run with complete"):
        studies.newest_complete_run(con, assigned["r3"])


def test_the_stored_company_metadata_is_the_newest_non_empty_value_per_ticker(con):
    assert studies.stored_company_rows(con) == []
    con.execute(COMPANIES_DDL)
    con.execute(
        "insert into raw.company_metadata values "
        "('AAPL', 'Apple', 'Tech', 1.0, 's', '2026-01-01'), "
        "('AAPL', null, 'Technology', null, 's', '2026-01-02'), "
        "('JPM', 'JPMorgan', null, 500.0, 's', '2026-01-01')"
    )
    got = sorted(studies.stored_company_rows(con), key=lambda r: r["ticker"])
    assert got == [
        {"ticker": "AAPL", "company_name": "Apple", "industry": "Technology",
         "biased_offset": 1.0},
        {"ticker": "JPM", "company_name": "JPMorgan", "industry": None, "biased_offset": 500.0},
    ]  # fmt: skip


# --- the current study ------------------------------------------------------------------------


def test_the_current_study_of_an_empty_warehouse_is_none_or_a_refusal_naming_it(con):
    assert studies.current_study(con) is None
    with pytest.raises(TsrateError, match="no study 'mine': no run yet"):
        studies.current_study(con, "mine")


def test_a_named_study_in_a_warehouse_not_yet_migrated_is_refused_naming_it(con):
    con.execute(OLD_RUNS_DDL)
    con.execute(STUDIES_DDL)  # the tables exist, but raw.runs has no study_id yet
    insert_run(con, "r1", STUDY, "2026-01-01")
    with pytest.raises(TsrateError, match="no study 'mine': this warehouse has no studies yet"):
        studies.current_study(con, "mine")
