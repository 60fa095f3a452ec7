"""The page shell every report shares (tsrate.html.page): the verdict's list of names, the
fold, the table and its scroll box, the page's optional heading, subtitle and navigation,
human column names at their edges, frame tables (digits, labels, booleans, nulls, the
index left out) and the on-disk cache of the chart libraries, each against a hand-written
expectation.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_report_figures.json).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tsrate.html import page as pg


@pytest.mark.parametrize(
    ("names", "text"),
    [
        (["a"], "<b>a</b>"),
        (["a", "b"], "<b>a</b> and <b>b</b>"),
        (["a", "b", "c"], "<b>a</b>, <b>b</b> and <b>c</b>"),
        (["a", "b", "c", "<d>"], "<b>a</b>, <b>b</b>, <b>c</b> and <b>&lt;d&gt;</b>"),
    ],
)
def test_names_are_listed_as_a_sentence(names, text):
    assert pg.named(names) == text


def test_a_fold_is_closed_unless_asked_open():
    assert pg.details("s", "b") == "<details><summary>s</summary>b</details>"
    assert pg.details("s", "b", open_=True) == "<details open><summary>s</summary>b</details>"


def test_a_table_scrolls_in_its_box_unless_told_not_to():
    inner = (
        '<table class="c"><thead><tr><th>h1</th><th>h2</th></tr></thead>'
        "<tbody><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></tbody></table>"
    )
    assert pg.table(["h1", "h2"], [["1", "2"], ["3", "4"]], css="c") == (
        f'<div class="table-scroll">{inner}</div>'
    )
    assert pg.table(["h1", "h2"], [["1", "2"], ["3", "4"]], css="c", scroll=False) == inner


def test_a_page_shows_only_the_parts_it_is_given():
    full = pg.page("T<", "Head", ["<p>one</p>", "<p>two</p>"], nav=[("a", "A")], subtitle="sub")
    start = full.index("<body>") + len("<body>")
    assert full[start:].startswith(
        '<h1>Head</h1><p class="source">sub</p><nav><a href="#a">A</a></nav><p>one</p><p>two</p>'
        "<script>"
    )
    assert "<title>T&lt;</title>" in full and full.endswith("</script></body></html>\n")
    bare = pg.page("T", "", ["<p>one</p>"])
    start = bare.index("<body>") + len("<body>")
    assert bare[start:].startswith("<p>one</p><script>")
    assert "<h1>" not in bare and "<nav>" not in bare and 'class="source"' not in bare


@pytest.mark.parametrize(
    ("column", "header"),
    [
        ("id", "id"),  # every word spelled as nothing: the column as it is
        ("n", "N"),
        ("x", "X"),
        ("f1_ci_high", "F1 CI high"),
        ("rank_of_wrs", "Rank of WRS"),
        ("pct_systems_id", "% systems"),
    ],
)
def test_human_headers_at_their_edges(column, header):
    assert pg.human(column) == header


def test_a_frame_table_rounds_to_three_digits_and_leaves_the_index_out():
    frame = pd.DataFrame(
        {
            "system_id": ["a", "b", None],
            "score": [0.123456, 12345.678, np.nan],
            "ok": [True, False, True],
        },
        index=[10, 20, 30],
    )
    frame["when"] = [pd.NaT, pd.Timestamp("2022-01-03"), pd.NaT]
    html = pg.frame_table(frame, labels={"ok": "Fine?"})
    rows = html.split("<tbody>")[1]
    assert "<th>System</th><th>Score</th><th>Fine?</th><th>When</th>" in html
    assert rows.startswith("<tr><td>a</td><td>0.123</td><td>yes</td><td></td></tr>")
    assert "<tr><td>b</td><td>1.23e+04</td><td>no</td><td>2022-01-03 00:00:00</td></tr>" in rows
    assert "<tr><td></td><td></td><td>yes</td><td></td></tr>" in rows
    assert "<td>10</td>" not in rows
    assert "<td>0.12346</td>" in pg.frame_table(frame, digits=5)


def test_a_frame_table_shows_a_list_cell_as_text():
    """A list cell (not a scalar) is printed, never taken for a null."""
    html = pg.frame_table(pd.DataFrame({"ids": [["a", "b"]]}))
    assert "<td>[&#x27;a&#x27;, &#x27;b&#x27;]</td>" in html


def test_the_chart_libraries_are_cached_under_xdg_cache_home(tmp_path, monkeypatch):
    """The bundle is written to $XDG_CACHE_HOME/tsrate (made with its parents), also when
    that folder already exists without the bundle, and read back from there."""
    import vl_convert

    name = f"vega-bundle-{vl_convert.__version__}-{pg.VEGA_LITE_VERSION}.js"
    deep = tmp_path / "a" / "b"
    monkeypatch.setenv("XDG_CACHE_HOME", str(deep))
    text = pg.vega_bundle.__wrapped__()
    assert "vegaEmbed" in text
    assert (deep / "tsrate" / name).read_text(encoding="utf-8") == text
    there = tmp_path / "c"
    (there / "tsrate").mkdir(parents=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(there))
    assert pg.vega_bundle.__wrapped__() == text
    assert (there / "tsrate" / name).exists()
    (there / "tsrate" / name).write_text("cached", encoding="utf-8")
    assert pg.vega_bundle.__wrapped__() == "cached"
