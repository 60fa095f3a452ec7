"""The core report's smaller text builders (tsrate.robustness.report: paper, probabilistic,
relative, render, numbers) against values worked out by hand from the rows each test
builds: the paper's study as the preset documents it, the comparison table's cells as the
mart row holds them, and every printed number by the documented precision rule.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_report_text.json, with the sections' tests in
tests/unit/test_sweep9_report_text_verdict.py, _study.py and _reading.py): a changed default, comparison or and/or here changes
a checked string.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import duckdb
import pandas as pd

from tsrate.robustness.presets import PRESETS
from tsrate.robustness.report.data import REQUIRED_MARTS, Report, ReportData, load_report_data
from tsrate.robustness.report.numbers import (
    first_row,
    flag_html,
    float_value,
    format_number,
    format_share,
    is_shaky,
    num,
    perturbation_order,
    system_order,
    text_html,
)
from tsrate.robustness.report.paper import (
    paper_comparison_section,
    study_differences,
)
from tsrate.robustness.report.probabilistic import (
    leaderboard_section,
    leakage_cell,
    probabilistic_section,
    provenance_section,
)
from tsrate.robustness.report.relative import leave_one_out_section, uncertainty_section
from tsrate.robustness.report.render import (
    build_report,
    render_report,
    write_rendered,
    write_report,
)

RUN = "r9"
PAPER = PRESETS["paper"]
#: the paper's eleven systems by tsrate id (Section 5.1.1)
ELEVEN = [
    "arima", "random", "biased", "chronos", "moment", "gemini_numeric", "gemini_numeric_image",
    "phi3_numeric", "phi3_numeric_image", "vit_num_spec_precovid", "vit_num_spec_covid",
]  # fmt: skip
PAPER_STUDY = {
    "tickers": list(PAPER["study_tickers"]),
    "start": PAPER["study_start"],
    "end": PAPER["study_end"],
    "context_length": PAPER["context_length"],
    "horizon": PAPER["horizon"],
    "perturbations": list(PAPER["perturbations"]),
    "systems": list(ELEVEN),
}


def plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def bare(html: str) -> str:
    """The text with the tags removed (not replaced by spaces)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def data_of(study: dict | None = None, **overrides) -> ReportData:
    empty = pd.DataFrame()
    values = dict(
        run_id=RUN, published_at="2026-01-01 00:00:00", study=study or dict(PAPER_STUDY),
        ratings=empty, system_summary=empty, perturbation_summary=empty,
        confounder_comparison=empty, group_comparisons=empty, modality_pairs=empty,
        systems=empty, perturbations=empty, companies=empty, windows=empty,
    )  # fmt: skip
    values.update(overrides)
    return ReportData(**values)


# ----------------------------------------------------------------------------- paper


def test_a_study_that_only_adds_a_system_says_so():
    """All eleven of the paper's systems plus tsrate's naive: nothing lacking, one added."""
    study = {**PAPER_STUDY, "systems": [*ELEVEN, "naive"]}
    assert study_differences(study) == [
        "Systems: of the paper's eleven, this run lacks none; it adds tsrate's own naive."
    ]
    lacking = {**PAPER_STUDY, "systems": ELEVEN[:-1]}
    assert study_differences(lacking) == [
        "Systems: of the paper's eleven, this run lacks vit_num_spec_covid."
    ]


def comparison_row(**overrides) -> dict:
    row = dict(
        run_id=RUN, paper_table="5", paper_label="WRSI", metric="wrs_industry",
        perturbation_id="P1", system_id="arima", paper_symbol="S_a", paper_value=7.0,
        paper_printed="7.0", paper_rating=2, tsrate_value=7.0, difference=0.0,
        tsrate_rating=3, same_study=True, paper_note="a note",
    )  # fmt: skip
    row.update(overrides)
    return row


