"""The overview table, Table 2 and the radars mark a system rated on fewer perturbations.

Their numbers stay the marts' means over each system's own perturbations, so a P0-only
import has its SMAPE over clean inputs beside the others' over P0-P3: its row in the
overview table and the averaged radars' captions say so (a short "P0 only" with a
tooltip); with every system fully rated nothing is added.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.support.report_text import rating_rows, report_data, uniform
from tsrate.robustness.report.radars import radar_section
from tsrate.robustness.report.render import PARTIAL_STYLE, build_report
from tsrate.robustness.report.sections import overview_section, summary_section


def run_keeping(keep: tuple[str, ...]) -> pd.DataFrame:
    """zeta and alpha rated on P0-P3; mid on ``keep`` only (its other rows dropped)."""
    rows = rating_rows(
        {
            "zeta": uniform(2, smape=30.0),
            "alpha": uniform(1, smape=20.0),
            "mid": uniform(3, smape=25.0),
        }
    )
    partial = (rows["system_id"] == "mid") & ~rows["perturbation_id"].isin(keep)
    return rows[~partial].reset_index(drop=True)


def system_cells(html: str) -> dict[str, str]:
    """{system: its System cell's HTML} in the overview table."""
    cells = re.findall(r"<td><code>([^<]*)</code>(.*?)</td>", html)
    return dict(cells)


def test_the_overview_marks_a_p0_only_system_and_no_other():
    rows = run_keeping(("P0",))
    assert sorted(set(rows.loc[rows["system_id"] == "mid", "perturbation_id"])) == ["P0"]
    cells = system_cells(overview_section(report_data(rows)))
    assert set(cells) == {"zeta", "alpha", "mid"}
    mark = re.search(r'<small class="partial" title="([^"]*)">([^<]*)</small>', cells["mid"])
    assert mark is not None and mark.group(2) == "P0 only"
    assert "mid was rated on P0 only: its means cover fewer perturbations than the others" in (
        mark.group(1)
    )
    assert "(P0, P1, P2 and P3)" in mark.group(1)
    assert cells["zeta"] == "" and cells["alpha"] == ""


def test_a_system_missing_one_perturbation_is_named_with_those_it_has():
    cells = system_cells(overview_section(report_data(run_keeping(("P0", "P1", "P3")))))
    assert ">P0, P1 and P3</small>" in cells["mid"]
    assert cells["zeta"] == "" and cells["alpha"] == ""


def test_no_mark_when_every_system_is_fully_rated():
    html = overview_section(report_data(run_keeping(("P0", "P1", "P2", "P3"))))
    assert set(system_cells(html)) == {"zeta", "alpha", "mid"}
    assert 'class="partial"' not in html and "only" not in html


def test_table_2_marks_the_partial_system_in_its_column_header():
    html = summary_section(report_data(run_keeping(("P0",))))
    headers = dict(re.findall(r"<th><code>([^<]*)</code>(.*?)</th>", html))
    assert set(headers) == {"zeta", "alpha", "mid"}
    assert (
        ">P0 only</small>" in headers["mid"]
        and 'title="mid was rated on P0 only' in (headers["mid"])
    )
    assert headers["zeta"] == "" and headers["alpha"] == ""
    full = summary_section(report_data(run_keeping(("P0", "P1", "P2", "P3"))))
    assert 'class="partial"' not in full


def test_the_averaged_radars_say_which_system_averages_over_fewer_perturbations():
    html = radar_section(report_data(run_keeping(("P0",))), {})
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", html, flags=re.S)
    averaged = [c for c in captions if "average over perturbations" in c]
    assert len(averaged) == 2  # robustness and accuracy
    for caption in averaged:
        # the tooltip's sentence alone: the name is not said twice
        assert ". mid was rated on P0 only: its means cover fewer perturbations" in caption
        assert caption.count("mid") == 1 and "(P0 only):" not in caption
        assert "zeta" not in caption and "alpha" not in caption
    assert not any("P0 only" in c for c in captions if c not in averaged)
    full = radar_section(report_data(run_keeping(("P0", "P1", "P2", "P3"))), {})
    assert "rated on" not in full


def legends(charts: dict[str, dict]) -> dict[str, tuple[list[str], set[str]]]:
    """{chart: (its legend's entries, the series its points belong to)}."""
    out = {}
    for name, spec in charts.items():
        scales = [layer["encoding"]["color"]["scale"] for layer in spec["layer"]]
        points = {row["series"] for row in spec["data"]["values"]}
        out[name] = (scales[0]["domain"], points)
    return out


@pytest.mark.parametrize("keep", [("P0",), ("P0", "P1", "P3")])
def test_every_radar_legend_marks_the_partial_system(keep):
    charts: dict[str, dict] = {}
    radar_section(report_data(run_keeping(keep)), charts)
    rated = keep[0] if len(keep) == 1 else ", ".join(keep[:-1]) + f" and {keep[-1]}"
    rated = f"{rated} only" if len(keep) == 1 else rated
    assert any("average" in name for name in charts) and len(charts) >= 4
    for name, (domain, points) in legends(charts).items():
        assert domain == ["zeta", "alpha", f"mid ({rated})"], name
        # the partial system's points carry the marked name (the legend picks by it)
        assert points <= set(domain) and {"zeta", "alpha"} <= points, name
    # an average over mid's own perturbations is plotted under its marked name
    for name in ("radar-robustness-average", "radar-accuracy-average"):
        assert f"mid ({rated})" in legends(charts)[name][1]


def test_no_legend_mark_when_every_system_is_fully_rated():
    charts: dict[str, dict] = {}
    radar_section(report_data(run_keeping(("P0", "P1", "P2", "P3"))), charts)
    for name, (domain, points) in legends(charts).items():
        assert domain == ["zeta", "alpha", "mid"] and points == set(domain), name


def test_the_page_styles_the_mark_only_when_it_has_one():
    def page(keep: tuple[str, ...]) -> str:
        rows = run_keeping(keep)
        rows = rows.assign(rank=rows.groupby(["metric", "perturbation_id"])["rating"].rank())
        return build_report(report_data(rows), generated_at="now").html

    style = re.search(r"<style>(.*?)</style>", page(("P0",)), flags=re.S)
    assert style is not None and PARTIAL_STYLE in style.group(1)
    rule = re.search(r"\.partial\{([^}]*)\}", style.group(1))
    assert rule is not None and "color:#" in rule.group(1)  # a muted mark, its own colour
    full = page(("P0", "P1", "P2", "P3"))
    assert ".partial{" not in full and 'class="partial"' not in full
