"""The understanding report: the paper's Figure 2 as absolute-scale profile charts and the
format table of its Table 4, in one offline HTML file that opens with a verdict.

:func:`profile_figure` draws scores on an ABSOLUTE 0-1 scale, as Figure 2 does (F1 or
accuracy 1 at the top, 0 at the bottom), from Vega-Lite (:mod:`tsrate.html.charts`), and
never from a cell of fewer than MIN_CHART_PROMPTS prompts (named under the chart).
:func:`write_report` reads the suite's marts (``und_*``) read-only and writes the HTML.
Where a suite run holds both prompting styles, every chart and table shows a chain-of-thought
system as its own entry (``<system> · cot``) and a section compares zero-shot with
chain-of-thought scores per system and task (:func:`prompting_table_html`).
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from tsrate.html.charts import (
    Point,
    Series,
    bar_chart,
    chart_name,
    colour_for,
    enough,
    esc,
    figure,
    score_chart,
)
from tsrate.html.page import frame_table
from tsrate.platform.warehouse import connect
from tsrate.suites import intervals
from tsrate.suites.publishing import html_page, write_html
from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.snapshot import REBUILD, SnapshotReader
from tsrate.suites.verdict import floor_share, summary_table_html, verdict_html

#: a chart is drawn only from cells of at least this many prompts (smaller ones are listed)
MIN_CHART_PROMPTS = 20


def profile_figure(title: str, table: pd.DataFrame, counts: pd.DataFrame | None = None) -> str:
    """A system x axis table of scores in [0, 1] as an absolute-scale profile chart
    (:func:`tsrate.html.charts.score_chart`); cells with fewer than MIN_CHART_PROMPTS
    prompts (``counts``, same shape) are left out and named under the chart."""
    axes = [str(c) for c in table.columns]
    dropped = []
    series = []
    for index, system in enumerate(table.index):
        points = []
        for axis in table.columns:
            value = table.loc[system, axis]
            n = None if counts is None else counts.loc[system, axis]
            if counts is not None and not enough(n, MIN_CHART_PROMPTS):
                if not pd.isna(value):
                    dropped.append(f"{system} · {axis} (n = {0 if pd.isna(n) else int(n)})")
                value = None
            label = (
                f"{system} · {axis}: {value:.3f}"
                if value is not None and not pd.isna(value)
                else ""
            )
            if counts is not None and value is not None and not pd.isna(value):
                label += f" (n = {int(counts.loc[system, axis])})"
            points.append(Point(None if value is None or pd.isna(value) else float(value), label))
        series.append(Series(str(system), points, colour_for(index)))
    caption = f"Cells of fewer than {MIN_CHART_PROMPTS} prompts are not drawn" + (
        ": " + esc("; ".join(dropped)) + "." if dropped else " (none here)."
    )
    return figure(chart_name(title), score_chart(title, axes, series), caption)


def _figure2(scores: pd.DataFrame) -> list[str]:
    """(a) detection F1 per feature, (b) retrieval / min / max accuracy per feature; the csv
    format where present (the paper's main results), else the mean over formats."""
    if scores.empty:
        return ["<p>No scores yet: run <code>tsrate suite understanding run</code>.</p>"]
    chosen = scores[scores["format"] == "csv"] if (scores["format"] == "csv").any() else scores
    out = []
    detection = chosen[chosen["task"] == "detection"]
    if detection["feature"].nunique() >= 3:
        table = detection.pivot_table(
            index="system_id", columns="feature", values="f1", aggfunc="mean"
        )
        counts = detection.pivot_table(
            index="system_id", columns="feature", values="n_prompts", aggfunc="sum"
        ).reindex_like(table)
        out.append(profile_figure("Feature detection (F1)", table, counts))
    numeric = chosen[chosen["task"].isin(["retrieval", "arithmetic_min", "arithmetic_max"])]
    numeric = numeric[~numeric["feature"].isin(list(g.POSITION))]
    if not numeric.empty:
        label = numeric["task"].map(
            {"retrieval": "value", "arithmetic_min": "min", "arithmetic_max": "max"}
        )
        numeric = numeric.assign(axis=numeric["feature"] + " " + label)
        table = numeric.pivot_table(
            index="system_id", columns="axis", values="accuracy", aggfunc="mean"
        )
        counts = numeric.pivot_table(
            index="system_id", columns="axis", values="n_prompts", aggfunc="sum"
        ).reindex_like(table)
        if table.shape[1] >= 3:
            out.append(
                profile_figure(
                    "Information retrieval and arithmetic reasoning (accuracy)", table, counts
                )
            )
    return out


TASK_ORDER = (
    "detection",
    "classification",
    "retrieval",
    "arithmetic_min",
    "arithmetic_max",
    "matching_intra",
    "matching_cross",
)


def format_table_html(table: pd.DataFrame) -> str:
    """Table 4: one block per system, rows = formats, columns = tasks (F1 or accuracy) with
    the score's 95 % interval (und_format_table.score_ci_low / _high: from the cells'
    own intervals; an older snapshot without them shows the score alone); the best format
    of each column in bold."""
    if table.empty:
        return "<p>No format scores yet.</p>"
    has_interval = {"score_ci_low", "score_ci_high"} <= set(table.columns)
    parts = []
    for system_id, block in table.groupby("system_id", sort=True):
        wide = block.pivot_table(index="format", columns="task", values="score", aggfunc="mean")
        if has_interval:
            low = block.pivot_table(index="format", columns="task", values="score_ci_low")
            high = block.pivot_table(index="format", columns="task", values="score_ci_high")
        tasks = [t for t in TASK_ORDER if t in wide.columns]
        head = "".join(f"<th>{html.escape(t)}</th>" for t in tasks)
        rows = []
        for fmt in wide.index:
            cells = []
            for t in tasks:
                value = wide.loc[fmt, t]
                best = wide[t].max()
                text = "" if pd.isna(value) else f"{value:.2f}"
                if not pd.isna(value) and value == best:
                    text = f"<b>{text}</b>"
                if has_interval and not pd.isna(value):
                    lo = low.loc[fmt, t] if fmt in low.index and t in low.columns else None
                    hi = high.loc[fmt, t] if fmt in high.index and t in high.columns else None
                    if lo is not None and hi is not None and not (pd.isna(lo) or pd.isna(hi)):
                        text += f" <small>[{lo:.2f}, {hi:.2f}]</small>"
                cells.append(f"<td>{text}</td>")
            rows.append(f"<tr><th>{html.escape(fmt)}</th>{''.join(cells)}</tr>")
        parts.append(
            f"<h3>{html.escape(system_id)}</h3><table><tr><th>format</th>{head}</tr>{''.join(rows)}</table>"
        )
    return "".join(parts)


def with_pooled_wilson(curves: pd.DataFrame) -> pd.DataFrame:
    """``ci_low`` / ``ci_high``: the Wilson 95 % interval
    (:func:`tsrate.suites.intervals.wilson_interval`) of each row's pooled prompts
    (``n_correct`` of ``n``): the rows pool und_length_curves' cells over feature datasets
    and formats, whose own intervals (accuracy_ci_low / _high) are per cell."""
    out = curves.copy()
    if out.empty or "n_correct" not in out.columns:
        return out
    low, high = intervals.wilson_interval(out["n_correct"].to_numpy(), out["n"].to_numpy())
    out["ci_low"], out["ci_high"] = low, high
    return out


def length_curve_charts(curves: pd.DataFrame) -> list[str]:
    """One bar chart per numeric task: accuracy per length bin, one series per system (the
    tooltip gives the bin's Wilson 95 % interval, :func:`with_pooled_wilson`)."""
    if curves.empty:
        return ["<p>none</p>"]
    curves = with_pooled_wilson(curves)
    has_interval = "ci_low" in curves.columns

    def interval(row) -> str:
        return f" [{row.ci_low:.2f}, {row.ci_high:.2f}]" if has_interval else ""

    out = []
    for task, block in curves.groupby("task", sort=True):
        bins = sorted(set(zip(block["length_bin_start"], block["length_bin_end"], strict=True)))
        labels = [f"{a}-{b}" for a, b in bins]
        series = []
        for index, (system, mine) in enumerate(block.groupby("system_id", sort=True)):
            by_bin = {(r.length_bin_start, r.length_bin_end): r for r in mine.itertuples()}
            points = [
                Point(
                    float(by_bin[b].accuracy)
                    if b in by_bin and enough(by_bin[b].n, MIN_CHART_PROMPTS)
                    else None,
                    f"{system} · {b[0]}-{b[1]} days: "
                    + (
                        f"{by_bin[b].accuracy:.2f}{interval(by_bin[b])} ({by_bin[b].n} prompts)"
                        if b in by_bin
                        else ""
                    ),
                )
                for b in bins
            ]
            series.append(Series(system, points, colour_for(index)))
        title = f"{task}: accuracy by series length"
        out.append(
            figure(
                chart_name(title),
                bar_chart(title, labels, series, y_label="accuracy"),
                f"Bins of fewer than {MIN_CHART_PROMPTS} prompts are not drawn (see the table).",
            )
        )
    return out


def length_curve_table_html(curves: pd.DataFrame) -> str:
    """The numbers behind :func:`length_curve_charts`, folded away: accuracy per task,
    system and length bin with the Wilson 95 % interval of the bin's pooled prompts."""
    curves = with_pooled_wilson(curves)
    if curves.empty or "ci_low" not in curves.columns:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(str(r.task))}</td><td>{html.escape(str(r.system_id))}</td>"
        f"<td>{r.length_bin_start}-{r.length_bin_end}</td><td>{r.accuracy:.2f}</td>"
        f"<td>[{r.ci_low:.2f}, {r.ci_high:.2f}]</td><td>{int(r.n)}</td></tr>"
        for r in curves.itertuples(index=False)
    )
    return (
        "<details><summary>show the accuracy of every length bin with its interval</summary>"
        "<table><tr><th>task</th><th>system</th><th>days</th><th>accuracy</th>"
        f"<th>Wilson 95 % interval</th><th>prompts</th></tr>{rows}</table></details>"
    )


