"""Report sections for the probabilistic metrics and the fev-style leaderboard: tables first
(charts can follow the report's chart convention). Each number is traceable to its mart row
through the ``num`` formatter the page passes in (tsrate.robustness.report.render.num)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import pandas as pd

from tsrate.html.charts import esc

PROBABILISTIC_METRICS = ("wql", "crps", "msis", "coverage_80")
LEADERBOARD_METRICS = ("mase", "smape", "wql", "crps")


def float_value(value: object) -> float | None:
    """A mart value as ``num`` takes it: None for null (NaN or pandas' NA)."""
    return None if pd.isna(value) else float(value)


def table_html(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


#: marts.probabilistic_scores' step counts (absent from snapshots published before them)
CROSSING_COLUMNS = ("n_quantile_steps", "n_crossed_steps")


def share_text(k: int, n: int) -> str:
    """k of n as a percent that never reads 0 for a crossing nor 100 for a miss."""
    share = 100 * k / n
    if k == 0:
        return "0 %"
    if share < 0.1:
        return "<0.1 %"
    if share >= 10:
        text = f"{share:.0f}"
        return f"{text if text != '100' or k == n else '99'} %"
    return f"{share:.1f} %"


def crossed_counts(group: pd.DataFrame) -> tuple[int, int, str]:
    """(crossed steps, quantile steps, the metric row read) of one system and perturbation:
    the mart repeats both counts on each metric row (null read as 0); the WQL row's
    where there is one, so the cells and sums trace to the same rows."""
    wql = group[group["metric"] == "wql"]
    row = (wql if len(wql) else group).iloc[0]
    counts = [0 if pd.isna(row[c]) else int(row[c]) for c in CROSSING_COLUMNS]
    return counts[1], counts[0], str(row["metric"])


def crossed_cell(group: pd.DataFrame, system: str, perturbation: str, num) -> str:  # noqa: ANN001
    """'k of n steps (p %)' for one system and perturbation, traceable to its mart row."""
    crossed, steps, metric = crossed_counts(group)
    if steps == 0:
        return "–"
    where = {"system_id": system, "perturbation_id": perturbation, "metric": metric}
    text = (
        num(float(crossed), "probabilistic_scores", "n_crossed_steps", where, integer=True)
        + " of "
        + num(float(steps), "probabilistic_scores", "n_quantile_steps", where, integer=True)
        + f" steps ({esc(share_text(crossed, steps))})"
    )
    return f"<b>{text}</b>" if crossed else text


def crossing_note(scores: pd.DataFrame, num: Callable[..., str]) -> str:
    """A sentence naming each system whose stored quantiles cross at some step, with its
    'k of n steps (p %)' over all perturbations (sums over one metric's rows: the mart
    repeats the counts on each), and what it means; '' when none cross."""
    named = []
    for system, group in scores.groupby("system_id", sort=True):
        per = [crossed_counts(g) for _, g in group.groupby("perturbation_id")]
        crossed, steps = sum(c for c, _, _ in per), sum(n for _, n, _ in per)
        if not crossed:
            continue
        where = {"system_id": system, "metric": per[0][2]}
        counts = [
            num(float(value), "probabilistic_scores", column, where, agg="sum", integer=True)
            for value, column in ((crossed, "n_crossed_steps"), (steps, "n_quantile_steps"))
        ]
        if len({m for _, _, m in per}) > 1:  # no one metric row per perturbation: untraced
            counts = [str(crossed), str(steps)]
        named.append(
            f"<b>{esc(system)}</b> {counts[0]} of {counts[1]} steps "
            f"({esc(share_text(crossed, steps))})"
        )
    if not named:
        return ""
    return (
        "<p>Crossed quantiles: at some forecast steps the stored q10 … q90 are not in "
        "non-decreasing order, in " + "; ".join(named) + " (over all perturbations; per "
        "perturbation in the column above). WQL, CRPS, MSIS and coverage score the "
        "quantiles as stored, as fev does (never re-sorted): crossing costs pinball loss "
        "and can shrink or invert the 10–90 % interval, so read those systems' scores "
        "and coverage with it (docs/probabilistic.md).</p>"
    )


def probabilistic_section(scores: pd.DataFrame, num: Callable[..., str]) -> str:
    """Mean WQL, CRPS, MSIS and 80 % coverage per system and perturbation
    (marts.probabilistic_scores); systems without quantile forecasts say why. When a
    system's stored quantiles cross at some step (n_crossed_steps; a snapshot without the
    column shows nothing), a column and a sentence say so."""
    parts = ['<section id="probabilistic"><h2>Probabilistic forecasts (quantiles 0.1–0.9)</h2>']
    if scores.empty:
        parts.append("<p>No probabilistic scores in this snapshot.</p></section>")
        return "".join(parts)
    crossing = set(CROSSING_COLUMNS) <= set(scores.columns) and bool(
        scores["n_crossed_steps"].fillna(0).gt(0).any()
    )
    rows = []
    for (system, perturbation), group in scores.groupby(["system_id", "perturbation_id"]):
        by_metric = group.set_index("metric")
        cells = [esc(system), esc(perturbation)]
        reason = None
        for metric in PROBABILISTIC_METRICS:
            if metric not in by_metric.index:
                cells.append("–")
                continue
            row = by_metric.loc[metric]
            where = {"system_id": system, "perturbation_id": perturbation, "metric": metric}
            cells.append(num(float_value(row["mean"]), "probabilistic_scores", "mean", where))
            reason = reason or (row["reason"] if isinstance(row["reason"], str) else None)
        if crossing:
            cells.append(crossed_cell(group, system, perturbation, num))
        cells.append(esc(reason or ""))
        rows.append(cells)
    header = ["System", "Perturbation", "WQL", "CRPS", "MSIS", "80 % coverage"]
    header += ["Crossed quantiles", "Note"] if crossing else ["Note"]
    parts.append(table_html(header, rows))
    if crossing:
        parts.append(crossing_note(scores, num))
    parts.append(
        '<p class="source">Source: <code>marts.probabilistic_scores</code> — means over windows; '
        "WQL as fev, CRPS from the 9 quantiles (price units), MSIS of the 10–90 % interval "
        "scaled like MASE, coverage ideal 0.8; per-level shares in "
        "<code>marts.quantile_calibration</code> (docs/probabilistic.md).</p></section>"
    )
    return "".join(parts)


def leaderboard_section(board: pd.DataFrame, num: Callable[..., str]) -> str:
    """fev's skill score and win rate (with block-bootstrap intervals) over all tasks, per
    error metric (marts.leaderboard, scope all)."""
    parts = ['<section id="leaderboard"><h2>Leaderboard (fev conventions)</h2>']
    board = board[board["scope"] == "all"] if not board.empty else board
    if board.empty:
        parts.append("<p>No leaderboard in this snapshot.</p></section>")
        return "".join(parts)
    for metric in LEADERBOARD_METRICS:
        block = board[board["metric"] == metric]
        if block.empty:
            continue
        block = block.sort_values("skill_score", ascending=False, na_position="last")
        rows = []
        for row in block.itertuples():
            where = {"scope": "all", "metric": metric, "system_id": row.system_id}
            rows.append(
                [
                    esc(row.system_id),
                    num(float_value(row.skill_score), "leaderboard", "skill_score", where),
                    num(
                        float_value(row.skill_score_lower),
                        "leaderboard",
                        "skill_score_lower",
                        where,
                    )
                    + " – "
                    + num(
                        float_value(row.skill_score_upper),
                        "leaderboard",
                        "skill_score_upper",
                        where,
                    ),
                    num(float_value(row.win_rate), "leaderboard", "win_rate", where),
                    num(float_value(row.average_rank), "leaderboard", "average_rank", where),
                    num(float_value(row.n_tasks), "leaderboard", "n_tasks", where, integer=True),
                    num(
                        float_value(row.num_failures),
                        "leaderboard",
                        "num_failures",
                        where,
                        integer=True,
                    ),
                    esc(row.reason if isinstance(row.reason, str) else ""),
                ]
            )
        parts.append(f"<h3>{esc(metric.upper())}</h3>")
        parts.append(dropped_line(block, metric, num))
        parts.append(order_note(block, metric, num))
        parts.append(
            table_html(
                [
                    "System",
                    "Skill score",
                    "95 % interval",
                    "Win rate",
                    "Mean rank",
                    "Tasks",
                    "Failures",
                    "Note",
                ],
                rows,
            )
        )
    # the baseline the mart divided by (var leaderboard_baseline), not always seasonal naive
    baselines = (
        sorted({str(b) for b in board["baseline_system_id"].dropna()})
        if "baseline_system_id" in board
        else []
    )
    baseline = esc(", ".join(baselines)) if baselines else "seasonal naive"
    parts.append(
        '<p class="source">Source: <code>marts.leaderboard</code> — a task is one ticker under '
        f"one perturbation; relative error vs {baseline} clipped to [0.01, 100]; skill score "
        "= 1 − geometric mean; intervals resample tickers. Read beside the L-level ratings "
        "above; <code>tsrate export --format fev</code> gives the same to fev.</p></section>"
    )
    return "".join(parts)


def discordant_pairs(block: pd.DataFrame) -> list[tuple[str, str]]:
    """(a, b) for each pair of one metric's ranked systems that the two orders disagree on:
    a has a higher win rate than b but a lower skill score (both strictly: a tie in either
    is no disagreement). In order of a's win rate, then b's (ties by system id)."""
    ranked = block.dropna(subset=["skill_score", "win_rate"])
    ranked = ranked.sort_values(["win_rate", "system_id"], ascending=[False, True])
    rows = list(ranked[["system_id", "win_rate", "skill_score"]].itertuples(index=False))
    return [
        (str(a.system_id), str(b.system_id))
        for i, a in enumerate(rows)
        for b in rows[i + 1 :]
        if a.win_rate > b.win_rate and a.skill_score < b.skill_score
    ]


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def order_note(block: pd.DataFrame, metric: str, num: Callable[..., str]) -> str:
    """A sentence when win rate and skill score order one metric's systems differently
    (:func:`discordant_pairs`), naming them, and why: win rate counts the tasks won against
    each other system, whatever the margin; skill score weighs each task by how much. The
    best system by win rate, when another has a higher skill score, with its rank there;
    else the first pair the orders disagree on. Empty when the orders agree."""
    pairs = discordant_pairs(block)
    if not pairs:
        return ""
    rows = block.dropna(subset=["skill_score", "win_rate"]).set_index("system_id")

    def value(system: str, column: str) -> str:
        where = {"scope": "all", "metric": metric, "system_id": system}
        return num(float(rows.loc[system, column]), "leaderboard", column, where)

    wins, skills = rows["win_rate"], rows["skill_score"]
    top_win = sorted(rows.index[wins == wins.max()])[0]  # ties: the first id
    above = skills > skills[top_win]
    said_pairs = 1
    if (above & (wins < wins[top_win])).any():  # the orders disagree on the best win rate
        said_pairs = sum(a == top_win for a, _ in pairs)
        leader = sorted(rows.index[skills == skills.max()])[0]
        said = (
            f"<b>{esc(top_win)}</b> has the best win rate ({value(top_win, 'win_rate')}) but "
            f"ranks {_ordinal(int(above.sum()) + 1)} on skill score "
            f"({value(top_win, 'skill_score')}; <b>{esc(leader)}</b> has the best, "
            f"{value(leader, 'skill_score')})"
        )
    else:
        a, b = pairs[0]
        said = (
            f"<b>{esc(a)}</b> has a higher win rate than <b>{esc(b)}</b> "
            f"({value(a, 'win_rate')} against {value(b, 'win_rate')}) but a lower skill score "
            f"({value(a, 'skill_score')} against {value(b, 'skill_score')})"
        )
    more = len(pairs) - said_pairs
    others = (
        f", and the orders disagree on {more} more pair{'s' if more > 1 else ''}" if more else ""
    )
    return (
        f"<p>Win rate and skill score order the systems differently: {said}{others}. Win "
        "rate counts the tasks a system wins against each other system, whatever the margin; "
        "skill score weighs each task by how much (the geometric mean of the errors relative "
        "to the baseline), so a system that wins many tasks narrowly and loses some badly "
        "ranks higher on win rate than on skill score.</p>"
    )


def dropped_line(block: pd.DataFrame, metric: str, num: Callable[..., str]) -> str:
    """A warning when scope ``all`` dropped tasks for every system because ranked systems
    lack them (fev's "drop"): it names those systems and their missing tasks, since every
    score in the table moved, and points to the per-perturbation scopes. Empty otherwise."""
    ranked = block.dropna(subset=["skill_score"])
    lacking = ranked[ranked["num_failures"].fillna(0) > 0]
    if lacking.empty:
        return ""
    tasks = ranked["n_tasks"].dropna()
    where = {"scope": "all", "metric": metric}
    who = ", ".join(
        f"<b>{esc(row.system_id)}</b> lacks "
        + num(
            float(row.num_failures),
            "leaderboard",
            "num_failures",
            where | {"system_id": row.system_id},
            integer=True,
        )
        for row in lacking.itertuples()
    )
    shared = (
        num(
            float(tasks.iloc[0]),
            "leaderboard",
            "n_tasks",
            where | {"system_id": ranked["system_id"].iloc[0]},
            integer=True,
        )
        if not tasks.empty
        else "the"
    )
    return (
        f"<p>⚠ Every system here is scored on only the {shared} tasks all "
        f'of them have: {who} (fev\'s missing_strategy "drop"), so every score moved. '
        "The per-perturbation scopes of <code>marts.leaderboard</code> (scope = a "
        "perturbation id) compare the systems on each perturbation they have.</p>"
    )


def leakage_cell(leakage: pd.DataFrame | None, system: str) -> str:
    """'k of n windows' in the system's training data (marts.window_leakage), or why unknown."""
    if leakage is None or leakage.empty or system not in set(leakage["system_id"]):
        return "–"
    row = leakage[leakage["system_id"] == system].iloc[0]
    if int(row["n_known"]) < int(row["n_windows"]):
        return esc(f"unknown: {row['leakage_reason']}")
    text = f"{int(row['n_flagged'])} of {int(row['n_windows'])} windows ({row['leakage_basis']})"
    return f"<b>{esc(text)}</b>" if int(row["n_flagged"]) else esc(text)


def setting_text(value: object) -> str:
    """One analysis setting as the report writes it: a list joined by commas, the confidence
    levels as 'confidence % (weight w)'."""
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and "confidence" in v for v in value):
            levels = [f"{100 * float(v['confidence']):g} % (weight {v['weight']})" for v in value]
            return ", ".join(levels)
        return ", ".join(str(v) for v in value)
    return str(value)


def citation_html(first: pd.Series) -> str:
    """What to cite (the study id, the run) and the build's analysis settings
    (``analysis_settings``: the dbt vars that change a rating, as the build resolved them);
    one line saying why for a snapshot built before they were recorded."""
    study = first.get("study_id")
    study_text = (
        f"study <code>{esc(study)}</code> (the id <code>tsrate studies</code> shows), "
        if isinstance(study, str)
        else ""
    )
    run = first.get("run_id")
    run_text = f"run <code>{esc(run)}</code>, " if isinstance(run, str) else ""
    cite = (
        f"<p>To cite these ratings: {study_text}{run_text}"
        "the tsrate version and git revision and the price fingerprint above, and the "
        "analysis settings below; a rerun with all of these reproduces every rating exactly "
        "and float means to about 1e-12 (DuckDB's parallel summation order).</p>"
    )
    raw = first.get("analysis_settings")
    if not isinstance(raw, str):
        return cite + (
            "<p>Analysis settings: not recorded in this snapshot (built before tsrate "
            "recorded them); rebuild with <code>tsrate build</code> to record them.</p>"
        )
    settings = json.loads(raw)
    items = "; ".join(
        f"<code>{esc(name)}</code> {esc(setting_text(value))}" for name, value in settings.items()
    )
    return cite + (
        '<p class="settings">Analysis settings of this build (dbt vars; '
        f"<code>--vars</code> overrides them for one build): {items}.</p>"
    )


def provenance_section(provenance: pd.DataFrame, leakage: pd.DataFrame | None = None) -> str:
    """The code, data and settings behind the run, per system (marts.run_provenance: what to
    cite and the analysis settings from its first row, the same on every row), and
    how many of its windows lie inside its training data (marts.window_leakage, summed per
    system: n_windows, n_flagged, n_known, leakage_basis, leakage_reason)."""
    parts = ['<section id="provenance"><h2>Provenance and training data</h2>']
    if provenance.empty:
        parts.append("<p>No provenance in this snapshot.</p></section>")
        return "".join(parts)
    first = provenance.iloc[0]
    revision = first["git_revision"] if isinstance(first["git_revision"], str) else None
    parts.append(
        f"<p>tsrate {esc(first['tsrate_version'])} at "
        f"{esc(revision or 'no git revision (' + str(first['git_reason']) + ')')}; dbt "
        f"{esc(first['dbt_version'])}, DuckDB {esc(first['duckdb_version'])}; "
        f"{esc(str(first['price_rows']))} price rows, fingerprint "
        f"<code>{esc(str(first['price_rows_fingerprint'])[:16])}</code>.</p>"
    )
    parts.append(citation_html(first))
    rows = []
    for row in provenance.sort_values("system_id").itertuples():
        statement = row.training_data if isinstance(row.training_data, str) else None
        cutoff = getattr(row, "training_cutoff", None)  # absent from older snapshots
        if statement and cutoff is not None and not pd.isna(cutoff):
            statement += f"; data up to {pd.Timestamp(cutoff).date()}"
        rows.append(
            [
                esc(row.system_id),
                esc(str(row.partitions)),
                f"<code>{esc(str(row.partitions_fingerprint)[:16])}</code>",
                esc(statement or f"unknown: {row.training_data_reason}"),
                leakage_cell(leakage, row.system_id),
            ]
        )
    parts.append(
        table_html(
            [
                "System",
                "Partitions",
                "Settings fingerprint",
                "Trained on",
                "Windows inside its training data",
            ],
            rows,
        )
    )
    parts.append(
        '<p class="source">Source: <code>marts.run_provenance</code>, '
        "<code>marts.window_leakage</code> (a window leaks when one of its target days is in "
        "the system's training data; exact for checkpoints tsrate trained).</p></section>"
    )
    return "".join(parts)
