"""The suites' command lines and their publishing helpers against the small errors a
mutation sweep plants in them (round 10; survivors: tests/planted/sweep10_suitecli.json;
the MOMENT worker's protocol: tests/unit/test_sweep10_suitecli_worker.py).

What the older tests left open, pinned here against the documented values and rules
(docs/suites/*.md, the ``--help`` texts), restated by hand:

* the three ``tsrate suite <name> run`` parsers: reasoning's procedural defaults (24
  scenarios, 12 forecasting items, 100 steps, seed 2024, fracast on every item, one greedy
  forecast reply), the bounds of ``--fracast``, ``--forecast-samples`` and ``--sample`` at
  their exact limits, understanding's ``--sample`` alone (16) and ``--test-size``;
* the one-line errors the runs give before any work, reached through the real flows (no
  stand-in): a ``--cot-parser`` without chain-of-thought prompting, no system to ask,
  interpretability's empty ``--seeds`` against an unknown dataset (a run that gets past
  them: tests/integration/test_sweep10_suitecli.py);
* ``tsrate suite understanding prompts``: each template's header names exactly its tasks,
  and the command exits 0;
* publishing: the default report path beside the warehouse, a missing snapshot named,
  ``read_marts`` strictly read-only (it neither creates nor writes a snapshot), and
  ``run_and_publish`` storing into the warehouse it is given.

Each mutant these catch would change what a user runs, is told, or gets back.
"""

from __future__ import annotations

import argparse

import pytest

from tsrate import TsrateError, cli
from tsrate.suites import publishing
from tsrate.suites.interpretability import cli as interp_cli
from tsrate.suites.reasoning import cli as rsn_cli
from tsrate.suites.understanding import cli as und_cli


def _parser(module) -> argparse.ArgumentParser:  # noqa: ANN001
    parser = argparse.ArgumentParser()
    module.add_run_arguments(parser)
    return parser


@pytest.fixture
def in_process(tmp_path, monkeypatch):
    """Flows run as plain functions on a warehouse of the test's own."""
    monkeypatch.setenv("TSRATE_PREFECT", "never")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "w.duckdb"))
    return tmp_path / "w.duckdb"


# ---------------------------------------------------------------------------------------
# reasoning's parser
# ---------------------------------------------------------------------------------------


def test_the_reasoning_defaults_are_the_documented_ones():
    """docs/suites/reasoning.md: 24 scenarios, 12 forecasting items, 100 steps; the help
    texts: seed 2024, fracast on all forecasting items, one greedy forecast reply."""
    args = _parser(rsn_cli).parse_args([])
    assert (args.scenarios, args.forecasts, args.length, args.seed) == (24, 12, 100, 2024)
    assert args.fracast is True
    assert args.forecast_samples == 1


@pytest.mark.parametrize("text", ["all", "yes", "true"])
def test_fracast_all_is_every_item(text):
    assert _parser(rsn_cli).parse_args(["--fracast", text]).fracast is True


def test_fracast_takes_zero_and_refuses_a_negative_count():
    parser = _parser(rsn_cli)
    assert parser.parse_args(["--fracast", "0"]).fracast == 0
    assert parser.parse_args(["--fracast", "1"]).fracast == 1
    with pytest.raises(argparse.ArgumentTypeError, match=">= 0"):
        rsn_cli._fracast("-1")


def test_forecast_samples_start_at_one(capsys):
    parser = _parser(rsn_cli)
    assert parser.parse_args(["--forecast-samples", "1"]).forecast_samples == 1
    assert parser.parse_args(["--forecast-samples", "2"]).forecast_samples == 2
    with pytest.raises(SystemExit):
        parser.parse_args(["--forecast-samples", "0"])
    assert "argument --forecast-samples: must be 1 or more, got 0" in (capsys.readouterr().err)


def test_no_references_and_no_llm_is_nothing_to_run(in_process, capsys):
    """The flow gets ``references=False`` from ``--no-references``: with no --llm it stops
    with one line before storing anything."""
    argv = ["suite", "reasoning", "run", "--no-references", "--no-build"]
    argv += ["--scenarios", "4", "--forecasts", "2", "--fracast", "0", "--tasks", "qa_single"]
    assert cli.main(argv) == 2
    assert "no references and no --llm" in capsys.readouterr().err
    assert not in_process.exists()


# ---------------------------------------------------------------------------------------
# understanding's parser, errors and prompts
# ---------------------------------------------------------------------------------------


def test_sample_alone_is_16_questions_and_1_is_accepted():
    """docs/suites/understanding.md: "``--sample`` alone: 16"."""
    parser = _parser(und_cli)
    assert parser.parse_args(["--sample"]).sample == 16
    assert parser.parse_args(["--sample", "1"]).sample == 1
    with pytest.raises(SystemExit):
        parser.parse_args(["--sample", "0"])


