"""`tsrate suite understanding run --help` as an ML engineer reads it: the small
configuration asks every text format, and the help counts them right (it said 8 of 9)."""

from __future__ import annotations

import re

import pytest

from tsrate import cli
from tsrate.suites.understanding.formats import FORMATS


def test_the_small_configuration_counts_every_format(capsys):
    with pytest.raises(SystemExit):
        cli.main(["suite", "understanding", "run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    counted = re.search(r"series per feature set in (\d+) formats", text)
    assert counted, text
    assert int(counted.group(1)) == len(FORMATS) == 9


@pytest.mark.parametrize(
    "command, flag, value, wanted",
    [
        (["suite", "reasoning", "run"], "--scenarios", "0", "must be 4 or more"),
        (["suite", "reasoning", "run"], "--forecasts", "-1", "must be 0 or more"),
        (["suite", "reasoning", "run"], "--length", "5", "must be 30 or more"),
        (["suite", "understanding", "run"], "--test-size", "0", "must be 1 or more"),
    ],
)
def test_a_size_too_small_names_its_option(command, flag, value, wanted, capsys):
    """The suites' size options were checked deep in the generators, in their own words
    ("the generator needs at least 4 scenarios", "series must have at least 30 steps",
    "test must be positive"), naming no option; --forecasts -1 asked for no items at all."""
    with pytest.raises(SystemExit) as stopped:
        cli.build_parser().parse_args([*command, flag, value])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if "error:" in line)
    assert f"argument {flag}: {wanted}" in line and f"got {value}; see '" in line


@pytest.mark.parametrize(
    "command, flag, value",
    [
        (["suite", "reasoning", "run"], "--scenarios", "4"),
        (["suite", "reasoning", "run"], "--forecasts", "0"),
        (["suite", "reasoning", "run"], "--length", "30"),
        (["suite", "understanding", "run"], "--test-size", "1"),
    ],
)
def test_the_smallest_sizes_are_taken(command, flag, value):
    args = cli.build_parser().parse_args([*command, flag, value])
    assert getattr(args, flag.removeprefix("--").replace("-", "_")) == int(value)


def test_interpretability_seeds_that_are_not_numbers_are_called_seeds(capsys):
    """`--seeds x` said "not a list of dataset numbers"."""
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["suite", "interpretability", "run", "--seeds", "x"])
    err = capsys.readouterr().err
    assert "argument --seeds: not a list of seed numbers: 'x'" in err
    assert "dataset" not in err.splitlines()[-1]


@pytest.mark.parametrize("workers", ["0", "-2"])
def test_interpretability_workers_take_1_or_more(workers, capsys):
    """`--workers 0` silently meant the default (every core up to 4) and a negative number
    one process, as `tsrate run --workers` did before it took 1 or more."""
    with pytest.raises(SystemExit) as stopped:
        cli.build_parser().parse_args(["suite", "interpretability", "run", "--workers", workers])
    assert stopped.value.code == 2
    assert f"argument --workers: must be 1 or more, got {workers}" in capsys.readouterr().err
    args = cli.build_parser().parse_args(["suite", "interpretability", "run", "--workers", "1"])
    assert args.workers == 1
