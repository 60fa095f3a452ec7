"""``tsrate import-predictions --manifest`` of a study the warehouse has no run of, while it
holds another: refused up front in one line naming both studies, nothing stored, unless
``--switch-study`` (then the first line says what the import computes and publishes). A
manifest of a study with a run here is imported as before, without that line. In process
(the CLI's main), ``--no-build --no-baselines``, on a small real warehouse."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

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

#: the other study: the import study's first ticker alone
AAPL_ONLY = dataclasses.replace(STUDY, tickers=("AAPL",))


def _grid(warehouse, study) -> pd.DataFrame:
    with connect(warehouse) as con:
        grid = prediction_grid(load_series(con, study))
    return grid[grid["perturbation_id"] == "P0"]


def _study_ids(warehouse) -> list[str]:
    with connect(warehouse, read_only=True) as con:
        rows = con.execute("select distinct study_id from raw.runs order by 1").fetchall()
    return [row[0] for row in rows]


def _name(warehouse, study_id) -> str:
    with connect(warehouse, read_only=True) as con:
        sql = "select study_name from raw.studies where study_id = ?"
        return con.execute(sql, [study_id]).fetchone()[0]


def _study_id(warehouse, study) -> str:
    """The id the warehouse gives ``study`` (its companies included)."""
    from tsrate.robustness.companies import study_companies
    from tsrate.robustness.studies import study_definition, study_id_of

    with connect(warehouse, read_only=True) as con:
        return study_id_of(study_definition(study, study_companies(con)))


def test_a_manifest_of_a_study_without_a_run_here_is_refused_unless_switched(
    tmp_path, capsys, monkeypatch
):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    tsrate = in_process_tsrate(warehouse, capsys, monkeypatch)
    both, aapl = tmp_path / "both", tmp_path / "aapl"
    assert tsrate("export-inputs", str(both), *STUDY_FLAGS).returncode == 0
    flags = [*STUDY_FLAGS]
    flags[flags.index("AAPL,JPM")] = "AAPL"
    assert tsrate("export-inputs", str(aapl), *flags).returncode == 0
    common = ["--system", "mine", "--no-baselines", "--no-build", "--metadata", "family=foundation"]
    both_file = write_csv(tmp_path, _grid(warehouse, STUDY), "both.csv")
    aapl_file = write_csv(tmp_path, _grid(warehouse, AAPL_ONLY), "aapl.csv")

    # a warehouse without a run: the manifest's study is its first, imported as before
    first = tsrate("import-predictions", str(both_file), "--manifest", str(both), *common)
    assert first.returncode == 0, first.stderr
    assert "--switch-study" not in first.stdout
    (held,) = _study_ids(warehouse)

    # another study's manifest: one line naming both studies, and nothing stored
    before = snapshot(warehouse)
    refused = tsrate("import-predictions", str(aapl_file), "--manifest", str(aapl), *common)
    assert refused.returncode == 2 and refused.stdout == ""
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    name = _name(warehouse, held)
    new_id = _study_id(warehouse, AAPL_ONLY)
    # both named as `tsrate studies` names them: name, then the whole id
    assert lines[0] == (
        f"tsrate: error: the manifest's study study-{new_id[:8]} ({new_id}; 1 ticker "
        f"AAPL; 2022-09-01 to 2022-12-28) is not this warehouse's study {name} ({held}; "
        "2 tickers AAPL, JPM; 2022-09-01 to 2022-12-28) and has no run here: this import "
        "would store the file's forecasts alone (--no-baselines); the snapshot keeps "
        f"{name} (--no-build) (hint: check the --manifest folder: `tsrate export-inputs` "
        "exports this warehouse's study; --switch-study rates and publishes that study here)"
    )
    # without --no-baselines and --no-build: what it would compute and publish
    refused = tsrate(
        "import-predictions", str(aapl_file), "--manifest", str(aapl), *common[:2],
        "--metadata", "family=foundation",
    )  # fmt: skip
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert (
        "this import would forecast its baselines (naive on 1 ticker AAPL × 4 perturbations: "
        f"minutes) beside the file; publish it in place of {name} (tsrate build --study "
        f"{name} brings that back) (hint: "
    ) in refused.stderr
    after = snapshot(warehouse)
    for table in RAW_TABLES:
        pd.testing.assert_frame_equal(before[table], after[table], obj=f"raw.{table}")

    # opted in: said first, then imported as a run of that study
    switched = tsrate(
        "import-predictions", str(aapl_file), "--manifest", str(aapl), "--switch-study", *common
    )
    assert switched.returncode == 0, switched.stderr
    said = switched.stdout.splitlines()[0]
    assert said.startswith("--switch-study: the manifest's study "), switched.stdout
    assert f"is new to this warehouse (it holds study {name} (" in said
    assert said.endswith(
        ": this import will store the file's forecasts alone (--no-baselines); the snapshot "
        f"keeps {name} (--no-build)"
    )
    assert len(_study_ids(warehouse)) == 2
    # the name and id the refusal gave are those `tsrate studies` lists for it now
    assert f"the manifest's study study-{new_id[:8]} ({new_id}; " in said
    listed = tsrate("studies").stdout.splitlines()
    assert any(line.split()[:2] == [f"study-{new_id[:8]}", new_id] for line in listed), listed

    # both studies have a run here now: either manifest is imported without a word
    for file, folder in ((aapl_file, aapl), (both_file, both)):
        again = tsrate("import-predictions", str(file), "--manifest", str(folder), *common)
        assert again.returncode == 0, again.stderr
        assert "--switch-study" not in again.stdout


def test_a_run_that_never_finished_forecasting_holds_no_study(tmp_path, capsys, monkeypatch):
    """The warehouse's only run failed before its forecasts were complete (nothing built or
    published from it): it holds no study, so a manifest of another study is imported
    without --switch-study, as into an empty warehouse."""
    from tsrate.robustness.forecast.execute import finish_run, run_forecasts

    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    tsrate = in_process_tsrate(warehouse, capsys, monkeypatch)
    aapl = tmp_path / "aapl"
    flags = [*STUDY_FLAGS]
    flags[flags.index("AAPL,JPM")] = "AAPL"
    assert tsrate("export-inputs", str(aapl), *flags).returncode == 0
    with connect(warehouse) as con:
        failed = run_forecasts(con, STUDY, None, workers=1, progress=lambda m: None).run_id
        finish_run(con, failed, "failed", "forecast: stopped")  # as flows/forecast.py marks it
    aapl_file = write_csv(tmp_path, _grid(warehouse, AAPL_ONLY), "aapl.csv")
    common = ["--system", "mine", "--no-baselines", "--no-build", "--metadata", "family=foundation"]
    done = tsrate("import-predictions", str(aapl_file), "--manifest", str(aapl), *common)
    assert done.returncode == 0, done.stderr
    assert "--switch-study" not in done.stdout
    assert _study_id(warehouse, AAPL_ONLY) in _study_ids(warehouse)


def test_an_import_whose_study_flags_name_a_study_without_a_run_here_is_refused_unless_switched(
    tmp_path, capsys, monkeypatch
):
    """``tsrate import`` (no manifest) checks the study its flags give as import-predictions
    checks a manifest's: refused in one line naming both studies and the flags to check,
    nothing stored; with --switch-study said first, then imported."""
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    tsrate = in_process_tsrate(warehouse, capsys, monkeypatch)
    common = ["--system", "mine", "--no-baselines", "--no-build", "--metadata", "family=foundation"]
    both_file = write_csv(tmp_path, _grid(warehouse, STUDY), "both.csv")
    aapl_file = write_csv(tmp_path, _grid(warehouse, AAPL_ONLY), "aapl.csv")
    aapl_flags = [*STUDY_FLAGS]
    aapl_flags[aapl_flags.index("AAPL,JPM")] = "AAPL"

    first = tsrate("import", str(both_file), *common, *STUDY_FLAGS)
    assert first.returncode == 0, first.stderr
    assert "--switch-study" not in first.stdout
    (held,) = _study_ids(warehouse)
    name, new_id = _name(warehouse, held), _study_id(warehouse, AAPL_ONLY)

    before = snapshot(warehouse)
    refused = tsrate("import", str(aapl_file), *common, *aapl_flags)
    assert refused.returncode == 2 and refused.stdout == ""
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    assert lines[0].startswith(
        f"tsrate: error: the study of the flags study-{new_id[:8]} ({new_id}; 1 ticker AAPL; "
        f"2022-09-01 to 2022-12-28) is not this warehouse's study {name} ({held}; 2 tickers "
        "AAPL, JPM; 2022-09-01 to 2022-12-28) and has no run here: "
    ), lines[0]
    assert lines[0].endswith(
        "(hint: check the study flags (--tickers, --start, --end, ...; without them: the "
        "vars' study): `tsrate studies` lists this warehouse's studies; --switch-study rates "
        "and publishes that study here)"
    ), lines[0]
    # without study flags the study is the vars' one, which has no run here either
    bare = tsrate("import", str(aapl_file), *common)
    assert bare.returncode == 2 and "the study of the flags " in bare.stderr
    assert "--switch-study rates and publishes" in bare.stderr
    after = snapshot(warehouse)
    for table in RAW_TABLES:
        pd.testing.assert_frame_equal(before[table], after[table], obj=f"raw.{table}")

    switched = tsrate("import", str(aapl_file), "--switch-study", *common, *aapl_flags)
    assert switched.returncode == 0, switched.stderr
    said = switched.stdout.splitlines()[0]
    assert said.startswith(
        f"--switch-study: the study of the flags study-{new_id[:8]} ({new_id}; "
    ), switched.stdout
    assert sorted(_study_ids(warehouse)) == sorted([held, new_id])
    # both have a run now: imported without a word
    again = tsrate("import", str(aapl_file), *common, *aapl_flags)
    assert again.returncode == 0 and "--switch-study" not in again.stdout, again.stderr


@pytest.mark.parametrize("default_taken", [False, True])
def test_a_study_not_stored_yet_is_named_as_registering_it_names_it(tmp_path, default_taken):
    """The refusal's name for a study this warehouse never stored is the one it gets when
    stored (then `tsrate studies` lists it so): ``default`` for the vars' study, or, when
    another study took that name (``--study-name default``), ``study-`` and its id's first 8
    characters."""
    from tsrate.config import Study, load_companies
    from tsrate.platform.raw_schema import create_raw_tables
    from tsrate.robustness.studies import register_study, study_name

    companies = load_companies()
    vars_study = Study.from_vars()
    with connect(tmp_path / "tsrate.duckdb") as con:
        create_raw_tables(con)
        if default_taken:
            register_study(con, STUDY, companies, name="default")
        named, study_id = study_name(con, vars_study, companies)
        assert (named == "default") is not default_taken
        assert register_study(con, vars_study, companies) == study_id
        sql = "select study_name from raw.studies where study_id = ?"
        assert con.execute(sql, [study_id]).fetchone() == (named,)
        assert study_name(con, vars_study, companies) == (named, study_id)  # stored: as is
    if default_taken:
        assert named == f"study-{study_id[:8]}"
