"""The understanding report's tables: confusion matrices, unusable answers, scores with
their intervals, rated scores and position bias, each a function of a mart's rows returning
HTML."""

from __future__ import annotations

import html

import pandas as pd

from tsrate.html.page import frame_table
from tsrate.suites.verdict import floor_share

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
    with its percentile 95 % interval over series resamples, its rating and the share of
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