#: und_confusion_matrix's answers that are no option, after the options: a refusal
#: ('None of these') apart from an unparseable or missing reply
NO_OPTION_ANSWERS = ("(abstained)", "(unusable)")


def confusion_html(confusion: pd.DataFrame) -> str:
    """One small matrix per system, task and feature (truth rows, answer columns; the
    options sorted, then '(abstained)' and '(unusable)' where they occurred)."""
    if confusion.empty:
        return "<p>none</p>"
    parts = []
    for (system, task, feature), block in confusion.groupby(
        ["system_id", "task", "feature"], sort=True
    ):
        wide = block.pivot_table(
            index="truth", columns="predicted", values="n_prompts", aggfunc="sum", fill_value=0
        )
        wide = wide[
            [c for c in wide.columns if c not in NO_OPTION_ANSWERS]
            + [c for c in NO_OPTION_ANSWERS if c in wide.columns]
        ]
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in wide.columns)
        rows = "".join(
            f"<tr><th>{html.escape(str(t))}</th>"
            + "".join(f"<td>{int(v)}</td>" for v in wide.loc[t])
            + "</tr>"
            for t in wide.index
        )
        parts.append(
            f"<h4>{html.escape(system)} · {html.escape(task)} · {html.escape(feature)}</h4>"
            f"<table><tr><th>truth \\ answer</th>{head}</tr>{rows}</table>"
        )
    return "<details><summary>show the matrices</summary>" + "".join(parts) + "</details>"


