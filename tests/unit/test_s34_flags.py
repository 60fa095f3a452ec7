"""Every option typed "a whole number of N or more" (one argparse type,
``tsrate.commands.flags.at_least``) refuses 0, -1 and "x" in the same words, naming the
option and the bound, and takes its smallest value.

The expected lines are written out by hand: the whole ``tsrate: error: ...`` line through the
real top-level parser.
"""

from __future__ import annotations

import pytest

from tsrate import cli

RUN = ["run"]
REASONING = ["suite", "reasoning", "run"]
UNDERSTANDING = ["suite", "understanding", "run"]
INTERPRETABILITY = ["suite", "interpretability", "run"]

#: (command, option, value, what the user is told after "argument OPTION: ")
REFUSED = [
    (RUN, "--workers", "0", "must be 1 or more, got 0"),
    (RUN, "--workers", "-1", "must be 1 or more, got -1"),
    (RUN, "--workers", "x", "expected a whole number, got 'x'"),
    (REASONING, "--forecast-samples", "0", "must be 1 or more, got 0"),
    (REASONING, "--forecast-samples", "-1", "must be 1 or more, got -1"),
    (REASONING, "--forecast-samples", "x", "expected a whole number, got 'x'"),
    (
        REASONING,
        "--scenarios",
        "0",
        "must be 4 or more (an etiological item has 4 captions), got 0",
    ),
    (
        REASONING,
        "--scenarios",
        "-1",
        "must be 4 or more (an etiological item has 4 captions), got -1",
    ),
    (
        REASONING,
        "--scenarios",
        "3",
        "must be 4 or more (an etiological item has 4 captions), got 3",
    ),
    (REASONING, "--scenarios", "x", "expected a whole number, got 'x'"),
    (REASONING, "--forecasts", "-1", "must be 0 or more, got -1"),
    (REASONING, "--forecasts", "x", "expected a whole number, got 'x'"),
    (REASONING, "--length", "0", "must be 30 or more, got 0"),
    (REASONING, "--length", "-1", "must be 30 or more, got -1"),
    (REASONING, "--length", "29", "must be 30 or more, got 29"),
    (REASONING, "--length", "x", "expected a whole number, got 'x'"),
    (UNDERSTANDING, "--test-size", "0", "must be 1 or more, got 0"),
    (UNDERSTANDING, "--test-size", "-1", "must be 1 or more, got -1"),
    (UNDERSTANDING, "--test-size", "x", "expected a whole number, got 'x'"),
    (UNDERSTANDING, "--sample", "0", "must be 1 or more, got 0"),
    (UNDERSTANDING, "--sample", "-1", "must be 1 or more, got -1"),
    (UNDERSTANDING, "--sample", "x", "expected a whole number, got 'x'"),
    (INTERPRETABILITY, "--workers", "0", "must be 1 or more, got 0"),
    (INTERPRETABILITY, "--workers", "-1", "must be 1 or more, got -1"),
    (INTERPRETABILITY, "--workers", "x", "expected a whole number, got 'x'"),
]

#: (command, option, the smallest value it takes)
SMALLEST = [
    (RUN, "--workers", 1),
    (REASONING, "--forecast-samples", 1),
    (REASONING, "--scenarios", 4),
    (REASONING, "--forecasts", 0),
    (REASONING, "--length", 30),
    (UNDERSTANDING, "--test-size", 1),
    (UNDERSTANDING, "--sample", 1),
    (INTERPRETABILITY, "--workers", 1),
]


@pytest.mark.parametrize(("command", "option", "value", "told"), REFUSED)
def test_a_number_below_the_least_is_refused_in_the_same_words(
    capsys, command, option, value, told
):
    with pytest.raises(SystemExit) as stopped:
        cli.build_parser().parse_args([*command, option, value])
    assert stopped.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    name = " ".join(["tsrate", *command])
    assert line == f"tsrate: error: {name}: argument {option}: {told}; see '{name} --help'"


@pytest.mark.parametrize(("command", "option", "least"), SMALLEST)
def test_the_least_is_taken_as_a_number(command, option, least):
    args = cli.build_parser().parse_args([*command, option, str(least)])
    assert getattr(args, option[2:].replace("-", "_")) == least
