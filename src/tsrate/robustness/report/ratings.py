"""The rating tables (Tables 5-6 with uncertainty): each rating, its raw score, its
bootstrap interval and share, flags shown in place, and the partial order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from tsrate.html.charts import esc
from tsrate.html.page import details
from tsrate.robustness.report.data import (
    ACCURACY_METRICS,
    METRIC_LABELS,
    OUTCOME_LABELS,
    PAPER_OUTCOME,
    ROBUSTNESS_METRICS,
    SHAKY_SHARE,
    ReportData,
)
from tsrate.robustness.report.numbers import (
    first_row,
    flag_html,
    is_shaky,
    num,
    provenance,
    row_groups,
    source_note,
    system_order,
    table_html,
    text_html,
)


def _partial_order(block: Sequence) -> str:
    """``a < b = c``: systems by ascending raw score (ties share a rank), ids only.

    ``block``: the rows of one metric x perturbation
    (:func:`~tsrate.robustness.report.numbers.row_groups`)."""
    parts, previous = [], None
    ranked = [row for row in block if not pd.isna(row.rank)]  # an uncomputed score has no rank
    for row in sorted(ranked, key=lambda row: (row.rank, row.system_id)):
        if previous is not None:
            parts.append(" = " if row.rank == previous else " &lt; ")
        parts.append(esc(row.system_id))
        previous = row.rank
    return "".join(parts)


def _stability_of(data: ReportData, metric: str, perturbation: str, system: str):
    """The rating_stability row at the published rating (column -> value), or None."""
    frame = data.stability
    if frame.empty:
        return None
    where = {"metric": metric, "perturbation_id": perturbation, "system_id": system}
    position = first_row(frame, where)
    if position is None:
        return None
    return {column: frame[column].iat[position] for column in frame.columns}


def separation_flag(
    data: ReportData, metric: str, perturbation: str, outcome: str | None = None
) -> str:
    """The robustness_scores flag of a metric x perturbation x outcome whose score does not
    separate systems on this study (every system at the same extreme or the same score):
    its ``separation_reason``, marked with ``separates_systems`` (false); "" otherwise."""
    outcome = data.default_outcome if outcome is None else outcome
    frame = data.separation
    if frame.empty:
        return ""
    position = first_row(
        frame, {"metric": metric, "perturbation_id": perturbation, "outcome": outcome}
    )
    if position is None or pd.isna(frame["separates_systems"].iat[position]):
        return ""
    if bool(frame["separates_systems"].iat[position]):
        return ""
    where = {
        "run_id": data.run_id,
        "metric": metric,
        "perturbation_id": perturbation,
        "outcome": outcome,
    }
    reason = (
        text_html(frame["separation_reason"].iat[position])
        or "does not separate systems on this study"
    )
    # the flag is the same on every system's row: max over them is that one value
    marks = provenance("robustness_scores", "separates_systems", where, 0.0, agg="max")
    return '<br><span class="flag-mark">⊘</span> ' + flag_html(
        "no-separation", reason, "robustness_scores", "separation_reason", where, **marks
    )


#: marks a cell whose rating reason is the row's, said once at the row's end
ROW_REASON_MARK = "†"


def shared_reason(block: Sequence) -> str | None:
    """The ``rating_reason`` every system of a metric x perturbation row shares (e.g. "all
    systems tied: ..."), when there are two or more systems; None otherwise."""
    reasons = {text_html(getattr(row, "rating_reason", None)) for row in block}
    if len(block) < 2 or len(reasons) != 1:
        return None
    return reasons.pop()


def row_reason(block: Sequence, where: Mapping[str, object]) -> str:
    """The shared ``rating_reason`` of a row, said once (in its partial-order cell) for all
    its systems, each cell marked † instead; "" when the systems' reasons differ."""
    reason = shared_reason(block)
    if reason is None:
        return ""
    key = {**where, "system_id": sorted(str(row.system_id) for row in block)}
    return f'<br><span class="flag-mark">{ROW_REASON_MARK}</span> every system: ' + flag_html(
        "rating-reason", reason, "ratings", "rating_reason", key
    )


def rating_notes(
    row, key: Mapping[str, object], shared: str | None = None, flat: bool = False
) -> str:
    """Under a rating: its ``rating_reason`` (a null rating, or one given by the score's
    absolute value; only † when it is the reason ``shared`` by the whole row, said once by
    :func:`row_reason`) and, when ``separable`` is false, its ``separation_reason``, unless
    the row is ``flat`` (its score separates no system, said once by ⊘ at the row's end)."""
    notes = ""
    reason = text_html(getattr(row, "rating_reason", None))
    if reason and reason == shared:
        notes += (
            f'<br><span class="flag-mark row-reason" title="{esc(reason)}">{ROW_REASON_MARK}</span>'
        )
    elif reason:
        notes += "<br>" + flag_html("rating-reason", reason, "ratings", "rating_reason", key)
    separable = getattr(row, "separable", None)
    if not flat and separable is not None and not pd.isna(separable) and not bool(separable):
        why = text_html(getattr(row, "separation_reason", None)) or "not separable"
        marks = provenance("ratings", "separable", key, 0.0)
        notes += '<br><span class="flag-mark">≈</span> ' + flag_html(
            "not-separable", why, "ratings", "separation_reason", key, **marks
        )
    return notes


def _rating_level(row, key: Mapping[str, object]) -> str:
    """The rating (coloured good to poor; grey 'no rating' when null) and the raw score."""
    rating = None if pd.isna(row.rating) else float(row.rating)
    if rating is None:
        tone = "none"
    else:
        levels = int(row.rating_levels)
        goodness = rating if row.higher_is_better else levels + 1 - rating
        tone = "good" if goodness == levels else ("poor" if goodness == 1 else "mid")
    return (
        f'<span class="rating {tone}">{num(rating, "ratings", "rating", key, integer=True)}'
        f"</span> {num(row.raw_score, 'ratings', 'raw_score', key)}"
    )


def rating_cell(
    data: ReportData,
    row,
    where: Mapping[str, object],
    shared: str | None = None,
    flat: bool = False,
) -> str:
    """One rating: the level (coloured), the raw score, its bootstrap interval and the share
    of resamples at the published level, flagged ⚠ when shaky (< SHAKY_SHARE); then its
    rating_reason († for the row's ``shared`` one) and, when not separable from another
    system, why (:func:`rating_notes`)."""
    key = {**where, "system_id": row.system_id}
    cell = _rating_level(row, key)
    notes = rating_notes(row, key, shared, flat)
    stable = _stability_of(data, row.metric, row.perturbation_id, row.system_id)
    if stable is None:
        return (
            cell + ' <span class="share missing" title="no rating_stability row">–</span>' + notes
        )
    at = {**key, "rating_level": int(stable["rating"])}
    interval = (
        f'<span class="ci">[{num(stable["ci_low"], "rating_stability", "ci_low", at)} – '
        f"{num(stable['ci_high'], 'rating_stability', 'ci_high', at)}]</span>"
    )
    share = num(stable["share"], "rating_stability", "share", at, percent=True)
    shaky = is_shaky(stable["share"])
    flag = (
        ' <span class="shaky-flag" title="shaky: under 60 % of resamples">⚠</span>' if shaky else ""
    )
    css = "share shaky" if shaky else "share"
    return f'{cell}<br>{interval} <span class="{css}">{share}{flag}</span>{notes}'


def metric_label(metric: str, block: Sequence) -> str:
    """A rating row's metric with its direction: ↓ (rating 1 is best), or, for a metric
    where higher is better (sign accuracy), ↑ and in words that its top rating is best, so
    the row does not read like its neighbours, where 1 is best."""
    label = esc(METRIC_LABELS.get(metric, metric))
    if not bool(block[0].higher_is_better):
        return f"{label} ↓"
    levels = block[0].rating_levels
    best = "L" if pd.isna(levels) else str(int(levels))
    return f'{label} ↑<br><span class="direction">higher is better; {best} is best</span>'


def rating_tables_section(data: ReportData) -> str:
    """Tables 5-6 with uncertainty: per metric and perturbation, each system's rating, raw
    score, bootstrap interval and the share of resamples at its rating (marts.ratings,
    marts.rating_stability), and the partial order."""
    ratings = data.ratings
    if ratings.empty:
        return '<section id="ratings"><h2>Ratings</h2><p>No ratings.</p></section>'
    systems = system_order(data)
    confidence = (
        f"{float(data.stability['confidence'].iloc[0]):.0%}" if not data.stability.empty else "95%"
    )
    parts = [
        '<section id="ratings"><h2>Ratings per metric and perturbation, in the shape of Tables 5–6</h2>'
    ]
    parts.append(rated_together_note(ratings))
    parts.append(
        "<p>Each cell: the rating (1 = lowest raw score, which is best for every metric except "
        "sign accuracy; colours show good green to poor red), the raw score, its "
        f"{esc(confidence)} bootstrap interval [low – high], and the share of bootstrap "
        "resamples (circular blocks of window dates) that give the system the same rating. "
        f"<b>⚠ marks a shaky rating</b>: under {SHAKY_SHARE:.0%} of resamples agree, so it "
        "rests on the particular windows of this study. Partial order: systems by ascending "
        "raw score, ties share a rank.</p>"
        f'<p class="note">Robustness ratings are for {_default_view(data)} '
        "unless labelled otherwise. <b>⊘</b> under a partial order: the score does not "
        "separate systems on this study (every system at the same extreme or the same score; "
        "<code>marts.robustness_scores.separates_systems</code>), so its ratings say nothing "
        "about which system is better. <b>≈</b> under a rating: the system is not separable "
        "from another on this score "
        "(<code>marts.ratings.separable</code>): for APE/PIE over several treatment draws, "
        "the scores differ by less than their spread over the draws; otherwise, the "
        f"{esc(confidence)} paired bootstrap interval of their difference (the same "
        "resampled window dates for both) includes 0 (not repeated in a row marked ⊘, whose "
        "score separates no system). A rating without a level (–) or "
        "rated by its distance from the ideal value shows why "
        "(<code>marts.ratings.rating_reason</code>); a reason every system of a row shares "
        f"is said once, at the row's end, and each of its cells is marked {ROW_REASON_MARK}."
        "</p>" + separation_summary(data)
    )
    if data.stability.empty:
        parts.append(
            '<p class="note">This snapshot has no <code>marts.rating_stability</code>: '
            "intervals and shares are missing.</p>"
        )
    else:
        judged = ratings.merge(
            data.stability[["metric", "perturbation_id", "system_id", "share"]],
            on=["metric", "perturbation_id", "system_id"],
        )
        shaky = judged[judged["share"].map(is_shaky)]
        noun = "rating" if len(judged) == 1 else "ratings"
        verb = "is" if len(shaky) == 1 else "are"
        parts.append(
            f'<p class="stability-summary"><b>{len(shaky)} of {len(judged)}</b> {noun} {verb} '
            f"shaky (fewer than {SHAKY_SHARE:.0%} of resamples at the published rating); "
            "each is marked ⚠ in its cell" + ".</p>"
        )
    blocks = row_groups(ratings, ("metric", "perturbation_id"))
    for family, metrics in (("Robustness", ROBUSTNESS_METRICS), ("Accuracy", ACCURACY_METRICS)):
        rows = []
        robust = family == "Robustness"
        for metric in metrics:
            for perturbation in sorted(p for m, p in blocks if m == metric):
                block = blocks[metric, perturbation]
                where = {"run_id": data.run_id, "metric": metric, "perturbation_id": perturbation}
                by_system = {row.system_id: row for row in block}
                shared = shared_reason(block)
                flag = separation_flag(data, metric, perturbation) if robust else ""
                rows.append(
                    [
                        metric_label(metric, block),
                        esc(perturbation),
                        *[
                            rating_cell(data, by_system[s], where, shared, flat=bool(flag))
                            if s in by_system
                            else "–"
                            for s in systems
                        ],
                        f'<span class="order">{_partial_order(block)}</span>'
                        + flag
                        + row_reason(block, where),
                    ]
                )
        if rows:
            outcome = OUTCOME_LABELS.get(data.default_outcome, data.default_outcome)
            heading = f"{family} — {outcome}" if robust else family
            parts.append(
                details(
                    f'<h3 style="display:inline">{esc(heading)}</h3> ({len(rows)} rows)',
                    table_html(
                        [
                            "Metric",
                            "P",
                            *[f"<code>{esc(s)}</code>" for s in systems],
                            "Partial order",
                        ],
                        rows,
                        css="ratings",
                    ),
                    open_=MAIN_TABLES_OPEN,  # read first; a wide one scrolls in its box
                )
            )
    parts.append(
        source_note(
            "ratings",
            "rating_stability",
            "robustness_scores",
            extra="the same orders as text: <code>marts.partial_orders</code>",
        )
    )
    parts.append(outcome_ratings_block(data))
    parts.append("</section>")
    return "".join(parts)


def _default_view(data: ReportData, short: bool = False) -> str:
    """How the text names the outcome of the default view: the paper's R^max, or the one a
    build chose with var robustness_outcome."""
    if data.default_outcome == PAPER_OUTCOME:
        return "the paper's outcome" if short else "the paper's outcome (R^max in price units)"
    label = OUTCOME_LABELS.get(data.default_outcome, data.default_outcome)
    return (
        f"the default outcome {esc(data.default_outcome)}"
        if short
        else f"the default outcome (var robustness_outcome), {esc(label)}"
    )


def rated_together_note(ratings: pd.DataFrame) -> str:
    """One paragraph: the study rated and the systems rated together (ratings are relative
    to that set); empty for a snapshot without marts.ratings.study_id."""
    if "study_id" not in ratings.columns or ratings.empty:
        return ""
    studies = sorted({str(v) for v in ratings["study_id"].dropna()})
    systems = sorted({str(v) for v in ratings["system_id"].dropna()})
    fewer = ""
    if "n_systems" in ratings.columns and int(ratings["n_systems"].min()) < len(systems):
        fewer = (
            f" Some metrics rate fewer (down to {int(ratings['n_systems'].min())}): see "
            "<code>marts.ratings.systems_rated_together</code>."
        )
    return (
        f'<p class="note">Study <code>{esc(", ".join(studies) or "?")}</code> '
        f"(<code>tsrate studies</code>): <b>{len(systems)} systems rated together</b> "
        f"({esc(', '.join(systems))}), from any run or import of the study, the newest per "
        "system. Ratings are relative to this set: adding or removing a system can move "
        f"them.{fewer}</p>"
    )


def separation_summary(data: ReportData) -> str:
    """One line counting the flags of the paper's outcome: scores that do not separate
    systems, ratings not separable from another system's (within their spread over draws,
    or a bootstrap interval of the difference that includes 0), ratings with a reason."""
    ratings, frame = data.ratings, data.separation
    flat = 0
    if not frame.empty:
        rated = set(zip(ratings["metric"], ratings["perturbation_id"], strict=True))
        paper = frame[
            (frame["outcome"] == data.default_outcome) & ~frame["separates_systems"].astype(bool)
        ]
        flat = sum(
            (m, p) in rated for m, p in zip(paper["metric"], paper["perturbation_id"], strict=True)
        )
    close = 0
    if "separable" in ratings.columns:
        close = int(
            ratings["separable"].map(lambda v: v is not None and not pd.isna(v) and not v).sum()
        )
    reasons = 0
    if "rating_reason" in ratings.columns:
        reasons = int(ratings["rating_reason"].map(lambda v: text_html(v) is not None).sum())
    return (
        f'<p class="separation-summary">Flags at {_default_view(data, short=True)}: '
        "metric × perturbation "
        f"scores that do not separate systems on this study (⊘): <b>{flat}</b>; ratings not "
        "separable from another system's, by the spread over treatment draws or the "
        "bootstrap interval of the difference (≈): "
        f"<b>{close}</b>; ratings with a rating reason: <b>{reasons}</b>.</p>"
    )


#: the default outcome's and the accuracy tables are shown open, whatever the number of
#: systems (the page's first reading); the other outcomes' tables are collapsed below them
MAIN_TABLES_OPEN = True


#: what the compact table of each other outcome shows
OUTCOME_NOTES = {
    "max_abs_residual": "The same metrics on the paper's outcome, R^max in price units (the "
    "build's default view is another outcome).",
    "": "The same metrics on a scale-free outcome, so that price levels do not decide WRS "
    "and APE (compare its ⊘ flags with the table above).",
    "wql": "The same metrics on each window's WQL: how a perturbation or a group changes the "
    "quality of the quantile forecasts (lower is better); systems without quantile "
    "forecasts are not rated, with the reason.",
    "coverage_error_80": "The same metrics on each window's |coverage of the 80 % interval − "
    "0.8|: how a perturbation or a group moves the interval away from calibration (lower is "
    "better); systems without quantile forecasts are not rated, with the reason.",
}


def outcome_ratings_block(data: ReportData) -> str:
    """The robustness ratings at the other outcomes (the scale-free R^max / price level), in
    a compact table: rating and raw score per system, flags and reasons as in the main one."""
    frame = data.outcome_ratings
    if frame.empty:
        return ""
    systems = system_order(data)
    systems += sorted(set(frame["system_id"]) - set(systems))
    parts = []
    blocks = row_groups(frame, ("outcome", "metric", "perturbation_id"))
    for outcome in sorted({o for o, _, _ in blocks}):
        rows = []
        for metric in ROBUSTNESS_METRICS:
            for perturbation in sorted(p for o, m, p in blocks if (o, m) == (outcome, metric)):
                block = blocks[outcome, metric, perturbation]
                where = {
                    "run_id": data.run_id,
                    "metric": metric,
                    "perturbation_id": perturbation,
                    "outcome": outcome,
                }
                by_system = {row.system_id: row for row in block}
                shared = shared_reason(block)
                flag = separation_flag(data, metric, perturbation, outcome)
                cells = []
                for system in systems:
                    row = by_system.get(system)
                    if row is None:
                        cells.append("–")
                        continue
                    key = {**where, "system_id": system}
                    notes = rating_notes(row, key, shared, flat=bool(flag))
                    cells.append(_rating_level(row, key) + notes)
                rows.append(
                    [
                        f"{esc(METRIC_LABELS.get(metric, metric))} ↓",
                        esc(perturbation),
                        *cells,
                        f'<span class="order">{_partial_order(block)}</span>'
                        + flag
                        + row_reason(block, where),
                    ]
                )
        if not rows:
            continue
        label = OUTCOME_LABELS.get(outcome, outcome)
        parts.append(
            details(
                f'<h3 class="outcome" data-outcome="{esc(outcome)}" style="display:inline">'
                f"Robustness — {esc(label)}</h3> (alternative outcome, {len(rows)} rows)",
                f'<p class="note">{esc(OUTCOME_NOTES.get(outcome, OUTCOME_NOTES[""]))} Rating '
                "and raw score only; bootstrap shares are computed for "
                f"{_default_view(data, short=True)}.</p>"
                + table_html(
                    ["Metric", "P", *[f"<code>{esc(s)}</code>" for s in systems], "Partial order"],
                    rows,
                    css="ratings outcome-ratings",
                )
                + source_note("ratings", "robustness_scores", extra=f"outcome = '{esc(outcome)}'"),
            )
        )
    if not parts:
        return ""
    return (
        '<p class="note alternatives">Alternative outcomes, collapsed below (click one to '
        "open): the same robustness metrics measured on outcomes other than "
        f"{_default_view(data, short=True)} rated above, to check whether price levels, "
        "quantile quality or calibration change the picture. Read the tables above first; "
        "the flags ⊘ and ≈ mark where an alternative does not separate systems.</p>"
        + "".join(parts)
    )
