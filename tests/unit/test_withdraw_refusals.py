"""``tsrate withdraw SYSTEM``: its refusals, each one line with a hint and nothing written (an
unknown system with a did-you-mean from the study's systems, a system of another study, an
unknown study, no warehouse: refused before the writer lock, no lock file left), and what it
records with ``--no-build`` (the default study is the newest run's; a second withdrawal of
the same system writes nothing), and the last system of a study not withdrawn (its build would
publish empty marts). In process, on a small real warehouse: one import of the import
study with its baseline, then a run of another study (horizon 4) forecasting the two
baselines.
The marts' side (the build leaves the system out, a later import brings it back):
tests/integration/test_withdraw.py."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from tests.support.import_study import STUDY, seed_with, write_csv
from tsrate import cli
from tsrate.config import load_companies
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

OTHER = dataclasses.replace(STUDY, horizon=4, systems=("naive", "seasonal_naive"))


@pytest.fixture(scope="module")
def stored(warehouse, good, tmp_path_factory):
    """The module's warehouse after the import (external_demo + naive, study of STUDY) and a
    later run of OTHER (naive, seasonal_naive); returns (warehouse, import study id, other study id)."""
    folder = tmp_path_factory.mktemp("withdraw")
    file = write_csv(folder, good, "external.csv")
    with connect(warehouse) as con:
        imported = import_forecasts(
            con, file, "external_demo", STUDY, workers=1, systems_seed=seed_with()
        )
        later = run_forecasts(con, OTHER, load_companies(), workers=1, progress=lambda _: None)
        finish_run(con, later.run_id, "forecasted")
        other = con.execute(
            "select study_id from raw.runs where run_id = ?", [later.run_id]
        ).fetchone()[0]
    assert other != imported.study_id
    return warehouse, imported.study_id, other


def _withdraw(warehouse, monkeypatch, capsys, *args):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    capsys.readouterr()
    code = cli.main(["withdraw", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _withdrawals(warehouse) -> list[tuple]:
    with connect(warehouse, read_only=True) as con:
        return con.execute(
            "select study_id, system_id, reason from raw.study_withdrawals order by all"
        ).fetchall()


def _name(warehouse, study_id) -> str:
    with connect(warehouse, read_only=True) as con:
        return con.execute(
            "select study_name from raw.studies where study_id = ?", [study_id]
        ).fetchone()[0]


def test_an_unknown_system_is_refused_with_the_study_systems(stored, monkeypatch, capsys):
    warehouse, study_id, _ = stored
    code, out, err = _withdraw(warehouse, monkeypatch, capsys, "extrnal_demo", "--study", study_id)
    label = f"study {_name(warehouse, study_id)} ({study_id})"
    assert (code, out) == (2, "")
    assert err == (
        f"tsrate: error: unknown system 'extrnal_demo' (did you mean 'external_demo'?); the "
        f"systems of {label}: external_demo, naive (hint: `tsrate studies` lists each "
        "study's systems)\n"
    )
    assert _withdrawals(warehouse) == []


def test_a_system_of_another_study_is_refused(stored, monkeypatch, capsys):
    warehouse, _, other = stored
    code, _, err = _withdraw(warehouse, monkeypatch, capsys, "external_demo", "--study", other)
    assert code == 2
    assert err == (
        f"tsrate: error: system 'external_demo' has no forecasts in study "
        f"{_name(warehouse, other)} ({other}); its systems: naive, seasonal_naive (hint: "
        "`tsrate studies` lists each study's systems; name the study with --study)\n"
    )
    assert _withdrawals(warehouse) == []


def test_an_unknown_study_is_refused_naming_the_known_ones(stored, monkeypatch, capsys):
    warehouse, study_id, other = stored
    code, _, err = _withdraw(warehouse, monkeypatch, capsys, "naive", "--study", "nope")
    names = sorted([_name(warehouse, study_id), _name(warehouse, other)])
    assert code == 2
    assert err == (
        f"tsrate: error: no study 'nope'; known studies: {', '.join(names)} "
        "(see `tsrate studies`)\n"
    )
    assert _withdrawals(warehouse) == []


def test_without_a_warehouse_it_is_refused_before_the_lock(tmp_path, monkeypatch, capsys):
    warehouse = tmp_path / "none" / "tsrate.duckdb"
    code, out, err = _withdraw(warehouse, monkeypatch, capsys, "naive")
    assert (code, out) == (2, "")
    assert err == (
        f"tsrate: error: no warehouse at {warehouse}: no study to withdraw a system from "
        "(hint: `tsrate run` or `tsrate import` stores a study first; see `tsrate studies`)\n"
    )
    assert not (tmp_path / "none").exists()  # no lock file, not even its folder


def test_a_withdrawal_is_recorded_once_in_the_newest_run_study(
    stored, tmp_path, monkeypatch, capsys
):
    source, study_id, other = stored
    warehouse = tmp_path / "tsrate.duckdb"
    shutil.copy(source, warehouse)
    # the default study: the newest run's (OTHER's), named in the output
    code, out, err = _withdraw(warehouse, monkeypatch, capsys, "naive", "--no-build")
    assert (code, err) == (0, "")
    first = out.splitlines()[0]
    assert first.startswith(
        f"withdrew 'naive' from study {_name(warehouse, other)} ({other}, the newest run) at "
    )
    # no build published yet: nothing shows it; a system tsrate forecasts comes back by a run
    assert out.splitlines()[1:] == [
        "a later run or import that forecasts 'naive' brings it back (`tsrate run` naming it, "
        "an import that forecasts the study's baselines): withdraw it again then",
        "the published marts and report do not rate it; the study's next build leaves it "
        f"out: tsrate build --study {other}",
    ]
    code, out, _ = _withdraw(
        warehouse, monkeypatch, capsys, "external_demo", "--study", study_id,
        "--reason", "a test id", "--no-build",
    )  # fmt: skip
    assert code == 0 and out.startswith(
        f"withdrew 'external_demo' from study {_name(warehouse, study_id)}"
    )
    # an imported system: only an import of it brings it back, not the baselines' forecasts
    assert out.splitlines()[1] == (
        "a later run or import that forecasts 'external_demo' brings it back (an import of "
        "it): withdraw it again then"
    )
    expected = sorted([(other, "naive", None), (study_id, "external_demo", "a test id")])
    assert _withdrawals(warehouse) == expected
    # again: already withdrawn, nothing written
    code, out, _ = _withdraw(warehouse, monkeypatch, capsys, "naive", "--study", other)
    assert code == 0 and "is already withdrawn from study" in out and "nothing to do" in out
    assert _withdrawals(warehouse) == expected
    # `tsrate studies` names them as withdrawn, not among the systems
    monkeypatch.chdir(tmp_path)
    assert cli.main(["studies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, x in enumerate(lines) if f"  {study_id}  " in x)
    assert lines[at + 2] == "  systems: naive  withdrawn: external_demo", lines
    at = next(i for i, x in enumerate(lines) if f"  {other}  " in x)
    assert lines[at + 2] == "  systems: seasonal_naive  withdrawn: naive", lines


def test_without_a_build_it_says_the_marts_show_it_only_where_they_rate_it(
    stored, tmp_path, monkeypatch, capsys
):
    """``--no-build``: "the marts and report still show it" only when the published ratings
    rate the system in that study; a system they do not rate (another study's, or never
    built) is not said to be shown."""
    from tests.support.query_snapshot import published_marts

    source, study_id, other = stored
    warehouse = tmp_path / "tsrate.duckdb"
    shutil.copy(source, warehouse)
    published_marts(
        warehouse,
        "create table marts.ratings (study_id varchar, system_id varchar)",
        f"insert into marts.ratings values ('{other}', 'naive'), ('{other}', 'seasonal_naive')",
        f"insert into marts.ratings values ('{study_id}', 'naive')",  # its study, not it
    )
    code, out, err = _withdraw(warehouse, monkeypatch, capsys, "naive", "--no-build")
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == (
        f"the marts and report still show it until you run: tsrate build --study {other}"
    )
    code, out, err = _withdraw(
        warehouse, monkeypatch, capsys, "external_demo", "--study", study_id, "--no-build"
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == (
        "the published marts and report do not rate it; the study's next build leaves it "
        f"out: tsrate build --study {study_id}"
    )


def test_a_real_parquet_folder_is_refused_before_anything_is_written(
    stored, tmp_path, monkeypatch, capsys
):
    """Its build publishes at the end: a real folder where the ``parquet`` link belongs is
    refused first, in the publish check's words, the withdrawal not recorded; ``--no-build``
    does not need the link."""
    from tests.support.published_link import copied_over, refusal

    source, study_id, _ = stored
    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    shutil.copy(source, warehouse)
    link = copied_over(warehouse.parent / "published")
    code, out, err = _withdraw(warehouse, monkeypatch, capsys, "naive", "--study", study_id)
    assert (code, out, err) == (2, "", f"tsrate: error: {refusal(link, 'folder')}\n")
    assert _withdrawals(warehouse) == []
    code, _, err = _withdraw(warehouse, monkeypatch, capsys, "naive", "--no-build")
    assert (code, err) == (0, "")
    assert len(_withdrawals(warehouse)) == 1


def test_the_last_system_of_a_study_is_refused(stored, tmp_path, monkeypatch, capsys):
    """One system left still builds (its marts say there is nothing to compare it with);
    none would publish empty marts and an empty report: the last one is refused, nothing
    written, whether others were withdrawn first or it is the study's only system."""
    source, study_id, other = stored
    warehouse = tmp_path / "tsrate.duckdb"
    shutil.copy(source, warehouse)
    code, _, err = _withdraw(
        warehouse, monkeypatch, capsys, "naive", "--study", other, "--no-build"
    )
    assert (code, err) == (0, "")
    code, out, err = _withdraw(
        warehouse, monkeypatch, capsys, "seasonal_naive", "--study", other, "--no-build"
    )
    assert (code, out) == (2, "")
    assert err == (
        f"tsrate: error: 'seasonal_naive' is the last system rated in study "
        f"{_name(warehouse, other)} ({other}), the others withdrawn (naive): withdrawing it "
        "would leave the study nothing to rate (hint: rate another system in the study first "
        "with `tsrate run` or `tsrate import`; `tsrate build --study` builds another study)\n"
    )
    assert _withdrawals(warehouse) == [(other, "naive", None)]
    # the other study keeps one system after a withdrawal: allowed; then its last is refused
    code, _, _ = _withdraw(
        warehouse, monkeypatch, capsys, "external_demo", "--study", study_id, "--no-build"
    )
    assert code == 0
    code, _, err = _withdraw(warehouse, monkeypatch, capsys, "naive", "--study", study_id)
    assert code == 2 and "'naive' is the last system rated in study " in err, err
    assert "the others withdrawn (external_demo)" in err
    assert len(_withdrawals(warehouse)) == 2


