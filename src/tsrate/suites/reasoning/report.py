"""The reasoning report: accuracy per task against chance (with and without the series)
and forecast error with and without context, as Vega-Lite bar charts
(:mod:`tsrate.html.charts`) and tables, in one offline HTML file that opens with a verdict.

:func:`render_report` is pure (frames in, HTML out); :func:`write_report` reads the marts
(``rsn_*``) from a DuckDB file read-only and writes the file atomically.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from tsrate.html.charts import PALETTE, Point, Series, bar_chart, chart_name, figure
from tsrate.html.page import details, frame_table
from tsrate.suites.publishing import check_snapshot, html_page, read_marts, write_html
from tsrate.suites.reasoning.tasks import FORECAST_CONTEXTS
from tsrate.suites.verdict import floor_share, not_rated_html, summary_table_html, verdict_html

#: the command that rebuilds the suite's marts in a warehouse (and publishes them)
REBUILD = "tsrate suite reasoning build"

#: per mart, the columns this report reads (beyond these it reads what is there: columns
#: that came later, e.g. crps, ci_low or n_unanswered_without_series, are optional)
REQUIRED = {
    "rsn_task_accuracy": (
        "suite_run_id", "task", "system_id", "n_items", "accuracy", "accuracy_ci_low",
        "accuracy_ci_high", "chance_level", "n_unanswered", "n_unparseable",
        "accuracy_without_series", "n_items_without_series", "n_unparseable_without_series",
    ),
    "rsn_forecast_errors": (
        "suite_run_id", "system_id", "condition", "n_items", "n_unanswered", "n_unparseable",
        "mae", "baseline_mae",
    ),
    "rsn_context_effects": ("suite_run_id", "system_id"),
    "rsn_ratings": (
        "suite_run_id", "metric", "task", "rank", "system_id", "raw_score", "rating",
        "rating_levels", "higher_is_better",
    ),
    "rsn_rating_stability": (),
}  # fmt: skip
#: marts added later (Section 5.3, Figure A.5): an older snapshot may lack them whole, but
#: one that has them needs these columns
LATER_REQUIRED = {
    "rsn_perturbation_effects": (
        "suite_run_id", "condition", "system_id", "accuracy_original", "accuracy_perturbed",
        "chance_level",
    ),
    "rsn_context_combinations": ("suite_run_id", "condition", "system_id", "paper_label", "mae_gain"),
}  # fmt: skip


def _read(path: Path) -> dict[str, pd.DataFrame]:
    check_snapshot(path, REQUIRED, REBUILD)
    queries = {
        "tasks": "select * from marts.rsn_task_accuracy order by task, system_id",
        "forecasts": "select * from marts.rsn_forecast_errors order by system_id, condition",
        "context": "select * from marts.rsn_context_effects order by system_id",
        "ratings": "select * from marts.rsn_ratings order by metric, task, rank, system_id",
        # every column: ci_low / ci_high came later (an older snapshot lacks them)
        "stability": "select * from marts.rsn_rating_stability",
    }
    data = read_marts(path, queries)
    # marts added later (Section 5.3, Figure A.5): an older snapshot may lack them
    later = {
        "perturbation": ("rsn_perturbation_effects", "condition, system_id"),
        "combinations": ("rsn_context_combinations", "system_id, condition"),
    }
    present = set(
        read_marts(
            path, {"t": "select table_name from duckdb_tables() where schema_name = 'marts'"}
        )["t"]["table_name"]
    )
    check_snapshot(path, {t: c for t, c in LATER_REQUIRED.items() if t in present}, REBUILD)
    queries = {
        name: f"select * from marts.{table} order by {order}"
        for name, (table, order) in later.items()
        if table in present
    }
    data.update(read_marts(path, queries) if queries else {})
    return data


def chance_verdict(ci_low: float, ci_high: float, chance: float) -> str:
    """``above chance`` / ``below chance`` when the Wilson 95 % interval of the accuracy
    leaves out the chance level (the interval inverts the score test of ``p = chance``, so
    this is that test at 5 %), else ``not distinguishable from chance``."""
    if pd.notna(ci_low) and ci_low > chance:
        return "above chance"
    if pd.notna(ci_high) and ci_high < chance:
        return "below chance"
    return "not distinguishable from chance"


def chance_section(tasks: pd.DataFrame) -> str:
    """Every system and choice task with the series: the series the interval counts
    (``n_series``: several questions about one series are one sampled unit), accuracy, its
    Wilson 95 % interval (on the series' effective counts), the chance level
    (1 / options), the questions asked (``n_items``) and how many of their replies were
    unusable, and :func:`chance_verdict`. A snapshot older than ``n_series`` shows "n/a"
    there."""
    if tasks.empty:
        return ""
    rows = []
    for row in tasks.sort_values(["task", "system_id"]).itertuples(index=False):
        n_series = getattr(row, "n_series", None)
        series = "n/a" if n_series is None or pd.isna(n_series) else str(int(n_series))
        verdict = chance_verdict(row.accuracy_ci_low, row.accuracy_ci_high, row.chance_level)
        shown = html.escape(verdict)
        if verdict != "not distinguishable from chance":
            shown = f"<b>{shown}</b>"
        rows.append(
            f"<tr><td>{html.escape(str(row.task))}</td><td>{html.escape(str(row.system_id))}"
            f"</td><td>{series}</td><td>{row.accuracy:.2f} [{row.accuracy_ci_low:.2f}, "
            f"{row.accuracy_ci_high:.2f}]</td><td>{row.chance_level:.2f}</td>"
            f"<td>{row.n_items}</td><td>{row.n_unanswered + row.n_unparseable}</td>"
            f"<td>{shown}</td></tr>"
        )
    return (
        "<h2>Against chance</h2><p>Accuracy with the series (an unusable reply is wrong) "
        "with its Wilson 95 % interval against the chance level 1 / options: above or "
        "below chance when the interval leaves it out, else not distinguishable. The "
        "interval counts series, not questions: several questions about one series are "
        "one sampled unit (series = the units it counts; questions = the items asked, "
        "unusable among them).</p>"
        "<table><tr><th>task</th><th>system</th><th>series (units)</th>"
        "<th>accuracy [95 %]</th><th>chance</th><th>questions</th><th>unusable</th>"
        "<th>verdict</th></tr>"
        f"{''.join(rows)}</table>"
    )


def unusable_lines(tasks: pd.DataFrame, forecasts: pd.DataFrame) -> str:
    """Per system: how many of its answers were unusable (unanswered or unparseable), over
    every choice prompt (with and without the series) and every forecast."""
    counts: dict[str, list[int]] = {}
    for row in tasks.itertuples(index=False):
        bad = row.n_unanswered + row.n_unparseable
        total = row.n_items
        if not pd.isna(row.n_items_without_series):
            bad += int(row.n_unparseable_without_series or 0)
            # an older snapshot's mart lacks the unanswered count without the series
            bad += int(getattr(row, "n_unanswered_without_series", 0) or 0)
            total += int(row.n_items_without_series)
        counts.setdefault(row.system_id, [0, 0])
        counts[row.system_id][0] += int(bad)
        counts[row.system_id][1] += int(total)
    for row in forecasts.itertuples(index=False):
        counts.setdefault(row.system_id, [0, 0])
        counts[row.system_id][0] += int(row.n_unanswered + row.n_unparseable)
        counts[row.system_id][1] += int(row.n_items)
    if not counts:
        return ""
    items = "".join(
        f"<li>{html.escape(str(system))}: {bad} of {total} answers unusable</li>"
        for system, (bad, total) in sorted(counts.items())
    )
    return (
        "<h2>Every answer counts</h2><p>An unusable reply is wrong for accuracy; an unusable "
        "forecast is charged the largest error any system made on the same item (at least "
        "the predict-median baseline's), so a system with no usable answer ranks last.</p>"
        f"<ul>{items}</ul>"
    )


def crps_section(forecasts: pd.DataFrame) -> str:
    """CRPS per system and condition (z-scored like the MAE), with which systems sampled
    (``--forecast-samples``) and how many samples were usable; empty for marts without it."""
    if "crps" not in forecasts.columns or not forecasts["crps"].notna().any():
        return ""
    wide = forecasts.pivot_table(index="system_id", columns="condition", values="crps")
    columns = {
        label: condition
        for label, condition in (
            ("without context", "without_context"),
            ("with context", "with_context"),
        )
        if condition in wide.columns
    }
    lines = []
    for system, block in forecasts.groupby("system_id", sort=True):
        samples, items = int(block["n_samples"].sum()), int(block["n_items"].sum())
        if samples > items:
            lines.append(
                f"<li>{html.escape(str(system))}: {samples // max(items, 1)} samples per "
                f"forecast, {int(block['n_usable_samples'].sum())} of {samples} usable</li>"
            )
    sampled = (
        f"<p>Sampled forecasts (median of the usable samples):</p><ul>{''.join(lines)}</ul>"
        if lines
        else ""
    )
    return (
        "<h3>CRPS</h3><p>CRPS of each forecast's samples against the truth (energy form, "
        "E|X-y| - E|X-X'|/2 over the usable samples, averaged over the horizon, divided by "
        "the history's standard deviation like the MAE). A system with one reply per "
        "forecast (greedy language models, every offline reference) is a point mass: its "
        "CRPS is its MAE. Unusable forecasts are penalised as for the MAE.</p>"
        + sampled
        + _bars("normalised CRPS", wide.reset_index(), "system_id", columns, "CRPS")
    )


def _table(frame: pd.DataFrame, summary: str = "") -> str:
    """A frame with human headers; behind a toggle when ``summary`` names it."""
    out = frame_table(frame)
    return details(summary, out) if summary else out


def _bars(
    title: str, frame: pd.DataFrame, category: str, value_columns: dict[str, str], y_label: str
) -> str:
    categories = list(dict.fromkeys(frame[category]))
    series = []
    for index, (label, column) in enumerate(value_columns.items()):
        points = []
        for name in categories:
            values = frame.loc[frame[category] == name, column].dropna()
            value = float(values.mean()) if len(values) else None
            points.append(
                Point(value, f"{name} · {label}: {value:.3g}" if value is not None else "")
            )
        series.append(Series(label, points, PALETTE[index % len(PALETTE)]))
    return figure(chart_name(title), bar_chart(title, categories, series, y_label=y_label), "")


CONDITION_LABELS = {
    "without_context": "without context",
    "with_context": "with context (Ca)",
    "with_characteristics": "Ch",
    "with_context_metadata": "CaMe",
    "with_characteristics_metadata": "ChMe",
    "with_all_context": "all",
}


def combinations_section(frame: pd.DataFrame) -> str:
    """Figure A.5: each context combination against the same system without context."""
    if frame.empty:
        return ""
    return (
        "<h3>Context combinations (paper Figure A.5)</h3><p>Ca = the caption, Ch = the "
        "characteristics, Me = the metadata, all = the three; each paired with the same "
        "system's forecast without context on the items where both are usable. mae_gain &gt; "
        "0: the context helped; n_improved of n_paired items improved; mae_gain_ci_low / "
        "mae_gain_ci_high: the t 95 % interval of the mean paired gain over the items "
        "(empty below 2 items).</p>"
        + _bars("MAE gain per context combination", frame, "paper_label",
                {"mae_gain (mean over systems)": "mae_gain"}, "MAE gain")
        + _table(frame.drop(columns=["suite_run_id"]))
    )  # fmt: skip


def perturbation_section(frame: pd.DataFrame) -> str:
    """Section 5.3: accuracy on the originals and on their perturbed twins."""
    if frame.empty:
        return ""
    with_series = frame[frame["condition"] == "with_series"]
    return (
        "<h2>Perturbed questions (paper Section 5.3)</h2><p>Each which_change question "
        "again, with one wrong option replaced by a near copy of the right one with other "
        "numbers (which the second series refutes). share_lured: answers naming the near "
        "copy; accuracy of the twins with its Wilson interval: task qa_perturbed above; "
        "accuracy_drop_ci_low / accuracy_drop_ci_high: the t 95 % interval of the mean "
        "paired drop over the pairs (each pair 1, 0 or -1; clipped to [-1, 1]).</p>"
        + _bars("original vs perturbed (with the series)", with_series, "system_id",
                {"original": "accuracy_original", "perturbed": "accuracy_perturbed",
                 "chance": "chance_level"}, "accuracy")
        + _table(frame.drop(columns=["suite_run_id"]))
    )  # fmt: skip


def render_report(data: dict[str, pd.DataFrame]) -> str:
    """The HTML report from the frames of :func:`_read` (pure)."""
    tasks, forecasts = data["tasks"], data["forecasts"]
    ratings = data.get("ratings", pd.DataFrame())
    stability = data.get("stability", pd.DataFrame())
    judged = ratings
    if not ratings.empty and not stability.empty and "share_at_rating" in stability:
        keys = [k for k in ("suite_run_id", "metric", "task", "system_id") if k in stability]
        # the intervals too: the verdict says when the best and worst do not separate
        shares = [
            c for c in ("share_at_rating", "share_mc_se", "ci_low", "ci_high") if c in stability
        ]
        judged = ratings.merge(stability[[*keys, *shares]], on=keys, how="left")
    sections = [
        "<h1>Reasoning suite</h1>",
        verdict_html(
            judged,
            "the reasoning tasks and context-aided forecasting",
            "<code>marts.rsn_ratings</code>, <code>marts.rsn_rating_stability</code>",
        ),
        summary_table_html(judged),
        not_rated_html(ratings),
    ]
    if tasks.empty and forecasts.empty:
        sections.append(
            "<p>No reasoning suite run in these marts yet: run "
            "<code>tsrate suite reasoning run</code>.</p>"
        )
    else:
        run = (tasks if not tasks.empty else forecasts)["suite_run_id"].iloc[0]
        sections.append(
            f"<p>Suite run <code>{html.escape(str(run))}</code>. Accuracy counts unparseable "
            "replies as wrong; forecast errors are normalised (z-score with the history's "
            "standard deviation; min-max with its range in the mae_minmax columns).</p>"
        )
    sections.append(unusable_lines(tasks, forecasts))
    sections.append(chance_section(tasks))
    for task, block in tasks.groupby("task", sort=True):
        sections.append(f"<h2>{html.escape(str(task))}</h2>")
        columns = {"with the series": "accuracy", "chance": "chance_level"}
        if block["accuracy_without_series"].notna().any():
            columns["without the series"] = "accuracy_without_series"
        sections.append(_bars(f"{task}: accuracy", block, "system_id", columns, "accuracy"))
        sections.append(_table(block.drop(columns=["suite_run_id"]), f"{task}: the numbers"))
    if not forecasts.empty:
        sections.append("<h2>Context-aided forecasting</h2>")
        wide = forecasts.pivot_table(
            index="system_id", columns="condition", values="mae"
        ).reset_index()
        columns = {
            CONDITION_LABELS.get(condition, condition): condition
            for condition in FORECAST_CONTEXTS
            if condition in wide.columns
        }
        baseline = forecasts.groupby("system_id")["baseline_mae"].mean().reset_index()
        wide = wide.merge(baseline, on="system_id")
        columns["predict median"] = "baseline_mae"
        sections.append(_bars("normalised MAE", wide, "system_id", columns, "MAE"))
        sections.append(crps_section(forecasts))
        sections.append(
            _table(forecasts.drop(columns=["suite_run_id"]), "Forecast errors: the numbers")
        )
        if not data["context"].empty:
            sections.append(
                "<p>context_rule reads the generator's parameters: an oracle, an upper "
                "bound on what the context is worth, not a model.</p>"
            )
            sections.append(_table(data["context"].drop(columns=["suite_run_id"])))
        sections.append(combinations_section(data.get("combinations", pd.DataFrame())))
    sections.append(perturbation_section(data.get("perturbation", pd.DataFrame())))
    if not data["ratings"].empty:
        sections.append(
            "<h2>Ratings</h2><p>share_at_rating: share of item resamples giving the "
            "published rating (1 = firm); ci_low / ci_high: the percentile 95 % interval of "
            "the rated score over the same item resamples (every rated score, series_gap "
            "and context_gain included). Accuracy intervals in the tables above: Wilson "
            "95 %; error intervals: bootstrap 95 % over items.</p>"
        )
        keys = ["metric", "task", "system_id"]
        shown = [*keys, "raw_score", "rating", "higher_is_better", "rating_reason"]
        ratings = data["ratings"][[c for c in shown if c in data["ratings"].columns]]
        stability = data.get("stability", pd.DataFrame())
        if not stability.empty:
            wanted = [c for c in ("ci_low", "ci_high", "share_at_rating") if c in stability]
            ratings = ratings.merge(stability[[*keys, *wanted]], on=keys, how="left")
            if "share_at_rating" in ratings:  # rounded down: a shaky share never reads 0.6
                ratings["share_at_rating"] = ratings["share_at_rating"].map(
                    lambda v: v if pd.isna(v) else floor_share(v, 3)
                )
        sections.append(_table(ratings, "Every rating"))
    return html_page("tsrate reasoning", "".join(sections))


def write_report(warehouse: Path, output: Path) -> Path:
    """Read the suite's marts from ``warehouse`` (read-only) and write the HTML report."""
    return write_html(output, render_report(_read(Path(warehouse))))
