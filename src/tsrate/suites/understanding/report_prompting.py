"""The understanding report's comparisons: each system against the chance reference
(und_random, :func:`chance_table`), and zero-shot against chain-of-thought answers
(:func:`prompting_table_html`); :func:`label_prompting` keeps the two styles apart
everywhere else."""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd

from tsrate.suites import intervals
from tsrate.suites.understanding.tasks import most_frequent_answers

#: the chance reference every other system is held against
CHANCE_SYSTEM = "und_random"


#: the verdict of a system above und_random but not above the most frequent answer
NOT_ABOVE_MAJORITY = "not above the most frequent answer"


def chance_table(
    scores: pd.DataFrame,
    series: pd.DataFrame | None = None,
    confusion: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per system (other than und_random), prompting style and task: the share of prompts
    answered right (unusable replies count as wrong), pooled over features and formats,
    with its Wilson 95 % interval, beside und_random's share on the same questions, the
    two-sided p-value of the two-proportion z test and a verdict: ``above chance`` /
    ``below chance`` (p < 0.05) or ``not distinguishable from chance``. Empty without
    und_random's answers.

    ``series`` (und_series_scores: correct answers per series): the series, not the prompt,
    is the independent unit -- a series is asked in every format and answered alike -- so
    the interval and the test take the effective counts of the series
    (:func:`tsrate.suites.intervals.clustered_counts`); ``n_series`` says how many. Without
    it (a snapshot published before und_series_scores) every prompt counts as independent
    and ``n_series`` is null: the interval is too narrow where series repeat.

    ``confusion`` (und_confusion_matrix: the true answer of every question a system was
    asked): detection and classification truths are not balanced (4 of 5 trend series
    have a trend), so answering every question with its feature's most frequent answer
    (:func:`.tasks.most_frequent_answers`, without reading the series) beats und_random's
    uniform guess. ``majority_accuracy`` is that rule's share on the system's own questions
    and ``majority_p_value`` the two-sided one-sample z test of the system's share (its
    effective counts) against it; a system above und_random but not above that share
    (p < 0.05) gets the verdict ``not above the most frequent answer``. Null for the other
    tasks (balanced by construction) and without ``confusion``."""
    columns = [
        "prompting",
        "system_id",
        "task",
        "n_prompts",
        "n_series",
        "accuracy",
        "ci_low",
        "ci_high",
        "chance_accuracy",
        "chance_n",
        "p_value",
        "majority_accuracy",
        "majority_p_value",
        "verdict",
    ]
    if scores.empty or CHANCE_SYSTEM not in set(scores["system_id"]):
        return pd.DataFrame(columns=columns)
    groups = ["prompting", "system_id", "task"]
    if series is not None and not series.empty:
        counted = {key: _effective(block) for key, block in series.groupby(groups, sort=True)}
    else:
        usable = scores[scores["accuracy"].notna()].copy()
        usable["n_correct"] = (usable["accuracy"] * usable["n_prompts"]).round()
        pooled = usable.groupby(groups, as_index=False)[["n_correct", "n_prompts"]].sum()
        counted = {
            (r.prompting, r.system_id, r.task): (
                r.n_correct,
                r.n_prompts,
                r.n_correct,
                r.n_prompts,
                None,
            )
            for r in pooled.itertuples(index=False)
        }
    majority = _majority_counts(confusion)
    rows = []
    for (prompting, system_id, task), (k, n, k_eff, n_eff, units) in counted.items():
        if system_id == CHANCE_SYSTEM:
            continue
        # und_random answers every question the same way in each prompting style: its
        # zero-shot answers are the chance level of the chain-of-thought questions too
        key = (prompting, CHANCE_SYSTEM, task)
        if key not in counted:
            key = ("zero_shot", CHANCE_SYSTEM, task)
        if key not in counted:
            continue
        k0, n0, k0_eff, n0_eff, _ = counted[key]
        low, high = intervals.wilson_interval(k_eff, n_eff)
        p = intervals.two_proportion_p(k_eff, n_eff, k0_eff, n0_eff)
        if p < intervals.ALPHA:
            verdict = "above chance" if k / n > k0 / n0 else "below chance"
        else:
            verdict = "not distinguishable from chance"
        level = majority.get((prompting, system_id, task))
        level_p = math.nan
        if level is not None:
            level_p = intervals.one_proportion_p(k_eff, n_eff, level)
            beaten = k / n > level and level_p < intervals.ALPHA
            if verdict == "above chance" and not beaten:
                verdict = NOT_ABOVE_MAJORITY
        rows.append(
            [
                prompting,
                system_id,
                task,
                int(n),
                units,
                k / n,
                float(low),
                float(high),
                k0 / n0,
                int(n0),
                p,
                math.nan if level is None else level,
                level_p,
                verdict,
            ]
        )
    return pd.DataFrame(rows, columns=columns)


def _majority_counts(confusion: pd.DataFrame | None) -> dict[tuple, float]:
    """(prompting, system, task) -> the share of the system's questions whose true answer
    is its feature's most frequent answer by design (:func:`.tasks.most_frequent_answers`);
    only tasks with such an answer (detection, classification)."""
    needed = {"prompting", "system_id", "task", "feature", "truth", "n_prompts"}
    if confusion is None or confusion.empty or not needed <= set(confusion.columns):
        return {}
    answers = most_frequent_answers()
    keys = list(zip(confusion["task"], confusion["feature"], strict=True))
    frame = confusion[[key in answers for key in keys]]
    if frame.empty:
        return {}
    pairs = zip(frame["task"], frame["feature"], frame["truth"], strict=True)
    hit = [answers[(task, feature)] == truth for task, feature, truth in pairs]
    frame = frame.assign(n_hit=frame["n_prompts"].where(hit, 0))
    sums = frame.groupby(["prompting", "system_id", "task"])[["n_hit", "n_prompts"]].sum()
    return {key: row.n_hit / row.n_prompts for key, row in sums.iterrows() if row.n_prompts}


def _effective(block: pd.DataFrame) -> tuple:
    """(correct, prompts, effective correct, effective prompts, series) of und_series_scores
    rows: one row per series, whose prompts form one cluster."""
    n_i = block["n_prompts"].to_numpy(dtype=int)
    k_i = block["n_correct"].to_numpy(dtype=int)
    units = np.repeat(np.arange(len(block)), n_i)
    correct = np.concatenate([[1] * k + [0] * (m - k) for k, m in zip(k_i, n_i, strict=True)])
    k_eff, n_eff = intervals.clustered_counts(correct, units)
    return int(k_i.sum()), int(n_i.sum()), k_eff, n_eff, len(block)


def chance_table_html(
    scores: pd.DataFrame,
    series: pd.DataFrame | None = None,
    confusion: pd.DataFrame | None = None,
) -> str:
    """:func:`chance_table` as a section: one row per system, prompting and task."""
    table = chance_table(scores, series, confusion)
    if table.empty:
        return ""
    note = ""
    if table["n_series"].isna().all():
        note = (
            "<p><b>Prompts counted as independent:</b> this snapshot has no "
            "<code>marts.und_series_scores</code>, so the interval is too narrow where a "
            "series is asked in several formats; rebuild it with "
            "<code>tsrate suite understanding build</code>.</p>"
        )
    rows = []
    for row in table.itertuples(index=False):
        system = row.system_id + (" · cot" if row.prompting == "cot" else "")
        verdict = html.escape(row.verdict)
        if row.verdict != "not distinguishable from chance":
            verdict = f"<b>{verdict}</b>"
        rows.append(
            f"<tr><td>{html.escape(system)}</td><td>{html.escape(row.task)}</td>"
            f"<td>{row.n_prompts}</td><td>{row.accuracy:.2f} [{row.ci_low:.2f}, "
            f"{row.ci_high:.2f}]</td><td>{_count(row.n_series)}</td>"
            f"<td>{row.chance_accuracy:.2f} ({row.chance_n})</td>"
            f"<td>{row.p_value:.3g}</td><td>{_share(row.majority_accuracy)}</td>"
            f"<td>{verdict}</td></tr>"
        )
    return (
        "<h2>Against chance</h2>"
        f"<p>Share of questions answered right (an unusable reply is wrong), pooled over "
        f"features and formats, with its Wilson 95 % interval, beside {CHANCE_SYSTEM}'s "
        "share on the same questions; two-sided two-proportion z test, p &lt; 0.05 for a "
        "verdict. The series is the independent unit, not the prompt: a series is asked "
        "in every format and answered alike, so interval and test count the series "
        "(effective counts, Rao-Scott design effect; "
        "<code>marts.und_series_scores</code>). A small sample (<code>--sample</code>) is "
        "often not distinguishable from chance: read the interval. Detection and "
        "classification truths are not balanced (4 of 5 trend series have a trend): "
        "<i>most frequent answer</i> is the share got by answering every question with "
        "its feature's most frequent true answer, without reading the series; a system "
        f"above {CHANCE_SYSTEM} must also beat it (one-sample z test, p &lt; 0.05), else "
        f"the verdict is <i>{NOT_ABOVE_MAJORITY}</i>.</p>"
        f"{note}"
        "<table><tr><th>system</th><th>task</th><th>prompts</th>"
        "<th>accuracy [95 %]</th><th>series</th>"
        f"<th>{CHANCE_SYSTEM} (prompts)</th><th>p</th><th>most frequent answer</th>"
        "<th>verdict</th></tr>"
        f"{''.join(rows)}</table>"
    )


def _share(value) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:.2f}"


def _count(value) -> str:
    return "?" if value is None or pd.isna(value) else str(int(value))


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