def _withdrawn_at(warehouse, study_id, system_id) -> str:
    with connect(warehouse, read_only=True) as con:
        (when,) = con.execute(
            "select max(withdrawn_at) from raw.study_withdrawals where study_id = ? "
            "and system_id = ?",
            [study_id, system_id],
        ).fetchone()
    return f"{when:%Y-%m-%d %H:%M}"


def test_the_listings_show_each_withdrawal_s_date_and_reason(stored, tmp_path, monkeypatch, capsys):
    """``tsrate studies`` follows a study's line with one per withdrawn system (when, and the
    reason when one was given, shortened to keep the line under 100 characters); ``tsrate
    systems`` lists them in their own section, with their study."""
    source, study_id, other = stored
    warehouse = tmp_path / "tsrate.duckdb"
    shutil.copy(source, warehouse)
    reason = "imported under a test id " + "by mistake, " * 12 + "the end"
    for args in (
        ("naive", "--study", other),
        ("external_demo", "--study", study_id, "--reason", reason),
    ):
        code, _, err = _withdraw(warehouse, monkeypatch, capsys, *args, "--no-build")
        assert (code, err) == (0, ""), err
    naive = _withdrawn_at(warehouse, other, "naive")
    demo = _withdrawn_at(warehouse, study_id, "external_demo")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["studies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, x in enumerate(lines) if f"  {other}  " in x)
    assert lines[at + 3] == f"  withdrawn naive {naive}"  # no reason: nothing more
    at = next(i for i, x in enumerate(lines) if f"  {study_id}  " in x)
    shown = lines[at + 3]
    assert shown.startswith(f"  withdrawn external_demo {demo}: imported under a test id by ")
    assert shown.endswith("...") and 95 <= len(shown) < 100 and "the end" not in shown
    assert len(lines) == 8  # two studies of three lines, one withdrawal each

    assert cli.main(["systems"]) == 0
    out = capsys.readouterr().out.splitlines()
    at = out.index("withdrawn from a study (left out of its marts: `tsrate withdraw`):")
    names = {s: _name(warehouse, s) for s in (study_id, other)}
    listed = out[at + 1 : at + 3]
    assert f"  naive  from study {names[other]} {naive}" in listed, listed
    (long,) = [x for x in listed if x.startswith("  external_demo  ")]
    assert long.startswith(f"  external_demo  from study {names[study_id]} {demo}: imported ")
    assert long.endswith("...") and 95 <= len(long) < 100, long


def test_a_build_whose_study_systems_are_all_withdrawn_is_refused(
    stored, tmp_path, monkeypatch, capsys
):
    """A study's newer run whose build failed leaves ``tsrate build`` its older run: the
    withdrawal of that run's last system is refused, as its build would rate nothing; a
    study that got there anyway (withdrawn while the newer run could still build) is
    refused by ``tsrate build`` in one line naming it, before anything is written."""
    source, study_id, _ = stored
    warehouse = tmp_path / "tsrate.duckdb"
    shutil.copy(source, warehouse)
    newer = dataclasses.replace(STUDY, systems=("seasonal_naive",))
    with connect(warehouse) as con:
        (older,) = con.execute(
            "select run_id from raw.runs where study_id = ?", [study_id]
        ).fetchone()
        later = run_forecasts(con, newer, load_companies(), workers=1, progress=lambda _: None)
        finish_run(con, later.run_id, "forecasted")
        assert con.execute(
            "select study_id from raw.runs where run_id = ?", [later.run_id]
        ).fetchone() == (study_id,)
    for system in ("naive", "external_demo"):  # seasonal_naive stays: allowed
        code, _, err = _withdraw(
            warehouse, monkeypatch, capsys, system, "--study", study_id, "--no-build"
        )
        assert (code, err) == (0, ""), err
    with connect(warehouse) as con:  # then the newer run's build fails
        finish_run(con, later.run_id, "build_failed", "a test failure")
    name = _name(warehouse, study_id)
    before = warehouse.read_bytes()
    capsys.readouterr()
    code = cli.main(["build", "--study", study_id])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"tsrate: error: the build of study {name} ({study_id}), run {older}, would rate no "
        "system: every one is withdrawn (external_demo, naive) (hint: rate a system in the "
        "study with `tsrate run` or `tsrate import` (a newer run brings it back); `tsrate "
        "runs` shows why newer runs cannot build)\n"
    )
    assert warehouse.read_bytes() == before  # nothing written, no build started
    assert not (tmp_path / "published").exists()