def comparison_cells(html: str) -> list[list[str]]:
    body = html[html.index("<tbody>") : html.index("</tbody>")]
    return [
        [plain(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def test_the_comparison_prints_a_whole_value_with_decimals_and_a_rating_without():
    """tsrate_value 7.0 is a measurement: '7.00'; the ratings are levels: '2', '3'; a
    difference of 0: '0.00'."""
    html = paper_comparison_section(data_of(paper_comparison=pd.DataFrame([comparison_row()])))
    assert comparison_cells(html) == [
        ["arima (S_a)", "WRS industry (WRSI)", "P1", "7.0", "7.00", "0.00", "2", "3", "a note"]
    ]


def test_the_comparison_shows_a_missing_value_or_note_as_blank():
    """A null cell (None in an object column, as DuckDB returns it) is a dash; a NaN note is
    no note (never the text 'nan')."""
    frame = pd.DataFrame(
        [
            comparison_row(
                tsrate_value=None, difference=None, tsrate_rating=None, paper_note=float("nan")
            )
        ]
    ).astype({"tsrate_value": object, "difference": object, "tsrate_rating": object})
    html = paper_comparison_section(data_of(paper_comparison=frame))
    assert comparison_cells(html) == [
        ["arima (S_a)", "WRS industry (WRSI)", "P1", "7.0", "–", "–", "2", "–", ""]
    ]
    none_note = pd.DataFrame([comparison_row(paper_note=None)]).astype({"paper_note": object})
    html = paper_comparison_section(data_of(paper_comparison=none_note))
    assert comparison_cells(html)[0][-1] == ""


def test_the_comparison_is_the_same_question_only_when_every_row_is_the_same_study():
    same = pd.DataFrame([comparison_row(), comparison_row(perturbation_id="P2")])
    assert "so the numbers answer the same question" in plain(
        paper_comparison_section(data_of(paper_comparison=same))
    )
    mixed = same.assign(same_study=[True, False])
    text = plain(paper_comparison_section(data_of(paper_comparison=mixed)))
    assert "This run's study is not the paper's" in text
    assert "answer the same question" not in text


def test_the_comparison_puts_table_2_rows_in_the_averages_table_and_the_rest_behind_toggles():
    frame = pd.DataFrame(
        [
            comparison_row(paper_table="2", perturbation_id=None, paper_printed="5.5"),
            comparison_row(paper_table="5", paper_printed="6.9"),
            comparison_row(paper_table="6", metric="smape", paper_printed="1.2"),
        ]
    )
    html = paper_comparison_section(data_of(paper_comparison=frame))
    averages = html[html.index("Averages per system") : html.index("<details>")]
    assert [row[3] for row in comparison_cells(averages)] == ["5.5"]
    robustness = html[html.index("Per perturbation, robustness, Table 5 (1 values)") :]
    assert [row[3] for row in comparison_cells(robustness)] == ["6.9"]
    accuracy = html[html.index("Per perturbation, accuracy, Table 6 (1 values)") :]
    assert [row[3] for row in comparison_cells(accuracy)] == ["1.2"]


# ----------------------------------------------------------------------------- probabilistic


def cells_of(html: str, after: str = "<tbody>") -> list[list[str]]:
    part = html[html.index(after) :]
    body = part[part.index("<tbody>") : part.index("</tbody>")]
    return [
        [bare(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def test_the_probabilistic_table_puts_each_metric_in_its_column_and_keeps_the_first_reason():
    """a/P1 has every metric (WQL 0.12, CRPS 3.5, MSIS 12, coverage 0.8 in the mart's order
    shuffled); b/P1 has only CRPS and a null WQL with a reason."""
    scores = pd.DataFrame(
        [
            dict(system_id="a", perturbation_id="P1", metric=m, mean=v, reason=None)
            for m, v in (("coverage_80", 0.8), ("msis", 12.0), ("wql", 0.12), ("crps", 3.5))
        ]
        + [
            dict(
                system_id="b",
                perturbation_id="P1",
                metric="wql",
                mean=float("nan"),
                reason="no quantiles",
            ),
            dict(
                system_id="b", perturbation_id="P1", metric="crps", mean=2.0, reason="later reason"
            ),
        ]
    )
    html = probabilistic_section(scores, num)
    assert cells_of(html) == [
        ["a", "P1", "0.12", "3.50", "12.00", "0.8", ""],
        ["b", "P1", "–", "2.00", "–", "–", "no quantiles"],
    ]
    assert "No probabilistic scores" in probabilistic_section(pd.DataFrame(), num)


def board_rows(metric: str, rows: list[tuple], scope: str = "all") -> list[dict]:
    return [
        dict(scope=scope, metric=metric, system_id=s, skill_score=k, skill_score_lower=lo,
             skill_score_upper=hi, win_rate=w, average_rank=r, n_tasks=n, num_failures=f,
             reason=why)
        for s, k, lo, hi, w, r, n, f, why in rows
    ]  # fmt: skip


def test_the_leaderboard_prints_counts_as_whole_numbers_and_reads_the_all_scope_only():
    board = pd.DataFrame(
        board_rows("smape", [("a", 0.25, 0.1, 0.4, 0.75, 1.5, 6.0, 0.0, None),
                             ("b", 0.5, 0.3, 0.6, 0.5, 1.0, 6.0, 2.0, "two failed")])
        + board_rows("smape", [("c", 0.9, 0.8, 0.95, 1.0, 1.0, 6.0, 0.0, None)], scope="P1")
    )  # fmt: skip
    html = leaderboard_section(board, num)
    assert cells_of(html, "<h3>SMAPE</h3>") == [
        ["b", "0.5", "0.3 – 0.6", "0.5", "1.00", "6", "2", "two failed"],
        ["a", "0.25", "0.1 – 0.4", "0.75", "1.50", "6", "0", ""],
    ]
    assert "<h3>MASE</h3>" not in html
    other = pd.DataFrame(
        board_rows("mase", [("c", 0.9, 0.8, 0.95, 1.0, 1.0, 6.0, 0.0, None)], scope="P1")
    )
    assert "No leaderboard in this snapshot" in leaderboard_section(other, num)


def leakage_frame(**row) -> pd.DataFrame:
    base = dict(system_id="a", n_windows=10, n_flagged=0, n_known=10, leakage_basis="exact",
                leakage_reason=None)  # fmt: skip
    return pd.DataFrame([{**base, **row}])


def test_the_leakage_cell_counts_flagged_windows_only_when_every_window_is_known():
    assert leakage_cell(leakage_frame(), "a") == "0 of 10 windows (exact)"
    assert leakage_cell(leakage_frame(n_flagged=3), "a") == "<b>3 of 10 windows (exact)</b>"
    assert (
        leakage_cell(leakage_frame(n_known=9, leakage_reason="no cutoff"), "a")
        == "unknown: no cutoff"
    )
    assert leakage_cell(leakage_frame(), "b") == "–"
    assert leakage_cell(None, "a") == "–" and leakage_cell(pd.DataFrame(), "a") == "–"


def provenance_frame(**row) -> pd.DataFrame:
    base = dict(
        system_id="a", tsrate_version="1.2", git_revision="0123456789abcdef0123", git_reason=None,
        dbt_version="1.9", duckdb_version="1.2", price_rows=1500,
        price_rows_fingerprint="fedcba9876543210ffff", partitions="p=1",
        partitions_fingerprint="aaaabbbbccccddddeeee", training_data="web text",
        training_cutoff=pd.Timestamp("2024-08-31"), training_data_reason=None,
    )  # fmt: skip
    return pd.DataFrame([{**base, **row}])


def test_the_provenance_names_the_revision_or_why_there_is_none():
    text = bare(provenance_section(provenance_frame()))
    assert (
        "tsrate 1.2 at 0123456789abcdef0123; dbt 1.9, DuckDB 1.2; 1500 price rows, fingerprint fedcba9876543210."
        in text
    )
    text = bare(
        provenance_section(provenance_frame(git_revision=None, git_reason="not a checkout"))
    )
    assert "tsrate 1.2 at no git revision (not a checkout); dbt" in text
    rows = cells_of(provenance_section(provenance_frame(), leakage_frame(n_flagged=2)))
    assert rows == [
        [
            "a",
            "p=1",
            "aaaabbbbccccdddd",
            "web text; data up to 2024-08-31",
            "2 of 10 windows (exact)",
        ]
    ]
    unknown = provenance_frame(
        training_data=None, training_cutoff=pd.NaT, training_data_reason="closed"
    )
    assert cells_of(provenance_section(unknown))[0][3] == "unknown: closed"
    # a cutoff without a statement: still unknown, the cutoff alone says nothing
    dated = provenance_frame(training_data=None, training_data_reason="closed")
    assert cells_of(provenance_section(dated))[0][3] == "unknown: closed"


# ----------------------------------------------------------------------------- relative


def effect_row(**row) -> dict:
    base = dict(
        system_id="a", perturbation_id="P1", outcome="wql", mean_clean=0.1, mean_perturbed=0.15,
        mean_change=0.05, change_ci_low=0.01, change_ci_high=0.09, beyond_noise=True,
        reason=None, coverage_80_change=-0.1, ape_industry=0.04, ape_industry_spread=0.01,
    )  # fmt: skip
    return {**base, **row}


def test_the_uncertainty_verdict_reads_the_direction_of_the_change():
    effects = pd.DataFrame(
        [
            effect_row(),
            effect_row(system_id="b", mean_change=-0.05, change_ci_low=-0.09, change_ci_high=-0.01),
            effect_row(system_id="c", beyond_noise=False),
            effect_row(system_id="d", beyond_noise=None, reason="no quantiles"),
            effect_row(system_id="e", beyond_noise=None, reason=None),
            effect_row(outcome="coverage_error_80", mean_change=0.2),
        ]
    ).astype({"beyond_noise": object})
    html = uncertainty_section(effects, num)
    wql = cells_of(html, 'data-outcome="wql"')
    assert [row[6] for row in wql] == [
        "hurts (beyond noise)", "helps (beyond noise)", "within noise", "no quantiles", "not tested",
    ]  # fmt: skip
    assert wql[0][2:6] == ["0.1", "0.15", "0.05", "[0.01, 0.09]"]
    assert wql[0][7:] == ["-0.1", "0.04 ± 0.01"]
    coverage = cells_of(html, 'data-outcome="coverage_error_80"')
    assert [row[:2] + [row[4], row[6]] for row in coverage] == [
        ["a", "P1", "0.2", "hurts (beyond noise)"]
    ]


def test_a_change_of_exactly_zero_beyond_noise_is_not_called_hurting():
    """The mart's interval is centred on the change, so it never excludes 0 around a change
    of exactly 0; the section, handed such a row all the same, does not call it hurting: only
    a rise (change > 0) hurts."""
    effects = pd.DataFrame([effect_row(mean_change=0.0)])
    verdict = cells_of(uncertainty_section(effects, num))[0][6]
    assert "beyond noise" in verdict and "hurts" not in verdict


def loo_row(**row) -> dict:
    base = dict(
        metric="smape", perturbation_id="P1", system_id="a", rating=2,
        rating_min_one_removed=1, rating_max_one_removed=2, changed_by_removing="b",
        rating_min_one_added=2, rating_max_one_added=3, changes_if_one_removed=True,
        changes_if_one_added=True,
    )  # fmt: skip
    return {**base, **row}


def test_the_leave_one_out_counts_and_lists_only_the_ratings_a_removal_changes():
    checks = pd.DataFrame(
        [
            loo_row(),
            loo_row(system_id="b", changes_if_one_removed=False, changes_if_one_added=False),
            loo_row(system_id="c", changes_if_one_removed=False, changes_if_one_added=True),
            loo_row(
                metric="mase", system_id="d", changed_by_removing=None, rating_min_one_added=None
            ),
        ]
    )
    html = leave_one_out_section(checks, num)
    assert (
        "Of 4 ratings, 2 change when one other system is removed and 3 could change when one new system joins."
        in plain(html)
    )
    assert cells_of(html) == [
        ["mase", "P1", "d", "2", "1–2", "", "––3"],
        ["smape", "P1", "a", "2", "1–2", "b", "2–3"],
    ]
    none = pd.DataFrame([loo_row(changes_if_one_removed=False)])
    assert "<table" not in leave_one_out_section(none, num)


def traced_numbers(html: str) -> list[tuple[str, str, dict, float]]:
    """(mart, column, where, value) of every traceable number in ``html``."""
    spans = re.findall(
        r'data-mart="([^"]*)" data-column="([^"]*)" data-where="([^"]*)" data-value="([^"]*)"',
        html,
    )
    return [
        (mart, column, json.loads(where.replace("&quot;", '"')), float(value))
        for mart, column, where, value in spans
    ]


def test_every_relative_number_traces_to_its_own_mart_row():
    """Each number of the uncertainty and leave-one-out tables names the mart and the one row
    it was read from: the row its where-clause selects holds that value (a number traced to
    another perturbation's, outcome's or system's row would select another row, or none)."""
    effects = pd.DataFrame(
        [
            effect_row(),
            effect_row(perturbation_id="P0", mean_change=0.5, change_ci_low=0.4),
            effect_row(system_id="b", mean_clean=0.3, ape_industry=0.07),
            effect_row(outcome="coverage_error_80", mean_change=0.2, mean_perturbed=0.25),
        ]
    )
    checks = pd.DataFrame(
        [loo_row(), loo_row(perturbation_id="P2", rating=3), loo_row(system_id="b", rating=1)]
    )
    for mart, frame, html in [
        ("marts.uncertainty_effects", effects, uncertainty_section(effects, num)),
        ("marts.rating_leave_one_out", checks, leave_one_out_section(checks, num)),
    ]:
        traced = traced_numbers(html)
        assert len(traced) >= 3 * len(frame), mart
        for name, column, where, value in traced:
            assert name == mart
            rows = frame
            for key, wanted in where.items():
                rows = rows[rows[key] == wanted]
            assert len(rows) == 1, (column, where)
            assert float(rows.iloc[0][column]) == value, (column, where)


# ----------------------------------------------------------------------------- render


def empty_snapshot(path: Path) -> Path:
    """A published snapshot with the required marts, empty, and one published run r1."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))
    con.execute("create schema marts")
    for mart in REQUIRED_MARTS:
        con.execute(
            f"create table marts.{mart} (run_id varchar, system_id varchar, metric varchar, "
            "perturbation_id varchar)"
        )
    con.execute(
        "create table published_runs as select 'r1' as run_id, "
        "timestamp '2026-01-02 03:04:05' as published_at, '{}' as study"
    )
    con.close()
    return path


def test_the_page_names_the_snapshot_it_was_rendered_from_and_when(tmp_path):
    snapshot = empty_snapshot(tmp_path / "published" / "tsrate.duckdb")
    run, report = render_report(snapshot)
    assert run == "r1" and "snapshot <code>tsrate.duckdb</code>" in report.html
    _, renamed = render_report(snapshot, name="next.duckdb")
    assert "snapshot <code>next.duckdb</code>" in renamed.html
    data = dataclasses.replace(load_report_data(snapshot), snapshot_name="s.duckdb")
    page = build_report(data, generated_at="2030-05-06 07:08 UTC").html
    assert "generated 2030-05-06 07:08 UTC from the published snapshot" in page


def test_the_report_goes_where_it_is_asked_and_beside_the_snapshot_by_default(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("TSRATE_REPORT", raising=False)
    snapshot = empty_snapshot(tmp_path / "published" / "tsrate.duckdb")
    asked = tmp_path / "elsewhere" / "deep" / "mine.html"
    result = write_report(snapshot, asked)
    assert result.path == asked and asked.exists() and (asked.parent / "mine-charts").is_dir()
    assert not (snapshot.parent / "report.html").exists()
    result = write_report(snapshot)
    assert result.path == snapshot.parent / "report.html" and result.path.exists()


def test_rewriting_a_report_keeps_its_charts_and_removes_stale_ones(tmp_path):
    spec = {"mark": "line", "data": {"values": [{"x": 1}]}}
    output = tmp_path / "new" / "dir" / "page.html"
    first = write_rendered("r1", Report("<p>one</p>", {"a": spec, "b": spec}), output)
    charts = tmp_path / "new" / "dir" / "page-charts"
    assert first.charts_dir == charts and first.n_charts == 2
    (charts / "old.svg").write_text("<svg/>")
    (charts / "notes.txt").write_text("kept: not a chart")
    second = write_rendered("r1", Report("<p>two</p>", {"b": spec}), output)
    assert sorted(p.name for p in charts.iterdir()) == ["b.vl.json", "notes.txt"]
    assert json.loads((charts / "b.vl.json").read_text()) == spec
    assert output.read_text() == "<p>two</p>" and second.n_charts == 1 and second.run_id == "r1"


# ----------------------------------------------------------------------------- numbers


def test_format_number_at_each_threshold():
    """>= 1000: no decimals with a thousands comma; >= 1 (or exactly 0): two decimals; below
    1: three significant digits; negative values by their size."""
    cases = {
        1000.0: "1,000", 999.5: "999.50", -1000.0: "-1,000", 12345.6: "12,346",
        1.0: "1.00", -1.0: "-1.00", 1.5: "1.50", 0.999: "0.999", 0.5: "0.5", -0.25: "-0.25",
        0.0: "0.00", 0.012345: "0.0123",
    }  # fmt: skip
    assert {v: format_number(v) for v in cases} == cases
    assert format_number(3.0) == "3.00"  # a measurement, not a count
    assert format_number(3.0, integer=True) == "3"
    assert format_number(3.5, integer=True) == "3.50"  # not a whole number: as a measurement
    assert format_number(None) == "–" and format_number(float("nan")) == "–"


def test_num_prints_a_share_as_percent_only_when_asked_and_a_count_whole():
    where = {"run_id": RUN}
    assert bare(num(0.75, "m", "c", where)) == "0.75"
    shared = num(0.75, "m", "c", where, percent=True)
    assert bare(shared) == "75 %" and 'data-format="percent"' in shared
    assert "data-format" not in num(0.75, "m", "c", where)
    assert bare(num(4.0, "m", "c", where)) == "4.00"
    assert bare(num(4.0, "m", "c", where, integer=True)) == "4"
    assert num(None, "m", "c", where) == num(float("nan"), "m", "c", where)
    assert 'data-agg="avg"' in num(1.0, "m", "c", where, agg="avg")
    assert "data-agg" not in num(1.0, "m", "c", where)


def test_a_share_is_rounded_down_and_shaky_only_below_sixty_percent():
    assert format_share(0.5899999999850) == "58 %"  # just under 59 %: down, not to 59
    assert format_share(0.29) == "29 %"  # 0.29 * 100 is 28.999999999999996 in floating point
    assert not is_shaky(None) and not is_shaky(float("nan")) and not is_shaky(0.6)
    assert is_shaky(0.5999999) and is_shaky(0.0)


def test_first_row_and_float_value_by_a_mask_for_float_keys():
    frame = pd.DataFrame({"step": [2.5, 1.5, 1.5], "name": ["a", "b", "c"], "v": [1.0, None, 3.0]})
    assert first_row(frame, {"step": 1.5}) == 1
    assert first_row(frame, {"step": 9.5}) is None
    assert first_row(frame, {"step": 1.5, "name": "c"}) == 2
    assert first_row(frame, {"name": "c"}) == 2
    assert float_value(frame, "v", step=1.5, name="c") == 3.0
    assert float_value(frame, "v", name="b") is None and float_value(frame, "v", name="z") is None
    assert float_value(pd.DataFrame(), "v", name="a") is None


def test_first_row_never_matches_a_null_as_a_mask_would_not():
    """``frame[k] == None`` is false on every row, a null cell included: a filter with a
    None value finds nothing, even where the frame has a null in that column."""
    # an object column that keeps None (pandas turns None into NaN in a mixed list)
    frame = pd.DataFrame({"name": ["a", "b"], "tag": pd.Series([None, "x"], dtype=object)})
    assert frame["tag"].tolist() == [None, "x"]
    assert first_row(frame, {"name": "a", "tag": None}) is None
    assert first_row(frame, {"tag": None}) is None
    assert first_row(frame, {"name": "b", "tag": "x"}) == 1


def test_text_cells_are_none_when_null_or_blank():
    assert text_html(None) is None and text_html(float("nan")) is None and text_html("  ") is None
    assert text_html(" why ") == "why" and text_html(3) == "3"


def test_system_order_is_the_seed_order_then_the_unknown_alphabetically():
    empty = pd.DataFrame()
    ratings = pd.DataFrame(
        {"system_id": ["z", "b", "a", "y", "b"], "perturbation_id": ["P2", "P0", "P1", "P0", "P0"]}
    )
    seeded = pd.DataFrame({"system_id": ["b", "q", "z"]})
    data = data_of(ratings=ratings, systems=seeded)
    assert system_order(data) == ["b", "z", "a", "y"]
    assert system_order(data_of(ratings=ratings, systems=empty)) == ["a", "b", "y", "z"]
    assert system_order(data_of(ratings=empty, systems=seeded)) == []
    assert perturbation_order(data) == ["P0", "P1", "P2"] and perturbation_order(data_of()) == []


def test_the_hover_names_the_filter_keys_in_alphabetical_order():
    """The page's tooltip prints data-where as written: its keys are sorted, so the same row
    reads the same whichever section built the filter, and flags likewise."""
    where = {"system_id": "a", "metric": "smape", "run_id": RUN}
    expected = '{"metric": "smape", "run_id": "r9", "system_id": "a"}'.replace('"', "&quot;")
    assert f'data-where="{expected}"' in num(1.0, "m", "c", where)
    assert f'data-where="{expected}"' in flag_html("x", "why", "m", "reason", where)
