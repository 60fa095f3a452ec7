"""Newcomer-trial fixes of the three suites: empty plans, hints and refusals."""

from __future__ import annotations

import dataclasses

import pytest

from tsrate import TsrateError
from tsrate.suites.understanding.suite import SMALL, run_suite


@pytest.mark.parametrize(
    ("datasets", "tasks", "need"),
    [
        (("correlation",), ("matching_cross",), "matching_cross needs 4 or more"),
        (("trend",), ("search",), "search needs a position set"),
    ],
)
def test_empty_understanding_plan_is_refused_before_storing(tmp_path, datasets, tasks, need):
    config = dataclasses.replace(
        SMALL, datasets=datasets, tasks=tasks, train=2, validation=1, test=2
    )
    warehouse = tmp_path / "tsrate.duckdb"
    with pytest.raises(TsrateError) as err:
        run_suite(warehouse, config, [], progress=lambda _: None)
    message = str(err.value)
    assert "\n" not in message
    assert "gives no prompts" in message and need in message
    assert not warehouse.exists()


def test_unknown_build_run_hints_a_live_query_that_runs(tmp_path, monkeypatch, capsys):
    import re

    from tsrate import cli
    from tsrate.platform.raw_schema import create_raw_tables
    from tsrate.platform.warehouse import connect

    warehouse = tmp_path / "w.duckdb"
    with connect(warehouse) as con:
        create_raw_tables(con)
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    assert cli.main(["suite", "reasoning", "build", "rsn-nosuch"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no reasoning suite run 'rsn-nosuch'" in err and "\n" not in err
    sql = re.search(r'tsrate query --live "(.+)"`', err).group(1)
    assert sql == "select suite_run_id, status from raw.suite_runs where suite = 'reasoning'"
    assert cli.main(["query", "--live", sql]) == 0


def test_build_without_warehouse_suggests_the_suite_run(tmp_path, monkeypatch, capsys):
    from tsrate import cli

    warehouse = tmp_path / "w.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    assert cli.main(["suite", "interpretability", "build"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no warehouse at" in err and "\n" not in err
    assert "`tsrate suite interpretability run` first" in err
    assert not warehouse.exists()


def _snapshot(path, tables):
    from tsrate.platform.warehouse import connect

    with connect(path) as con:
        con.execute("create schema if not exists marts")
        for table in tables:
            con.execute(f"create table marts.{table} as select 1 as x")
    return path


@pytest.mark.parametrize("suite", ["understanding", "reasoning", "interpretability"])
def test_report_of_a_snapshot_without_the_suite_says_run_it(tmp_path, capsys, suite):
    from tsrate import cli

    snapshot = _snapshot(
        tmp_path / "published.duckdb",
        ["leaderboard", "rsn_x" if suite == "understanding" else "und_x"],
    )
    output = tmp_path / "r.html"
    argv = ["suite", suite, "report", "--snapshot", str(snapshot), "--output", str(output)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        f"no {suite} suite run published in {snapshot}: run `tsrate suite {suite} run`"
    )
    assert "\n" not in err and not output.exists()


def test_report_of_a_snapshot_with_some_suite_mart_is_an_older_snapshot(tmp_path, capsys):
    from tsrate import cli

    snapshot = _snapshot(tmp_path / "published.duckdb", ["rsn_ratings"])
    argv = ["suite", "reasoning", "report", "--snapshot", str(snapshot)]
    assert cli.main([*argv, "--output", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "published by an older tsrate" in err and "no reasoning suite run" not in err


def test_run_hint_orders_ratings_by_prompting_then_rank():
    from pathlib import Path

    import duckdb
    import yaml

    from tsrate.suites.understanding.cli import RATINGS_QUERY

    spec = yaml.safe_load(Path("models/understanding/marts/und_ratings.yml").read_text())
    (model,) = [m for m in spec["models"] if m["name"] == "und_ratings"]
    columns = [c["name"] for c in model["columns"]]
    con = duckdb.connect()
    con.execute("create schema marts")
    con.execute(
        "create table marts.und_ratings as select * from (values "
        "('zero_shot', 'accuracy', 'trend', 2, 'b'), ('cot', 'accuracy', 'trend', 1, 'a'), "
        "('zero_shot', 'accuracy', 'trend', 1, 'a'), ('cot', 'accuracy', 'trend', 2, 'b')) "
        "t(prompting, metric, feature, rank, system_id)"
    )
    for column in ("prompting", "metric", "feature", "rank", "system_id"):
        assert column in columns
    rows = con.execute(RATINGS_QUERY.replace("select *", "select prompting, rank")).fetchall()
    assert rows == [("cot", 1), ("cot", 2), ("zero_shot", 1), ("zero_shot", 2)]


def test_small_help_says_position_sets_are_csv_only(capsys):
    from tsrate import cli

    with pytest.raises(SystemExit):
        cli.main(["suite", "understanding", "run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "position sets csv" in help_text and "all 9 formats" not in help_text


@pytest.mark.parametrize("temperature", ["0", "-1", "nan", "inf", "warm"])
def test_forecast_temperature_must_be_positive(capsys, temperature):
    from tsrate import cli

    argv = ["suite", "reasoning", "run", "--llm", "endpoint:m", "--forecast-samples", "3"]
    with pytest.raises(SystemExit) as exit_:
        cli.main([*argv, "--forecast-temperature", temperature])
    assert exit_.value.code == 2
    assert "expected a temperature > 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    "options",
    [["--forecast-samples", "3"], ["--forecast-temperature", "0.5"]],
)
def test_sampling_options_without_llm_are_refused(tmp_path, monkeypatch, capsys, options):
    from tsrate import cli

    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "w.duckdb"))
    assert cli.main(["suite", "reasoning", "run", *options, "--no-build"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "add --llm" in err
    assert not (tmp_path / "w.duckdb").exists()