def usable_table_html(usable: pd.DataFrame) -> str:
    """Unusable answers per system and task (count and coverage): ``n_unusable`` =
    ``n_unparsed`` (stored replies the parser could not read) + ``n_abstained`` (replies
    that declined every option; a snapshot without it counted them in ``n_unparsed``) +
    ``n_unanswered`` (prompts without a stored reply), each named in the system's line."""
    if usable.empty:
        return "<p>none</p>"
    names = {"n_unparsed": "unparseable", "n_abstained": "abstained", "n_unanswered": "unanswered"}
    parts = [c for c in names if c in usable.columns]
    totals = usable.groupby("system_id", sort=True)[["n_unusable", "n_prompts", *parts]].sum()
    lines = []
    for system, row in totals.iterrows():
        split = ""
        if len(parts) > 1:
            split = " (" + ", ".join(f"{int(row[c])} {names[c]}" for c in parts) + ")"
        lines.append(
            f"<li>{html.escape(system)}: {int(row.n_unusable)} of {int(row.n_prompts)} answers "
            f"unusable{split}</li>"
        )
    return f"<ul>{''.join(lines)}</ul>" + frame_table(usable)


def interval_table_html(scores: pd.DataFrame) -> str:
    """One row per system and task: the headline score and its 95 % interval (means of the
    per-cell scores and interval ends over features and formats)."""
    if scores.empty:
        return "<p>none</p>"
    rows = []
    for (system_id, task), block in scores.groupby(["system_id", "task"], sort=True):
        if task in ("detection", "classification"):
            metric, value, low, high = "f1", "f1", "f1_ci_low", "f1_ci_high"
        else:
            metric, value, low, high = "accuracy", "accuracy", "accuracy_ci_low", "accuracy_ci_high"
        cells = [(metric, value, low, high)]
        if block["mape"].notna().any():
            cells.append(("mape (%)", "mape", "mape_ci_low", "mape_ci_high"))
        for name, v, lo, hi in cells:
            rows.append(
                f"<tr><td>{html.escape(system_id)}</td><td>{html.escape(task)}</td>"
                f"<td>{name}</td><td>{block[v].mean():.2f}</td>"
                f"<td>[{block[lo].mean():.2f}, {block[hi].mean():.2f}]</td>"
                f"<td>{int(block['n_prompts'].sum())}</td></tr>"
            )
    return (
        "<table><tr><th>system</th><th>task</th><th>metric</th><th>score</th>"
        f"<th>mean of the cells' 95 % intervals</th><th>prompts</th></tr>{''.join(rows)}</table>"
    )


