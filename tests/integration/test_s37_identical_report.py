"""The report's sentences about systems that cannot be told apart and about the leaderboard's
two orders, on the report study's real snapshot (tests/integration/report_study.py, built
once per test process): the pairs the report finds are those a plain comparison of the
snapshot's marts.forecast_traces finds (none: naive, random and biased differ), and a copy
of the snapshot where a second id holds naive's forecasts has its verdict name the two; and a
copy whose leaderboard rows order naive differently by win rate and skill score says so.

The sentences' rules on hand-built frames: tests/unit/test_s37_identical_systems.py and
tests/unit/test_s37_leaderboard_orders.py."""

from __future__ import annotations

import itertools
import re
import shutil

import duckdb
import numpy as np
import pytest

from tests.integration.report_study import built_report
from tsrate.robustness.report.data import load_report_data
from tsrate.robustness.report.render import build_report

pytestmark = pytest.mark.slow

KEY = ["ticker", "window_end_date", "perturbation_id", "horizon_step"]


@pytest.fixture(scope="module")
def reported(tmp_path_factory, session_parse):
    return built_report(tmp_path_factory, session_parse)


def plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def _verdict(html: str) -> str:
    return plain(re.search(r'<section id="verdict">(.*?)</section>', html, re.S).group(1))


def _pairs_by_hand(snapshot, run_id) -> list[tuple[str, str]]:
    """Pairs whose forecasts match on every shared step, by pandas over the whole mart."""
    con = duckdb.connect(str(snapshot), read_only=True)
    try:
        traces = con.execute("select * from marts.forecast_traces where run_id = ?", [run_id]).df()
    finally:
        con.close()
    by_system = {s: f.set_index(KEY)["forecast"] for s, f in traces.groupby("system_id")}
    found = []
    for a, b in itertools.combinations(sorted(by_system), 2):
        left, right = by_system[a].align(by_system[b], join="inner")
        if len(left) and np.allclose(left, right, rtol=1e-9, atol=0, equal_nan=True):
            found.append((a, b))
    return found


def test_the_report_finds_the_pairs_a_plain_comparison_finds(reported):
    data = load_report_data(reported["snapshot"])
    assert [(a, b) for a, b, _ in data.identical_pairs] == _pairs_by_hand(
        reported["snapshot"], reported["run_id"]
    )
    assert data.identical_pairs == []  # naive, random and biased forecast differently
    assert "cannot be told apart" not in plain(reported["output"].read_text())


def test_a_second_id_holding_naives_forecasts_is_named_in_the_verdict(reported, tmp_path):
    copy = tmp_path / "tsrate.duckdb"
    shutil.copy(reported["snapshot"], copy)
    con = duckdb.connect(str(copy))
    try:
        con.execute(
            "insert into marts.forecast_traces select * replace ('naive_twin' as system_id) "
            "from marts.forecast_traces where system_id = 'naive'"
        )
    finally:
        con.close()
    data = load_report_data(copy)
    assert [(a, b) for a, b, _ in data.identical_pairs] == [("naive", "naive_twin")]
    assert _pairs_by_hand(copy, reported["run_id"]) == [("naive", "naive_twin")]
    verdict = _verdict(build_report(data, generated_at="now").html)
    said = [s for s in verdict.split(". ") if "cannot be told apart" in s]
    assert len(said) == 1 and "naive and naive_twin" in said[0], verdict


def test_the_leaderboard_says_when_its_two_orders_differ(reported, tmp_path):
    """The study has no seasonal_naive baseline, so its leaderboard ranks nobody: a copy of
    the snapshot whose MASE rows rank naive first on win rate and last on skill score has
    that metric, and no other, say so, naming naive and the leader."""
    copy = tmp_path / "tsrate.duckdb"
    shutil.copy(reported["snapshot"], copy)
    values = {"naive": (0.05, 0.75), "random": (0.30, 0.40), "biased": (0.20, 0.35)}
    con = duckdb.connect(str(copy))
    try:
        for system, (skill, win) in values.items():
            con.execute(
                "update marts.leaderboard set skill_score = ?, win_rate = ? "
                "where scope = 'all' and metric = 'mase' and system_id = ?",
                [skill, win, system],
            )
    finally:
        con.close()
    html = build_report(load_report_data(copy), generated_at="now").html
    section = re.search(r'<section id="leaderboard">(.*?)</section>', html, re.S).group(1)
    assert plain(section).count("order the systems differently") == 1
    mase = plain(section.split("<h3>MASE</h3>")[1].split("<h3>")[0])
    assert "naive has the best win rate (0.75) but ranks 3rd on skill score" in mase
    assert "random has the best, 0.3" in mase
    original = plain(reported["output"].read_text())
    assert "order the systems differently" not in original  # nobody ranked: nothing to say
