"""An import states what its model was trained on: ``--metadata training_corpus=TEXT
training_cutoff=YYYY-MM-DD`` (or the same keys in the YAML/JSON file). The cutoff must be a
real ISO date, today (UTC) or earlier, else the import is refused in one line naming the value and
the format, and nothing is stored; both are stored in ``raw.imported_systems`` (a warehouse
whose table predates them gains the columns, its registrations reading null), and a new
cutoff is a new registration. The marts' use of them: tests/integration/
test_import_training_leakage.py.
"""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import pandas as pd
import pytest

from tests.support.import_study import RAW_TABLES, STUDY, snapshot, write_csv
from tsrate import TsrateError
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.blackbox.registry import (
    dropped_fields,
    read_metadata,
    register_system,
    registered_systems,
    system_metadata,
)

#: raw.imported_systems as warehouses made before imports could state their training data
#: created it (its DDL then, verbatim)
OLD_DDL = """
create schema if not exists raw;
create table if not exists raw.imported_systems (
    system_id varchar not null,
    display_name varchar not null,
    paper_symbol varchar,
    modality varchar not null,
    family varchar not null,
    purpose varchar,
    architecture varchar,
    is_foundation_model boolean,
    accepted_perturbations varchar not null,
    description varchar not null,
    base_model varchar,
    source varchar not null,
    registered_at timestamp not null
);
"""


def problem(metadata) -> str:
    with pytest.raises(TsrateError) as caught:
        system_metadata("my_model", metadata, ["P0"], "preds.csv")
    message = str(caught.value)
    assert "\n" not in message and "nothing was stored" in message
    return message


# -- the values ---------------------------------------------------------------------------------


def test_a_cutoff_and_corpus_are_kept_as_a_date_and_text():
    row = system_metadata(
        "my_model",
        {"training_cutoff": " 2023-06-30 ", "training_corpus": " public price series "},
        ["P0"],
        "preds.csv",
    )
    assert row["training_cutoff"] == dt.date(2023, 6, 30)
    assert row["training_corpus"] == "public price series"
    assert system_metadata("my_model", {"training_cutoff": dt.date(2020, 2, 29)})[
        "training_cutoff"
    ] == dt.date(2020, 2, 29)  # YAML reads an unquoted date as one
    none = system_metadata("my_model", {"training_cutoff": "", "training_corpus": "  "})
    assert none["training_cutoff"] is None and none["training_corpus"] is None


NOT_ISO_DATES = ["2023-02-30", "2023-13-01", "30/06/2023", "20230630", "2023-W26-5",
                 "2023-06", "June 2023", "2023-06-30T00:00", 2023,
                 dt.datetime(2023, 6, 30, 12)]  # fmt: skip


@pytest.mark.parametrize("value", NOT_ISO_DATES)
def test_a_cutoff_that_is_not_an_iso_date_is_refused_naming_it_and_the_format(value):
    message = problem({"training_cutoff": value})
    shown = str(value)
    assert f"training_cutoff {shown!r} is not a date" in message
    assert "YYYY-MM-DD" in message


@pytest.fixture
def local_day_not_utcs(monkeypatch):
    """The process's local time zone set to one whose date differs from UTC's right now
    (UTC+14 once UTC is past 10:00, else UTC-12), restored after: a check that read the
    local date would draw the line a day off."""
    import time

    utc_hour = dt.datetime.now(dt.UTC).hour
    # POSIX rules (no tz database needed): '<+14>-14' is UTC+14, '<-12>+12' UTC-12
    monkeypatch.setenv("TZ", "<+14>-14" if utc_hour >= 11 else "<-12>+12")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_cutoff_after_today_in_utc_is_refused_and_today_is_not(local_day_not_utcs):
    """Today is the UTC date (as the runs' ids and times are), not the local one."""
    today = dt.datetime.now(dt.UTC).date()
    assert dt.date.today() != today  # the fixture's point: the local date is another day
    tomorrow = today + dt.timedelta(days=1)
    message = problem({"training_cutoff": tomorrow.isoformat()})
    assert (
        f"training_cutoff {tomorrow.isoformat()} is after today ({today.isoformat()}, UTC)"
    ) in message
    assert "YYYY-MM-DD" in message
    problem({"training_cutoff": tomorrow})  # a YAML date too
    assert system_metadata("s", {"training_cutoff": today.isoformat()})["training_cutoff"] == today
    assert system_metadata("s", {"training_cutoff": today})["training_cutoff"] == today


def test_a_long_corpus_is_kept_up_to_2000_characters():
    assert system_metadata("s", {"training_corpus": "c" * 2000})["training_corpus"] == "c" * 2000
    assert "training_corpus is 2001 characters long (at most 2000)" in problem(
        {"training_corpus": "c" * 2001}
    )


def test_the_keys_come_from_a_yaml_or_json_file_and_from_pairs(tmp_path):
    yaml_file = tmp_path / "m.yaml"
    yaml_file.write_text("training_cutoff: 2023-06-30\ntraining_corpus: web text\n")
    json_file = tmp_path / "m.json"
    json_file.write_text(json.dumps({"training_cutoff": "2022-12-31"}))
    for items, cutoff in (
        ([str(yaml_file)], dt.date(2023, 6, 30)),
        ([str(json_file)], dt.date(2022, 12, 31)),
        ([str(yaml_file), "training_cutoff=2021-01-31"], dt.date(2021, 1, 31)),
    ):
        row = system_metadata("s", read_metadata(items))
        assert row["training_cutoff"] == cutoff, items
    assert system_metadata("s", read_metadata([str(yaml_file)]))["training_corpus"] == "web text"


