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
    counted = re.search(r"all (\d+) formats", text)
    assert counted, text
    assert int(counted.group(1)) == len(FORMATS) == 9
