"""The probabilistic section shows where stored quantiles cross (marts.probabilistic_scores'
n_quantile_steps and n_crossed_steps, per system and perturbation): a 'Crossed quantiles'
column of 'k of n steps (p %)' and a sentence naming each system that crosses, with its
total over perturbations and what it means (the scores use the quantiles as stored). Nothing
when none cross; a snapshot published before the columns renders as before. Expected
counts and shares are worked out by hand from the rows each test writes."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pandas as pd

from tsrate.robustness.report.data import REQUIRED_MARTS
from tsrate.robustness.report.numbers import num
from tsrate.robustness.report.probabilistic import (
    PROBABILISTIC_METRICS,
    probabilistic_section,
    share_text,
)
from tsrate.robustness.report.render import render_report

NO_QUANTILES = "the system gives no quantile forecasts"


def scores(counts: dict[tuple[str, str], tuple[int, int]] | None) -> pd.DataFrame:
    """4 metric rows per (system, perturbation); counts (steps, crossed) on each, or none of
    the two columns (an older snapshot) when ``counts`` is None. System 'pt' has no
    quantiles: null means, 0 of 0 steps."""
    keys = [("a", "P0"), ("a", "P1"), ("b", "P0"), ("b", "P1"), ("pt", "P0")]
    rows = []
    for system, perturbation in keys:
        for i, metric in enumerate(PROBABILISTIC_METRICS):
            row = dict(
                run_id="r1",
                system_id=system,
                perturbation_id=perturbation,
                metric=metric,
                mean=None if system == "pt" else 0.1 * (i + 1),
                reason=NO_QUANTILES if system == "pt" else None,
            )
            if counts is not None:
                steps, crossed = counts.get((system, perturbation), (0, 0))
                row.update(n_quantile_steps=steps, n_crossed_steps=crossed)
            rows.append(row)
    return pd.DataFrame(rows)


#: a crosses 1 of 40 steps under P0 and 9 of 40 under P1 (10 of 80: 12.5 % -> '12 %'
#: whole above 10 %); b never crosses; pt has no quantile steps
CROSSING = {("a", "P0"): (40, 1), ("a", "P1"): (40, 9), ("b", "P0"): (40, 0), ("b", "P1"): (40, 0)}


def plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def cells_of(html: str) -> list[list[str]]:
    body = html.split("<tbody>")[1]
    return [
        [plain(c).strip() for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def header_of(html: str) -> list[str]:
    return re.findall(r"<th>(.*?)</th>", html.split("<tbody>")[0])


def test_s32_visible_a_crossing_system_gets_a_column_and_a_sentence():
    html = probabilistic_section(scores(CROSSING), num)
    assert header_of(html) == [
        "System", "Perturbation", "WQL", "CRPS", "MSIS", "80 % coverage",
        "Crossed quantiles", "Note",
    ]  # fmt: skip
    crossed = [row[6] for row in cells_of(html)]
    assert crossed == [
        "1 of 40 steps (2.5 %)",
        "9 of 40 steps (22 %)",  # 22.5 % whole above 10 %
        "0 of 40 steps (0 %)",
        "0 of 40 steps (0 %)",
        "–",  # pt: no quantile steps at all
    ]
    # the sentence names a alone, with its total over both perturbations
    text = plain(html)
    assert "in a 10 of 80 steps (12 %) (over all perturbations" in text
    assert " b 0 of" not in text and "pt 0 of" not in text
    assert "score the quantiles as stored, as fev does (never re-sorted)" in text
    # the sentence's totals are sums over the system's WQL rows (one per perturbation)
    assert (
        'data-column="n_crossed_steps" data-where="{&quot;metric&quot;: &quot;wql&quot;, '
        '&quot;system_id&quot;: &quot;a&quot;}" data-value="10.0" data-agg="sum"'
    ) in html
    # the counts are traceable to their mart row
    assert (
        'data-column="n_crossed_steps" data-where="{&quot;metric&quot;: &quot;wql&quot;, '
        "&quot;perturbation_id&quot;: &quot;P1&quot;, &quot;system_id&quot;: &quot;a&quot;}"
        '" data-value="9.0"'
    ) in html


def test_s32_visible_the_counts_are_read_from_the_groups_own_row():
    """The mart's rows in another order: each cell still reads its own system and
    perturbation (b crosses 3 of 30 under P1 alone)."""
    frame = scores({("a", "P0"): (20, 0), ("b", "P1"): (30, 3)}).iloc[::-1]
    html = probabilistic_section(frame, num)
    by_key = {(row[0], row[1]): row[6] for row in cells_of(html)}
    assert by_key == {
        ("a", "P0"): "0 of 20 steps (0 %)",
        ("a", "P1"): "–",
        ("b", "P0"): "–",
        ("b", "P1"): "3 of 30 steps (10 %)",
        ("pt", "P0"): "–",
    }
    assert "in b 3 of 30 steps (10 %) (over" in plain(html)
    # each cell reads (and names) the WQL row, wherever the mart put it
    wheres = re.findall(r'data-column="n_\w+" data-where="([^"]*)"', html)
    assert len(wheres) == 6 and all("&quot;metric&quot;: &quot;wql&quot;" in w for w in wheres)


def test_s32_visible_nothing_when_no_step_crosses_and_old_snapshots_render_as_before():
    old = probabilistic_section(scores(None), num)
    none = probabilistic_section(scores({k: (40, 0) for k in CROSSING}), num)
    assert none == old
    assert "Crossed" not in old and header_of(old)[-2:] == ["80 % coverage", "Note"]
    assert cells_of(old)[0] == ["a", "P0", "0.1", "0.2", "0.3", "0.4", ""]
    assert cells_of(old)[-1] == ["pt", "P0", "–", "–", "–", "–", NO_QUANTILES]


def test_s32_visible_null_counts_read_as_no_steps():
    frame = scores(CROSSING)
    frame.loc[frame["system_id"] == "b", ["n_quantile_steps", "n_crossed_steps"]] = None
    html = probabilistic_section(frame, num)
    assert [row[6] for row in cells_of(html)][2:4] == ["–", "–"]
    assert "in a 10 of 80 steps (12 %)" in plain(html)
    # every count null (no system with quantile steps known): as an older snapshot
    frame[["n_quantile_steps", "n_crossed_steps"]] = None
    assert probabilistic_section(frame, num) == probabilistic_section(scores(None), num)


def test_s32_visible_a_single_crossed_step_is_shown():
    html = probabilistic_section(scores({("b", "P1"): (500, 1)}), num)
    assert "Crossed quantiles" in html and "in b 1 of 500 steps (0.2 %)" in plain(html)


def test_s32_visible_the_share_never_hides_a_crossing_nor_claims_all():
    assert share_text(0, 7) == "0 %"
    assert share_text(1, 2000) == "<0.1 %"  # 0.05 % would print 0.1 or 0.0
    assert share_text(1, 1000) == "0.1 %"
    assert share_text(1, 20) == "5.0 %"
    assert share_text(19, 200) == "9.5 %"  # one decimal below 10 %
    assert share_text(1, 3) == "33 %"
    assert share_text(1999, 2000) == "99 %"  # 99.95 % is not every step
    assert share_text(5, 5) == "100 %"


def snapshot(path: Path, frame: pd.DataFrame) -> Path:
    """A published snapshot with the required marts empty, one run r1 and ``frame`` as
    marts.probabilistic_scores (a real DuckDB file, read as the report reads it)."""
    con = duckdb.connect(str(path))
    con.execute("create schema marts")
    for mart in REQUIRED_MARTS:
        con.execute(
            f"create table marts.{mart} (run_id varchar, system_id varchar, metric varchar, "
            "perturbation_id varchar)"
        )
    con.register("frame", frame)
    con.execute("create table marts.probabilistic_scores as select * from frame")
    con.execute(
        "create table published_runs as select 'r1' as run_id, "
        "timestamp '2026-01-02 03:04:05' as published_at, '{}' as study"
    )
    con.close()
    return path


def section(page: str) -> str:
    start = page.index('<section id="probabilistic">')
    return page[start : page.index("</section>", start)]


def test_s32_visible_the_report_of_a_snapshot_shows_crossings_and_an_old_one_renders(tmp_path):
    _, new = render_report(snapshot(tmp_path / "new.duckdb", scores(CROSSING)))
    part = section(new.html)
    assert "Crossed quantiles" in part and "in a 10 of 80 steps (12 %)" in plain(part)
    _, old = render_report(snapshot(tmp_path / "old.duckdb", scores(None)))
    part = section(old.html)
    assert "Crossed" not in part
    assert cells_of(part)[0] == ["a", "P0", "0.1", "0.2", "0.3", "0.4", ""]


def test_s32_visible_a_cell_without_its_wql_row_traces_another_and_the_total_is_plain():
    """a/P1 lost its WQL row: its cell reads the CRPS row (same counts); a's total mixes
    two metrics, so no one sum over the mart traces it: printed as plain text."""
    frame = scores(CROSSING)
    frame = frame[~((frame["system_id"] == "a") & (frame["perturbation_id"] == "P1")
                    & (frame["metric"] == "wql"))]  # fmt: skip
    html = probabilistic_section(frame, num)
    assert [row[6] for row in cells_of(html)][:2] == [
        "1 of 40 steps (2.5 %)",
        "9 of 40 steps (22 %)",
    ]
    assert (
        "&quot;metric&quot;: &quot;crps&quot;, &quot;perturbation_id&quot;: &quot;P1&quot;" in html
    )
    assert 'data-agg="sum"' not in html and "in a 10 of 80 steps (12 %)" in plain(html)


def test_s32_visible_the_sentence_names_systems_in_order_under_one_perturbation():
    """Only P0 in the run; z comes first in the mart, crossing 2 of 10, a 1 of 10: the
    sentence names a then z, each traced to its one WQL row's sum."""
    frame = scores({("a", "P0"): (10, 1), ("b", "P0"): (10, 2)})
    frame = frame[frame["perturbation_id"] == "P0"].replace({"system_id": {"b": "z"}})
    html = probabilistic_section(frame.iloc[::-1], num)
    assert "in a 1 of 10 steps (10 %); z 2 of 10 steps (20 %) (over" in plain(html)
    assert html.count('data-agg="sum"') == 4