# -- the import ---------------------------------------------------------------------------------


def import_with(warehouse, path, metadata, system_id="trained_model"):
    with connect(warehouse) as con:
        return import_forecasts(
            con, path, system_id, STUDY, workers=1, metadata=metadata, baselines=False
        )


def registrations(warehouse, system_id="trained_model") -> pd.DataFrame:
    with connect(warehouse) as con:
        return con.execute(
            "select * from raw.imported_systems where system_id = ? order by registered_at",
            [system_id],
        ).df()


def test_a_bad_cutoff_stores_nothing(warehouse, good, tmp_path):
    path = write_csv(tmp_path, good)
    import_with(warehouse, path, {"display_name": "Other"}, system_id="other_model")
    before = snapshot(warehouse)
    with connect(warehouse) as con:
        registered_before = con.execute("select * from raw.imported_systems").df()
    for value in (
        "2023-02-30",
        (dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)).isoformat(),
    ):
        with pytest.raises(TsrateError, match=f"training_cutoff '?{value}'? is"):
            import_with(warehouse, path, {"training_cutoff": value, "training_corpus": "x"})
        after = snapshot(warehouse)
        for table in RAW_TABLES:
            pd.testing.assert_frame_equal(before[table], after[table], obj=f"raw.{table}")
        with connect(warehouse) as con:
            registered_after = con.execute("select * from raw.imported_systems").df()
        pd.testing.assert_frame_equal(registered_before, registered_after)


def test_the_import_stores_both_and_a_new_cutoff_is_a_new_registration(warehouse, good, tmp_path):
    path = write_csv(tmp_path, good)
    given = {"display_name": "Trained", "training_corpus": "public prices to mid 2023"}
    import_with(warehouse, path, given | {"training_cutoff": "2023-06-30"})
    stored = registrations(warehouse)
    assert len(stored) == 1
    assert stored["training_corpus"].tolist() == ["public prices to mid 2023"]
    assert stored["training_cutoff"].dt.date.tolist() == [dt.date(2023, 6, 30)]

    import_with(warehouse, path, given | {"training_cutoff": "2023-06-30"})  # the same again
    assert len(registrations(warehouse)) == 1
    import_with(warehouse, path, given | {"training_cutoff": "2023-09-30"})  # a new cutoff
    stored = registrations(warehouse)
    assert stored["training_cutoff"].dt.date.tolist() == [dt.date(2023, 6, 30),
                                                         dt.date(2023, 9, 30)]  # fmt: skip
    with connect(warehouse) as con:
        latest = registered_systems(con).set_index("system_id").loc["trained_model"]
    assert latest["training_cutoff"] == dt.date(2023, 9, 30)
    # leaving the cutoff out drops it, and the import says so
    again = system_metadata("trained_model", given, sorted(set(good["perturbation_id"])))
    assert dropped_fields(latest.to_dict(), given, again) == ["training_cutoff=2023-09-30"]


# -- a warehouse made before ----------------------------------------------------------------------


def test_an_old_table_gains_the_columns_and_its_registrations_read_null(tmp_path):
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(OLD_DDL)
        con.execute(
            "insert into raw.imported_systems values ('old_model', 'Old', null, 'numeric', "
            "'imported', null, null, null, 'P0', 'Predictions imported from o.csv.', null, "
            "'o.csv', timestamp '2024-01-01 00:00:00')"
        )
    with duckdb.connect(str(path), read_only=True) as con:  # a reader: no migration
        latest = registered_systems(con).set_index("system_id")
    assert latest.loc["old_model", "display_name"] == "Old"
    assert latest.loc["old_model", "training_cutoff"] is None
    assert latest.loc["old_model", "training_corpus"] is None

    with duckdb.connect(str(path)) as con:
        create_raw_tables(con)  # a writing edge migrates
        columns = {
            name: kind
            for name, kind in con.execute(
                "select column_name, data_type from information_schema.columns "
                "where table_schema = 'raw' and table_name = 'imported_systems'"
            ).fetchall()
        }
        assert columns["training_corpus"] == "VARCHAR" and columns["training_cutoff"] == "DATE"
        assert con.execute(
            "select training_corpus, training_cutoff from raw.imported_systems"
        ).fetchall() == [(None, None)]
        create_raw_tables(con)  # idempotent
        old = system_metadata("old_model", {"display_name": "Old"}, ["P0"], "o.csv")
        assert register_system(con, old, "o.csv") is False  # the same registration
        dated = old | {"training_cutoff": dt.date(2023, 6, 30)}
        assert register_system(con, dated, "o.csv") is True
        assert con.execute(
            "select training_cutoff from raw.imported_systems order by registered_at"
        ).fetchall() == [(None,), (dt.date(2023, 6, 30),)]


def test_registering_on_an_old_table_migrates_it_first():
    con = duckdb.connect(":memory:")
    try:
        con.execute(OLD_DDL)
        row = system_metadata("m", {"training_cutoff": "2023-06-30", "training_corpus": "c"})
        assert register_system(con, row, "m.csv") is True
        assert con.execute(
            "select training_corpus, training_cutoff from raw.imported_systems"
        ).fetchall() == [("c", dt.date(2023, 6, 30))]
    finally:
        con.close()