def rated_scores_html(rated: pd.DataFrame) -> str:
    """Every rated score (und_rating_stability: metric x feature x system, mean over formats)
    with its percentile 95 % interval over prompt resamples, its rating and the share of
    resamples at that rating; folded away (one row per rating)."""
    if rated.empty:
        return "<p>none</p>"
    rows = []
    # an older snapshot's stability mart has no intervals: say so, never "(undefined)"
    has_interval = {"ci_low", "ci_high"} <= set(rated.columns)
    for row in rated.itertuples(index=False):
        if not has_interval:
            interval = "(not in this snapshot)"
        elif pd.notna(row.ci_low):
            interval = f"[{row.ci_low:.3g}, {row.ci_high:.3g}]"
        else:
            interval = "(undefined)"
        rating = "" if pd.isna(row.rating) else str(int(row.rating))
        # rounded down: a shaky share (under 0.6) never reads 0.60
        share = "" if pd.isna(row.share_at_rating) else f"{floor_share(row.share_at_rating, 2):.2f}"
        rows.append(
            f"<tr><td>{html.escape(str(row.metric))}</td><td>{html.escape(str(row.feature))}</td>"
            f"<td>{html.escape(str(row.system_id))}</td><td>{row.raw_score:.3g}</td>"
            f"<td>{interval}</td><td>{rating}</td><td>{share}</td></tr>"
        )
    return (
        "<details><summary>show every rated score with its interval</summary><table><tr>"
        "<th>metric</th><th>feature</th><th>system</th><th>score</th><th>95 % interval</th>"
        "<th>rating</th><th>share_at_rating</th></tr>"
        f"{''.join(rows)}</table></details>"
    )