def test_withdrawing_the_last_system_the_build_reads_is_refused(
    stored, tmp_path, monkeypatch, capsys
):
    """A system only in a newer run whose build failed is not rated by the study's build
    (it builds the older run): withdrawing the older run's last other system is refused."""
    source, study_id, _ = stored
    warehouse = tmp_path / "tsrate.duckdb"
    shutil.copy(source, warehouse)
    newer = dataclasses.replace(STUDY, systems=("seasonal_naive",))
    with connect(warehouse) as con:
        later = run_forecasts(con, newer, load_companies(), workers=1, progress=lambda _: None)
        finish_run(con, later.run_id, "build_failed", "a test failure")
    code, _, err = _withdraw(
        warehouse, monkeypatch, capsys, "naive", "--study", study_id, "--no-build"
    )
    assert (code, err) == (0, ""), err
    code, out, err = _withdraw(
        warehouse, monkeypatch, capsys, "external_demo", "--study", study_id, "--no-build"
    )
    assert (code, out) == (2, "")
    assert err.startswith(
        f"tsrate: error: 'external_demo' is the last system rated in study "
        f"{_name(warehouse, study_id)} ({study_id}), the others withdrawn (naive): "
    ), err
    assert [r[1] for r in _withdrawals(warehouse)] == ["naive"]