def test_test_size_is_an_override_only_when_given():
    parser = _parser(und_cli)
    assert und_cli.overrides_from_args(parser.parse_args(["--test-size", "3"])) == {"test": 3}
    assert und_cli.overrides_from_args(parser.parse_args(["--test-size", "1"])) == {"test": 1}
    assert und_cli.overrides_from_args(parser.parse_args([])) == {}


#: a tiny understanding run (one dataset, one test series, one task), no build
TINY_UND = ["--datasets", "trend", "--test-size", "1", "--tasks", "detection", "--no-build"]


def test_a_cot_parser_needs_chain_of_thought_prompting(in_process, capsys):
    argv = ["suite", "understanding", "run", "--cot-parser", "endpoint:x", *TINY_UND]
    assert cli.main(argv) == 2
    assert "--cot-parser reads chain-of-thought replies" in capsys.readouterr().err
    assert not in_process.exists()


@pytest.mark.parametrize(
    "extra", [[], ["--prompting", "cot", "--cot-parser", "endpoint:x"], ["--prompting", "both"]]
)
def test_no_reference_and_no_llm_is_no_system_to_ask(in_process, capsys, extra):
    """Past the --cot-parser check (no parser, or one with chain of thought), the flow gets
    ``references=False`` from ``--no-reference`` and stops with one line."""
    argv = ["suite", "understanding", "run", "--no-reference", *extra, *TINY_UND]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "no system to ask" in err and "--cot-parser" not in err
    assert not in_process.exists()


def test_each_template_header_names_exactly_its_tasks():
    """Two tasks share the arithmetic template (min and max); every other task has its own."""
    shown = und_cli.prompts_text()
    assert "; tasks: arithmetic_min, arithmetic_max) ===" in shown
    assert "; tasks: detection) ===" in shown
    assert "; tasks: matching_cross) ===" in shown
    assert "; tasks: arithmetic_min, arithmetic_max) ===" in und_cli.prompts_text("arithmetic_max")


def test_the_prompts_command_exits_0(capsys):
    assert cli.main(["suite", "understanding", "prompts", "--task", "search"]) == 0
    assert "; tasks: search) ===" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------
# interpretability's one-line errors
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("seeds", [[], ["--seeds", "1"], ["--seeds", "1,2"]])
def test_seeds_given_or_not_reach_the_flow(in_process, capsys, seeds):
    """No --seeds, or some seeds, is not the empty-seeds error: the flow runs and names the
    unknown dataset first."""
    argv = ["suite", "interpretability", "run", "--datasets", "99", *seeds, "--no-build"]
    assert cli.main([*argv, "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert "unknown dataset(s) [99]" in err and "--seeds" not in err


def test_an_empty_seeds_list_is_named(in_process, capsys):
    assert cli.main(["suite", "interpretability", "run", "--seeds", "", "--no-build"]) == 2
    assert "--seeds names no seed" in capsys.readouterr().err
    assert not in_process.exists()


def test_interpretability_seeds_parse_as_numbers():
    args = _parser(interp_cli).parse_args(["--seeds", "3, 4", "--datasets", "2 4"])
    assert (args.seeds, args.datasets) == ([3, 4], [2, 4])


# ---------------------------------------------------------------------------------------
# publishing
# ---------------------------------------------------------------------------------------


def test_the_default_report_is_in_reports_beside_the_warehouse(tmp_path):
    warehouse = tmp_path / "data" / "tsrate.duckdb"
    assert publishing.report_path(warehouse, "reasoning") == tmp_path / "data" / "reports" / (
        "reasoning.html"
    )


def test_a_missing_snapshot_is_named_with_the_command_that_makes_one(tmp_path):
    with pytest.raises(TsrateError, match="finish a `tsrate suite understanding run` first"):
        publishing.write_suite_report("understanding", tmp_path / "none.duckdb", tmp_path / "r")


def test_read_marts_never_creates_or_writes_a_snapshot(tmp_path):
    import duckdb

    with pytest.raises(TsrateError, match="no warehouse at"):
        publishing.read_marts(tmp_path / "missing.duckdb", {"x": "select 1"})
    assert not (tmp_path / "missing.duckdb").exists()
    snapshot = tmp_path / "s.duckdb"
    duckdb.connect(str(snapshot)).close()
    assert publishing.read_marts(snapshot, {"one": "select 1 as x"})["one"]["x"].tolist() == [1]
    with pytest.raises(duckdb.Error, match="read-only"):
        publishing.read_marts(snapshot, {"write": "create table t as select 1 as x"})


def test_run_and_publish_stores_into_the_warehouse_it_is_given(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "default.duckdb"))
    given = []

    def work(warehouse: str) -> str:
        given.append(warehouse)
        return "rsn-1"

    caplog.set_level("INFO", logger="tsrate.run")
    chosen = str(tmp_path / "chosen.duckdb")
    assert publishing.run_and_publish("reasoning", work, chosen, 0.0, False, None) == "rsn-1"
    assert publishing.run_and_publish("reasoning", work, None, 0.0, False, None) == "rsn-1"
    assert given == [chosen, str(tmp_path / "default.duckdb")]
    assert "reasoning suite finished in" in caplog.text