def position_bias_html(bias: pd.DataFrame) -> str:
    """Per quadrant: accuracy with its interval, the Holm p-value and the verdict, saying
    when a cell is too small to judge."""
    if bias.empty:
        return "<p>none</p>"
    rows = []
    for row in bias.itertuples(index=False):
        if not row.judgeable:
            verdict = f"too small to judge ({row.n_prompts} &lt; {row.min_prompts_to_judge})"
        elif row.position_bias:
            verdict = "<b>biased</b>"
        else:
            verdict = "no evidence"
        rows.append(
            f"<tr><td>{html.escape(row.system_id)}</td><td>{html.escape(row.dataset)}</td>"
            f"<td>{html.escape(row.task)}</td><td>{row.quadrant}</td><td>{row.n_prompts}</td>"
            f"<td>{row.accuracy_pct:.1f} [{row.accuracy_ci_low_pct:.1f}, "
            f"{row.accuracy_ci_high_pct:.1f}]</td><td>{row.p_holm:.3g}</td><td>{verdict}</td></tr>"
        )
    return (
        "<table><tr><th>system</th><th>dataset</th><th>task</th><th>quadrant</th>"
        "<th>prompts</th><th>accuracy % [95 %]</th><th>Holm p</th><th>verdict</th></tr>"
        f"{''.join(rows)}</table>"
    )


#: the chance reference every other system is held against
CHANCE_SYSTEM = "und_random"


def chance_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Per system (other than und_random), prompting style and task: the share of prompts
    answered right (unusable replies count as wrong), pooled over features and formats,
    with its Wilson 95 % interval, beside und_random's share on the same questions, the
    two-sided p-value of the two-proportion z test and a verdict: ``above chance`` /
    ``below chance`` (p < 0.05) or ``not distinguishable from chance``. Empty without
    und_random's answers."""
    columns = [
        "prompting",
        "system_id",
        "task",
        "n_prompts",
        "accuracy",
        "ci_low",
        "ci_high",
        "chance_accuracy",
        "chance_n",
        "p_value",
        "verdict",
    ]
    if scores.empty or CHANCE_SYSTEM not in set(scores["system_id"]):
        return pd.DataFrame(columns=columns)
    usable = scores[scores["accuracy"].notna()].copy()
    usable["n_correct"] = (usable["accuracy"] * usable["n_prompts"]).round()
    pooled = usable.groupby(["prompting", "system_id", "task"], as_index=False)[
        ["n_correct", "n_prompts"]
    ].sum()
    chance = pooled[pooled["system_id"] == CHANCE_SYSTEM].set_index(["prompting", "task"])
    rows = []
    for row in pooled[pooled["system_id"] != CHANCE_SYSTEM].itertuples(index=False):
        # und_random answers every question the same way in each prompting style: its
        # zero-shot answers are the chance level of the chain-of-thought questions too
        key = (row.prompting, row.task)
        if key not in chance.index:
            key = ("zero_shot", row.task)
        if key not in chance.index:
            continue
        k0, n0 = chance.loc[key, "n_correct"], chance.loc[key, "n_prompts"]
        k, n = row.n_correct, row.n_prompts
        low, high = intervals.wilson_interval(k, n)
        p = intervals.two_proportion_p(k, n, k0, n0)
        if p < intervals.ALPHA:
            verdict = "above chance" if k / n > k0 / n0 else "below chance"
        else:
            verdict = "not distinguishable from chance"
        rows.append(
            [
                row.prompting,
                row.system_id,
                row.task,
                int(n),
                k / n,
                float(low),
                float(high),
                k0 / n0,
                int(n0),
                p,
                verdict,
            ]
        )
    return pd.DataFrame(rows, columns=columns)


def chance_table_html(scores: pd.DataFrame) -> str:
    """:func:`chance_table` as a section: one row per system, prompting and task."""
    table = chance_table(scores)
    if table.empty:
        return ""
    rows = []
    for row in table.itertuples(index=False):
        system = row.system_id + (" · cot" if row.prompting == "cot" else "")
        verdict = html.escape(row.verdict)
        if row.verdict != "not distinguishable from chance":
            verdict = f"<b>{verdict}</b>"
        rows.append(
            f"<tr><td>{html.escape(system)}</td><td>{html.escape(row.task)}</td>"
            f"<td>{row.n_prompts}</td><td>{row.accuracy:.2f} [{row.ci_low:.2f}, "
            f"{row.ci_high:.2f}]</td><td>{row.chance_accuracy:.2f} ({row.chance_n})</td>"
            f"<td>{row.p_value:.3g}</td><td>{verdict}</td></tr>"
        )
    return (
        "<h2>Against chance</h2>"
        f"<p>Share of questions answered right (an unusable reply is wrong), pooled over "
        f"features and formats, with its Wilson 95 % interval, beside {CHANCE_SYSTEM}'s "
        "share on the same questions; two-sided two-proportion z test, p &lt; 0.05 for a "
        "verdict. A small sample (<code>--sample</code>) is often not distinguishable from "
        "chance: read the interval.</p>"
        "<table><tr><th>system</th><th>task</th><th>prompts</th><th>accuracy [95 %]</th>"
        f"<th>{CHANCE_SYSTEM} (prompts)</th><th>p</th><th>verdict</th></tr>"
        f"{''.join(rows)}</table>"
    )


