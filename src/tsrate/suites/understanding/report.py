"""The understanding report: the paper's Figure 2 as absolute-scale profile charts and the
format table of its Table 4, in one offline HTML file that opens with a verdict.

:func:`profile_figure` draws scores on an ABSOLUTE 0-1 scale, as Figure 2 does (F1 or
accuracy 1 at the top, 0 at the bottom), from Vega-Lite (:mod:`tsrate.html.charts`), and
never from a cell of fewer than MIN_CHART_PROMPTS prompts (named under the chart).
:func:`write_report` reads the suite's marts (``und_*``) read-only and writes the HTML.
Where a suite run holds both prompting styles, every chart and table shows a chain-of-thought
system as its own entry (``<system> · cot``) and a section compares zero-shot with
chain-of-thought scores per system and task (:func:`prompting_table_html`).

The sections live beside this module (:mod:`.report_figures`, :mod:`.report_tables`,
:mod:`.report_prompting`); their functions stay importable from here.
"""

from __future__ import annotations

import html
from pathlib import Path

from tsrate.html.page import frame_table
from tsrate.platform.warehouse import connect
from tsrate.suites import intervals  # noqa: F401  (re-exported: tests patch its tests here)
from tsrate.suites.publishing import html_page, write_html
from tsrate.suites.understanding.report_figures import (  # noqa: F401  (re-exported)
    MIN_CHART_PROMPTS,
    TASK_ORDER,
    figure2,
    format_table_html,
    length_curve_charts,
    length_curve_table_html,
    profile_figure,
    with_pooled_wilson,
)
from tsrate.suites.understanding.report_prompting import (  # noqa: F401  (re-exported)
    CHANCE_SYSTEM,
    chance_table,
    chance_table_html,
    label_prompting,
    prompting_table_html,
)
from tsrate.suites.understanding.report_tables import (  # noqa: F401  (re-exported)
    NO_OPTION_ANSWERS,
    confusion_html,
    interval_table_html,
    position_bias_html,
    rated_scores_html,
    usable_table_html,
)
from tsrate.suites.understanding.snapshot import REBUILD, SnapshotReader
from tsrate.suites.verdict import not_rated_html, summary_table_html, verdict_html


def write_report(warehouse: Path, output: Path) -> Path:
    """Write the HTML report from the suite's marts; returns ``output``."""
    with connect(warehouse, read_only=True) as con:
        reader = SnapshotReader(con)
        read = reader.read
        scores = read("scores", "select * from {und_scores}", "und_scores")
        table = read("table", "select * from {und_format_table}", "und_format_table")
        # per series: the unit every pooled interval counts (absent from older snapshots)
        series = (
            read("series", "select * from {und_series_scores}", "und_series_scores")
            if "und_series_scores" in reader.columns
            else None
        )
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
            "avg(s.share_at_rating) as mean_share_at_rating, "
            # rated and not rated apart: the mean is over the rated features only (an
            # undefined score, "not rated: <why>", or a lone MAPE away from 0 has none)
            "count(*) - count(r.rating) as n_not_rated, "
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
        # share_mc_se and the intervals came later: an older snapshot lacks them; the
        # intervals let the verdict say when the best and worst do not separate
        judged = read(
            "judged",
            "select r.*, columns('^(share_(at_rating|mc_se)|ci_low|ci_high)$') "
            "from {und_ratings} r "
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
    against_chance = chance_table_html(scores, series, confusion)
    curves = with_pooled_wilson(curves, series)  # pooled over formats: counting series
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
        not_rated_html(judged),
        against_chance,
        f"<p>Suite run: {html.escape(', '.join(suite_runs) or 'none')}. Charts: the csv "
        "format; scores on an absolute 0-1 scale (paper Figure 2).</p>",
        "<p>References, not models: und_analyst reads the series back out of the prompt's "
        "own table and applies standard statistics (on retrieval and min/max all but an "
        "oracle: an upper bound); und_random answers at chance.</p>",
        *figure2(scores),
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
        "<p>Accuracy: Wilson interval; F1 and MAPE: percentile bootstrap over series. "
        "Mean over features and formats of each cell's score and of each cell's interval "
        "ends: a guide to how wide a cell's interval is, not an interval of the mean; the "
        "interval of each rated score is in the ratings section below.</p>",
        note("scores", interval_table_html(scores)),
        "<h2>Position bias (two-proportion test per quadrant, Holm-corrected)</h2>",
        note("bias", position_bias_html(bias)),
        "<h2>Accuracy by series length (paper Figure 3)</h2>",
        "<p>Prompts pooled over feature datasets and formats; each bar a 30-day bin of "
        "lengths, with the Wilson 95 % interval of its pooled prompts, counting series: a "
        "series is asked in every format, so the interval is on the effective counts of its "
        "series (Rao-Scott design effect; tooltip and the table below; und_length_curves "
        "holds each dataset and format's own, accuracy_ci_low / _high).</p>",
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
        "is false (errors), the worst where it is true (there the top level is best; levels "
        "fill from the best end either way), so compare ratings within a metric, "
        "never averaged over metrics. n_rated: the features the mean rating is over; "
        "n_not_rated: the features without a rating, left out of it (an undefined score, "
        "listed under 'Not rated' with its reason, or e.g. a lone MAPE away from 0). "
        "mean_share_at_rating: share of series resamples (each series with all its "
        "prompts) that "
        "give the published rating (1 = firm).</p>",
        note("ratings", frame_table(ratings) if not ratings.empty else "<p>none</p>"),
        "<p>Each rated score (mean over formats) with the percentile 95 % interval of the "
        "same series resamples.</p>",
        rated_note,
        note("rated", rated_scores_html(rated)),
    ]
    return write_html(output, html_page("tsrate understanding", "".join(sections)))
