"""The report's HTML builders, as pure functions over small hand-made frames: numbers and
the mart rows they carry, a self-contained page whose charts are Vega-Lite specs, the study
section, the contracts of the SQL marts and the snapshot's loading (the page shell: tests/unit/test_report_page.py; the report built from a real snapshot:
tests/integration/test_report_marts.py and its neighbours).
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from tests.support.report_builders import (
    html_tags,
)
from tests.support.report_frames import RUN, two_systems
from tsrate.html.charts import (
    check_specs,
    figure,
    page_specs,
)
from tsrate.robustness.report.render import (
    build_report,
    format_number,
    num,
    study_section,
)

# ----------------------------------------------------------------------------- numbers


def test_format_number_precision():
    assert format_number(4491.3) == "4,491"
    assert format_number(3.14159) == "3.14"
    assert format_number(0.012345) == "0.0123"
    assert format_number(0) == "0.00"
    assert format_number(3.0, integer=True) == "3"
    assert format_number(None) == "–"
    assert format_number(float("nan")) == "–"


def test_num_carries_its_mart_row():
    html = num(0.5, "ratings", "raw_score", {"run_id": RUN, "metric": "smape"})
    assert 'data-mart="marts.ratings"' in html and 'data-column="raw_score"' in html
    where = json.loads(re.search(r'data-where="([^"]*)"', html).group(1).replace("&quot;", '"'))
    assert where == {"metric": "smape", "run_id": RUN}
    assert 'data-value="0.5"' in html and ">0.5<" in html
    assert "data-mart" not in num(None, "ratings", "raw_score", {})


def test_report_is_self_contained_and_every_chart_is_a_vega_lite_spec():
    report = build_report(two_systems(), generated_at="now")
    tags = html_tags(report.html)
    assert not [t for t, a in tags if t in ("link", "img", "iframe")]
    assert not [a for t, a in tags if t == "script" and a.get("src")]
    assert not re.search(r"(src|href)=\"https?:", report.html)
    # outside the inlined libraries (whose code names url( and @import), no fetch either;
    # the browser test checks that the page makes no request at all
    outside = re.sub(r"<script>.*?</script>", "", report.html, flags=re.S)
    assert "@import" not in outside and "url(" not in outside
    expected = {
        "radar-robustness-p1",
        "radar-robustness-p2",
        "radar-robustness-average",
        "radar-accuracy-p0",
        "radar-accuracy-average",
        "confounders-ape",
    }
    assert expected <= set(report.charts)
    assert "radar-robustness-p0" not in report.charts  # P0 has only WRS: 2 axes
    specs = page_specs(report.html)
    assert specs == report.charts  # every chart is in the page, spec for spec
    for spec in specs.values():
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v6")
    assert "<svg" not in outside  # drawn by Vega in the browser, not by hand
    assert "vegaEmbed" in report.html  # the libraries are inlined
    # specs are not validated while the report is written (it ends every run): here each
    # one is, against the Vega-Lite schema
    assert check_specs(report.html) == len(specs)


def test_the_spec_check_names_an_invalid_chart():
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "data": {"values": [{"x": 1, "y": 2}]},
        "mark": {"type": "line"},
        "encoding": {"x": {"field": "x", "type": "quantitative"}},
    }
    assert check_specs(figure("fine", spec, "a valid chart")) == 1
    planted = {**spec, "mark": {"type": "lnie"}}
    with pytest.raises(ValueError, match="chart 'planted' is not a valid Vega-Lite spec"):
        check_specs(figure("fine", spec, "") + figure("planted", planted, ""))


def test_every_number_in_the_report_names_its_mart():
    report = build_report(two_systems(), generated_at="now")
    spans = [a for t, a in html_tags(report.html) if t == "span" and "num" in a.get("class", "")]
    traced = [a for a in spans if "data-mart" in a]
    assert len(traced) > 50
    assert all(a["data-mart"].startswith("marts.") and "data-value" in a for a in traced)
    assert all(json.loads(a["data-where"])["run_id"] == RUN for a in traced)
    # the rating tables read marts.ratings: 'good' has the lowest SMAPE under P1
    smape_p1 = [
        a
        for a in traced
        if a["data-mart"] == "marts.ratings"
        and json.loads(a["data-where"]).get("metric") == "smape"
        and json.loads(a["data-where"]).get("perturbation_id") == "P1"
        and a["data-column"] == "raw_score"
    ]
    assert [json.loads(a["data-where"])["system_id"] for a in smape_p1] == ["good", "bad"]
    assert [float(a["data-value"]) for a in smape_p1] == [2.0, 4.0]


def test_study_lists_unavailable_systems_and_perturbations_with_why():
    html = study_section(two_systems())
    plain = re.sub(r"<[^>]+>", "", html)
    assert "ghost_a (Ghost A)" in plain and "Needs ghost weights." in plain
    assert "Needs a ghost API." in plain
    assert "acts on image inputs, and no rated system takes images" in plain
    rated_table = plain.split("Systems rated")[1].split("Systems not rated in this run")[0]
    assert "good" in rated_table and "ghost" not in rated_table


def test_study_lists_seed_systems_left_out_of_the_study():
    systems = two_systems().systems
    extra = dict(system_id="spare", display_name="Spare", implementation="tsrate.systems.x",
                 base_model=None, modality="numeric", description="Needs the spare extra.")  # fmt: skip
    data = two_systems(systems=pd.concat([systems, pd.DataFrame([extra])], ignore_index=True))
    plain = re.sub(r"<[^>]+>", "", study_section(data))
    assert "spare (Spare)not in this study (var systems;" in plain
    assert "Needs the spare extra." in plain


def test_groups_with_one_side_and_no_pairs_are_explained_not_drawn():
    report = build_report(two_systems(), generated_at="now")
    plain = re.sub(r"<[^>]+>", "", report.html)
    assert "only one group has rated systems" in plain
    assert not [n for n in report.charts if n.startswith("groups-")]
    assert "No pair is rated in this run" in plain and "ghost (ghost_a, ghost_b)" in plain
    assert "No rated system in this scope" in plain  # without_baselines has no rows


def test_every_sql_mart_has_an_enforced_contract_and_a_documented_grain():
    """BI users rely on the marts' types and descriptions: check the YAML of each.

    dbt enforces contracts on SQL models only, so the Python marts are left out here.
    """
    import yaml

    from tsrate.config import project_dir

    marts = project_dir() / "models" / "marts"
    for sql in sorted(marts.glob("*.sql")):
        spec = yaml.safe_load(sql.with_suffix(".yml").read_text())
        model = next(m for m in spec["models"] if m["name"] == sql.stem)
        assert model["config"]["contract"]["enforced"] is True, sql.stem
        assert "one row per" in " ".join(model["description"].split()).lower(), sql.stem
        for column in model["columns"]:
            assert column.get("data_type") and column.get("description"), (sql.stem, column)


def test_loading_a_missing_or_foreign_snapshot_names_the_problem(tmp_path):
    import duckdb

    from tsrate import TsrateError
    from tsrate.robustness.report.render import load_report_data, write_report

    missing = tmp_path / "published" / "tsrate.duckdb"
    with pytest.raises(TsrateError, match="no published snapshot at .*tsrate.duckdb"):
        write_report(missing, tmp_path / "report.html")
    foreign = tmp_path / "other.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("create schema marts; create table marts.ratings (run_id varchar)")
    con.close()
    with pytest.raises(TsrateError, match="not a complete tsrate snapshot.*marts.system_summary"):
        load_report_data(foreign)
    assert not (tmp_path / "report.html").exists()
