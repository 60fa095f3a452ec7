"""The rating report: one self-contained HTML file read from the published snapshot.

``tsrate report`` (and the last step of ``tsrate run``) reads the read-only snapshot
(``warehouse/published/tsrate.duckdb``), never the live warehouse, and writes
``report.html`` beside it plus every chart's Vega-Lite spec in ``report-charts/``. The page
works offline: no CDN, no fonts or images to fetch; charts are Vega-Lite specs rendered by
the Vega libraries inlined in the page (:mod:`tsrate.html.page`).

The page, top to bottom: what the study is and how it differs from the paper's
(:mod:`.paper`), the verdict (who is best and worst, by how much, how firm), a compact
summary table (one row per system), then the study, the averages in the shape of Table 2,
the rating tables (behind a toggle each), the charts, the group comparisons and the paper's
printed numbers beside the run's (:mod:`.paper`).

Modules: :mod:`.data` loads (:func:`load_report_data`), :mod:`.numbers` prints traceable
numbers, :mod:`.sections` (verdict, study, summary, Table 2), :mod:`.ratings` (rating
tables), :mod:`.radars`, :mod:`.comparisons` and :mod:`.forecasts` (charts, on
:mod:`.figures`) render, pure over DataFrames; this module assembles the page and writes
it. Traceability: every number printed is a ``<span class="num">`` with
``data-mart``/``data-column``/``data-where``/``data-value``, and every plotted number a chart
row with ``mart``/``column``/``where``/``value``; the integration test re-reads each one.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

from tsrate.html.page import page
from tsrate.html.together import write_page_and_folder
from tsrate.robustness.report.comparisons import (  # noqa: F401
    confounder_section,
    group_section,
    modality_pairs_block,
)
from tsrate.robustness.report.coverage import fewer_marks
from tsrate.robustness.report.data import (  # noqa: F401  (re-exported: the report's API)
    ACCURACY_METRICS,
    METRIC_LABELS,
    OUTCOME_LABELS,
    PAPER_OUTCOME,
    REPORT_NAME,
    ROBUSTNESS_METRICS,
    SHAKY_SHARE,
    TRACE_WINDOWS_PER_SYSTEM,
    Report,
    ReportData,
    ReportResult,
    choose_trace_windows,
    context_tail_length,
    default_report_path,
    load_report_data,
)
from tsrate.robustness.report.forecasts import (  # noqa: F401
    forecast_chart,
    forecasts_section,
    trace_y_range,
)
from tsrate.robustness.report.numbers import (  # noqa: F401
    FIRST_ROWS,
    first_row,
    float_value,
    format_number,
    format_share,
    is_shaky,
    num,
    provenance,
)
from tsrate.robustness.report.paper import (
    PAPER_TITLE,
    paper_comparison_section,
    paper_study_section,
)
from tsrate.robustness.report.probabilistic import (
    leaderboard_section,
    probabilistic_section,
    provenance_section,
)
from tsrate.robustness.report.radars import radar_section
from tsrate.robustness.report.ratings import (  # noqa: F401
    rating_cell,
    rating_tables_section,
    separation_flag,
)
from tsrate.robustness.report.reading import reading_paragraph  # noqa: F401
from tsrate.robustness.report.relative import leave_one_out_section, uncertainty_section
from tsrate.robustness.report.sections import (  # noqa: F401
    overview_section,
    study_section,
    summary_section,
    verdict_section,
)

#: CSS of the rating tables and flags (the shared rules are in tsrate.html.page)
STYLE = """
.rating{padding:0 3px;border-radius:3px}.rating.good{background:#d8f0d8}
.rating.mid{background:#fff2c6}.rating.poor{background:#f6d2d2}
.share.shaky{background:#ffe1b3;font-weight:bold;padding:0 3px;border-radius:3px}
.ci{font-size:11px;color:#555}.share{font-size:11px}table.ratings td{white-space:nowrap}
.flag{display:inline-block;white-space:normal;max-width:230px;font-size:11px;font-style:normal;padding:0 3px;border-radius:3px;vertical-align:top}
.flag.no-separation{background:#e6dcf5}.flag.not-separable{background:#dcebf7}
.flag.rating-reason{color:#555;background:#f0f0f0}.rating.none{background:#e4e4e4}
.direction{font-size:11px;color:#555;font-weight:normal}
.reading{font-size:15px;line-height:1.5}
"""

#: CSS of the mark after a system rated on fewer perturbations (only on a page that has one)
PARTIAL_STYLE = """.partial{color:#777;font-weight:normal;font-size:11px;white-space:nowrap}
"""

NAV = (
    ("verdict", "Verdict"),
    ("paper-study", "This study"),
    ("overview", "Summary"),
    ("study", "Study"),
    ("summary", "Averages"),
    ("ratings", "Ratings"),
    ("leave-one-out", "Leave one out"),
    ("radars", "Rank charts"),
    ("forecasts", "Forecasts"),
    ("confounders", "Confounders"),
    ("groups", "Groups"),
    ("paper", "Paper's numbers"),
    ("probabilistic", "Probabilistic"),
    ("uncertainty", "Uncertainty"),
    ("leaderboard", "Leaderboard"),
    ("provenance", "Provenance"),
)


def build_report(data: ReportData, generated_at: str | None = None) -> Report:
    """The whole HTML page and its charts (name -> Vega-Lite spec), from ``data`` alone."""
    generated_at = generated_at or dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    FIRST_ROWS.clear()
    charts: dict[str, dict] = {}
    sections = [
        verdict_section(data),  # the verdict first; then what this study is beside the paper's
        paper_study_section(data),
        overview_section(data),
        reading_paragraph(data),  # with its warnings: fallbacks, copies, other prices
        study_section(data),
        summary_section(data),
        rating_tables_section(data),
        leave_one_out_section(data.leave_one_out, num),
        radar_section(data, charts),
        forecasts_section(data, charts),
        confounder_section(data, charts),
        group_section(data, charts),
        paper_comparison_section(data),
        probabilistic_section(data.probabilistic_scores, num),
        uncertainty_section(data.uncertainty_effects, num),
        leaderboard_section(data.leaderboard, num),
        provenance_section(data.run_provenance, data.leakage),
    ]
    subtitle = (
        f"Run <code>{data.run_id}</code> · generated {generated_at} from the published "
        f"snapshot <code>{data.snapshot_name}</code>. Method: <i>{PAPER_TITLE}</i> (the "
        'robustness paper; its conventions here: <a href="#paper-study">This study</a>). '
        "Query the same marts with SQL (docs/bi.md, Querying)."
    )
    html = page(
        title=f"tsrate report · {data.run_id}",
        heading="Robustness and accuracy ratings of time-series forecasting systems",
        sections=sections,
        nav=NAV,
        subtitle=subtitle,
        style=STYLE + (PARTIAL_STYLE if fewer_marks(data) else ""),
    )
    return Report(html, charts)


def render_report(snapshot: Path, name: str | None = None) -> tuple[str, Report]:
    """Read ``snapshot`` and build the report in memory: (run id, report). ``name``: the
    snapshot's file name as the page shows it (default: ``snapshot``'s own; ``tsrate run``
    renders from the new snapshot before it is renamed into place)."""
    data = load_report_data(snapshot)
    if name is not None:
        data = dataclasses.replace(data, snapshot_name=name)
    return data.run_id, build_report(data)


def write_rendered(run_id: str, report: Report, output: Path) -> ReportResult:
    """Write a built report and its chart specs together, atomically
    (:func:`tsrate.html.together.write_page_and_folder`): the HTML to ``output``, the specs to
    ``<output stem>-charts/<name>.vl.json`` (open one in any Vega-Lite editor). A reader, and
    a failure or a stop at any step, sees the old page with its old charts or the new page
    with its new charts, never a mix; temporaries are removed (those of a writer killed
    outright, by the next write). Specs (and ``.svg`` renders) the new page does not draw
    leave the folder; other files in it are kept."""
    output = Path(output)
    charts_dir = output.with_name(f"{output.stem}-charts")
    specs = {
        f"{name}.vl.json": json.dumps(spec, indent=1, default=str)
        for name, spec in report.charts.items()
    }
    write_page_and_folder(output, report.html, charts_dir, specs, _chart_file)
    return ReportResult(output, charts_dir, run_id, len(report.charts))


def _chart_file(path: Path) -> bool:
    """Whether ``path`` in the charts folder is the report's own (a spec or its render)."""
    return path.name.endswith((".vl.json", ".svg"))


def write_report(snapshot: Path, output: Path | None = None) -> ReportResult:
    """Build the report from ``snapshot`` and write it with its chart specs, together
    (:func:`write_rendered`), to ``output`` (default: ``report.html`` beside the snapshot)."""
    output = Path(output or default_report_path(snapshot))
    return write_rendered(*render_report(snapshot), output)