def label_prompting(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of a mart with ``system_id`` renamed ``<system> · cot`` for chain-of-thought
    rows, so that zero-shot and chain-of-thought answers are never pooled in a chart or
    table; the ``prompting`` column is dropped."""
    if frame.empty or "prompting" not in frame.columns:
        return frame
    cot = frame["prompting"] == "cot"
    out = frame.drop(columns="prompting")
    out["system_id"] = out["system_id"].where(~cot, out["system_id"] + " · cot")
    return out


def _unusable(scores: pd.DataFrame) -> int:
    """Unusable answers of und_scores rows: unparseable + abstained + unanswered (a snapshot
    published before n_abstained or n_unanswered existed counted those in n_unparsed)."""
    total = int(scores["n_unparsed"].sum())
    if "n_abstained" in scores.columns:
        total += int(scores["n_abstained"].sum())
    if "n_unanswered" in scores.columns:
        total += int(scores["n_unanswered"].sum())
    return total


def prompting_table_html(scores: pd.DataFrame) -> str:
    """Zero-shot against chain-of-thought: per system and task, the headline score (F1 for
    detection and classification, accuracy otherwise; mean over features and formats) and
    the unusable replies of each prompting style. Empty when the scores hold one style."""
    if scores.empty or "prompting" not in scores.columns:
        return ""
    if set(scores["prompting"]) != {"zero_shot", "cot"}:
        return ""
    rows = []
    for (system_id, task), block in scores.groupby(["system_id", "task"], sort=True):
        column = "f1" if task in ("detection", "classification") else "accuracy"
        by = {prompting: part for prompting, part in block.groupby("prompting", sort=False)}
        if set(by) != {"zero_shot", "cot"}:
            continue
        zero, cot = (float(by[k][column].mean()) for k in ("zero_shot", "cot"))
        unusable = {k: _unusable(by[k]) for k in by}
        prompts = {k: int(by[k]["n_prompts"].sum()) for k in by}
        rows.append(
            f"<tr><td>{html.escape(system_id)}</td><td>{html.escape(task)}</td><td>{column}</td>"
            f"<td>{zero:.2f}</td><td>{cot:.2f}</td><td>{cot - zero:+.2f}</td>"
            f"<td>{unusable['zero_shot']} / {prompts['zero_shot']}</td>"
            f"<td>{unusable['cot']} / {prompts['cot']}</td></tr>"
        )
    return (
        "<h2>Zero-shot against chain of thought</h2>"
        "<p>The same questions asked zero-shot and with a chain-of-thought instruction (the "
        "reply's last <code>Answer:</code> line parsed strictly); mean over features and "
        "formats. Ratings compare systems within one prompting style.</p>"
        "<table><tr><th>system</th><th>task</th><th>metric</th><th>zero-shot</th><th>cot</th>"
        "<th>cot - zero-shot</th><th>unusable zero-shot</th><th>unusable cot</th></tr>"
        f"{''.join(rows)}</table>"
    )


def write_report(warehouse: Path, output: Path) -> Path:
    """Write the HTML report from the suite's marts; returns ``output``."""
    with connect(warehouse, read_only=True) as con:
        reader = SnapshotReader(con)
        read = reader.read
        scores = read("scores", "select * from {und_scores}", "und_scores")
        table = read("table", "select * from {und_format_table}", "und_format_table")
        bias = read(
            "bias",
            "select prompting, system_id, dataset, task, quadrant, n_prompts, accuracy_pct, "
            "accuracy_ci_low_pct, accuracy_ci_high_pct, accuracy_elsewhere_pct, p_holm, "
            "min_prompts_to_judge, judgeable, position_bias from {und_position_bias} "
            "order by system_id, prompting desc, dataset, task, quadrant",
            "und_position_bias",
        )
        ratings = read(
            "ratings",
            "select r.metric, r.prompting, r.higher_is_better, r.system_id, "
            "avg(r.rating) as mean_rating, "
            "avg(s.share_at_rating) as mean_share_at_rating, count(*) as n_features, "
            # the mean is over the rated features only (a MAPE away from 0 may have none)
            "count(r.rating) as n_rated "
            "from {und_ratings} r left join {und_rating_stability} s "
            "using (suite_run_id, prompting, metric, feature, system_id) group by all "
            "order by r.metric, r.prompting desc, r.system_id",
            "und_ratings",
            "und_rating_stability",
        )
        # ci_low / ci_high came later: an older snapshot's rated scores come without them
        interval = "ci_low, ci_high, " if reader.has("und_rating_stability", "ci_low") else ""
        rated = read(
            "rated",
            f"select prompting, metric, feature, system_id, raw_score, {interval}rating, "
            "share_at_rating from {und_rating_stability} "
            "order by metric, feature, prompting desc, system_id",
            "und_rating_stability",
        )
        rated_note = (
            ""
            if reader.has("und_rating_stability", "ci_low") or rated.empty
            else "<p>The intervals of the rated scores are not in this snapshot (published "
            f"before they existed): rebuild it with <code>{REBUILD}</code>.</p>"
        )
        confusion = read(
            "confusion",
            "select prompting, system_id, task, feature, truth, predicted, n_prompts "
            "from {und_confusion_matrix} order by all",
            "und_confusion_matrix",
        )
        curves = read(
            "curves",
            "select prompting, system_id, task, length_bin_start, length_bin_end, "
            "sum(n_prompts) as n, sum(round(accuracy * n_prompts)) as n_correct, "
            "sum(accuracy * n_prompts) / sum(n_prompts) as accuracy from {und_length_curves} "
            "group by all order by all",
            "und_length_curves",
        )
        judged = read(  # share_mc_se came later: an older snapshot lacks it
            "judged",
            "select r.*, columns('^share_(at_rating|mc_se)$') from {und_ratings} r "
            "left join {und_rating_stability} s "
            "using (suite_run_id, prompting, metric, feature, system_id)",
            "und_ratings",
            "und_rating_stability",
        )
        # n_unanswered came later: an older snapshot's n_unparsed counted every unusable
        # answer (unparseable or unanswered), so it is their total there; n_abstained later
        # still: without it, n_unparsed counts the abstentions too
        abstained = reader.has("und_scores", "n_abstained")
        counted = (
            "n_unparsed + n_abstained + n_unanswered" if abstained else "n_unparsed + n_unanswered"
        )
        unusable = (
            "sum(n_unparsed) as n_unparsed, "
            + ("sum(n_abstained) as n_abstained, " if abstained else "")
            + "sum(n_unanswered) as n_unanswered, "
            f"sum({counted}) as n_unusable, "
            f"1 - sum({counted}) / sum(n_prompts) as coverage "
            if reader.has("und_scores", "n_unanswered")
            else "sum(n_unparsed) as n_unusable, 1 - sum(n_unparsed) / sum(n_prompts) as coverage "
        )
        usable = read(
            "usable",
            "select prompting, system_id, task, sum(n_prompts) as n_prompts, "
            f"{unusable}from {{und_scores}} "
            "group by all order by system_id, prompting desc, task",
            "und_scores",
        )
    comparison = prompting_table_html(scores)
    against_chance = chance_table_html(scores)
    scores, table, bias, confusion, curves, usable, rated = (
        label_prompting(f) for f in (scores, table, bias, confusion, curves, usable, rated)
    )
    suite_runs = sorted(scores["suite_run_id"].unique()) if not scores.empty else []
    # each prompting style is rated on its own: prompting stays part of the score, so the
    # verdict never compares a chain-of-thought rating with a zero-shot one
    if "prompting" in judged.columns:
        judged = label_prompting(judged).assign(prompting=judged["prompting"])
    note = reader.note
    sections = [
        "<h1>Time-series understanding</h1>",
        note("judged", ""),
        verdict_html(
            judged,
            "the understanding tasks (per metric and feature)",
            "<code>marts.und_ratings</code>, <code>marts.und_rating_stability</code>",
        ),
        summary_table_html(judged),
        against_chance,
        f"<p>Suite run: {html.escape(', '.join(suite_runs) or 'none')}. Charts: the csv "
        "format; scores on an absolute 0-1 scale (paper Figure 2).</p>",
        "<p>References, not models: und_analyst reads the series back out of the prompt's "
        "own table and applies standard statistics (on retrieval and min/max all but an "
        "oracle: an upper bound); und_random answers at chance.</p>",
        *_figure2(scores),
        "<h2>Formats (paper Table 4)</h2>",
        "<p>F1 for detection and classification, accuracy otherwise; mean over features. "
        "In brackets: an approximate 95 % interval of that mean (normal approximation from "
        "the cells' own intervals, read as standard errors: und_format_table.score_ci_low / "
        "_high).</p>",
        note("table", format_table_html(table)),
        comparison,
        "<h2>Every answer counts: unusable replies</h2>",
        "<p>An unparseable or missing reply is wrong for accuracy and F1 and, for MAPE, is "
        "charged the largest error any system made on the same prompt (at least 100 %); so "
        "a system with no usable answer ranks last on every metric it attempted. "
        "n_unusable = n_unparsed (a stored reply the parser could not read) + n_abstained "
        "(a reply that declined every option, e.g. 'None of these') + n_unanswered "
        "(a prompt with no stored reply: a run that ended early).</p>",
        note("usable", usable_table_html(usable)),
        "<h2>Scores with 95 % intervals</h2>",
        "<p>Accuracy: Wilson interval; F1 and MAPE: percentile bootstrap over prompts. "
        "Mean over features and formats of each cell's score and of each cell's interval "
        "ends: a guide to how wide a cell's interval is, not an interval of the mean; the "
        "interval of each rated score is in the ratings section below.</p>",
        note("scores", interval_table_html(scores)),
        "<h2>Position bias (two-proportion test per quadrant, Holm-corrected)</h2>",
        note("bias", position_bias_html(bias)),
        "<h2>Accuracy by series length (paper Figure 3)</h2>",
        "<p>Prompts pooled over feature datasets and formats; each bar a 30-day bin of "
        "lengths, with the Wilson 95 % interval of its pooled prompts (tooltip and the table "
        "below; und_length_curves holds each dataset and format's own, "
        "accuracy_ci_low / _high).</p>",
        note("curves", "".join(length_curve_charts(curves)) + length_curve_table_html(curves)),
        "<h2>Confusion matrices (paper Appendix D)</h2>",
        "<p>Rows: the true answer; columns: the system's answer, all formats pooled; "
        "<code>(abstained)</code>: replies that declined every option (a refusal, e.g. "
        "'None of these'), <code>(unusable)</code>: unparseable replies and prompts without "
        "a reply (a snapshot built before abstentions had their own column counts them "
        "there).</p>",
        note("confusion", confusion_html(confusion)),
        "<h2>Ratings (mean rating over features, with stability)</h2>",
        "<p>Rating 1 holds the lowest raw score of its group: the best where higher_is_better "
        "is false (errors), the worst where it is true, so compare ratings within a metric, "
        "never averaged over metrics. n_rated: the features the mean rating is over (a feature "
        "without a rating, e.g. a lone MAPE away from 0, is left out of it). "
        "mean_share_at_rating: share of prompt resamples that "
        "give the published rating (1 = firm).</p>",
        note("ratings", frame_table(ratings) if not ratings.empty else "<p>none</p>"),
        "<p>Each rated score (mean over formats) with the percentile 95 % interval of the "
        "same prompt resamples.</p>",
        rated_note,
        note("rated", rated_scores_html(rated)),
    ]
    return write_html(output, html_page("tsrate understanding", "".join(sections)))
