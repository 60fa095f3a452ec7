"""The understanding report's paper figures and format table: Figure 2 as absolute-scale
profile charts (:func:`profile_figure`, never drawn from a cell of fewer than
MIN_CHART_PROMPTS prompts), Table 4's formats (:func:`format_table_html`) and Figure 3's
accuracy by series length with pooled Wilson intervals (:func:`length_curve_charts`)."""

from __future__ import annotations

import html

import numpy as np
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
from tsrate.suites import intervals
from tsrate.suites.understanding import generators as g

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


def figure2(scores: pd.DataFrame) -> list[str]:
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


def with_pooled_wilson(curves: pd.DataFrame, series: pd.DataFrame | None = None) -> pd.DataFrame:
    """``ci_low`` / ``ci_high``: the Wilson 95 % interval
    (:func:`tsrate.suites.intervals.wilson_interval`) of each row's pooled prompts
    (``n_correct`` of ``n``): the rows pool und_length_curves' cells over feature datasets
    and formats, whose own intervals (accuracy_ci_low / _high) are per cell. With
    ``series`` (und_series_scores) the pooled prompts count their series, the sampled unit
    (a series is asked in every format): the interval is on the effective counts of the
    row's series (:func:`tsrate.suites.intervals.clustered_counts`), ``n_series`` how many;
    without it every prompt counts as independent."""
    out = curves.copy()
    if out.empty or "n_correct" not in out.columns or "ci_low" in out.columns:
        return out  # nothing to pool, or pooled already (with its series)
    k, n = out["n_correct"].to_numpy(dtype=float), out["n"].to_numpy(dtype=float)
    if series is not None and not series.empty:
        effective = _series_counts(series)
        keys = zip(
            out["prompting"], out["system_id"], out["task"], out["length_bin_start"], strict=True
        )
        found = [effective.get(tuple(key)) for key in keys]
        k = np.array([f[0] if f else v for f, v in zip(found, k, strict=True)], dtype=float)
        n = np.array([f[1] if f else v for f, v in zip(found, n, strict=True)], dtype=float)
        out["n_series"] = [f[2] if f else None for f in found]
    low, high = intervals.wilson_interval(k, n)
    out["ci_low"], out["ci_high"] = low, high
    return out


def _series_counts(series: pd.DataFrame) -> dict[tuple, tuple[float, float, int]]:
    """(prompting, system, task, length bin start) -> effective (correct, prompts) and the
    series of und_series_scores rows, the rows und_length_curves holds (numeric tasks on
    the feature datasets, 30-day bins)."""
    part = series[
        series["task"].isin(["retrieval", "arithmetic_min", "arithmetic_max"])
        & ~series["dataset"].isin(g.POSITION)
    ]
    part = part.assign(length_bin_start=(part["series_length"] // 30) * 30)
    out = {}
    groups = ["prompting", "system_id", "task", "length_bin_start"]
    for key, block in part.groupby(groups, sort=True):
        n_i = block["n_prompts"].to_numpy(dtype=int)
        k_i = block["n_correct"].to_numpy(dtype=int)
        units = np.repeat(np.arange(len(block)), n_i)
        correct = np.concatenate([np.arange(m) < k for k, m in zip(k_i, n_i, strict=True)])
        out[key] = (*intervals.clustered_counts(correct, units), len(block))
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
