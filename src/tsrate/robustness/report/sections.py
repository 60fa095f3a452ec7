"""The report's text sections: the verdict, the study, and Table 2 (means per system and
perturbation). Each is a function of :class:`ReportData` returning HTML."""

from __future__ import annotations

import math

import pandas as pd

from tsrate.html.charts import esc
from tsrate.html.page import named, section
from tsrate.robustness.report import coverage
from tsrate.robustness.report.data import (
    ACCURACY_METRICS,
    METRIC_LABELS,
    ROBUSTNESS_METRICS,
    SHAKY_SHARE,
    ReportData,
)
from tsrate.robustness.report.numbers import (
    display_names,
    first_row,
    format_number,
    is_shaky,
    num,
    perturbation_order,
    row_groups,
    source_note,
    system_order,
    table_html,
    withdrawn_reason,
)


def biased_note(data: ReportData, rated: list[str], tickers: list[str]) -> str:
    """Under the systems: what the Biased baseline is (the paper's S_b, the actual future
    plus a per-company offset), so that its perfect score on a company with offset 0 and
    its near-100 % sign accuracy are not read as a model's merit; "" when it is not rated."""
    if "biased" not in rated:
        return ""
    companies = data.companies
    zero = []
    if not companies.empty and "biased_offset" in companies.columns:
        offsets = companies[companies["ticker"].isin(tickers)]
        zero = sorted(str(t) for t in offsets.loc[offsets["biased_offset"] == 0, "ticker"])
    at_zero = (
        f"{esc(', '.join(zero))} {'has' if len(zero) == 1 else 'have'} offset 0 in "
        "<code>seeds.companies</code>, so there it is the actual future itself (residual 0, "
        "SMAPE 0)"
        if zero
        else "a company with offset 0 gets the actual future itself (residual 0, SMAPE 0)"
    )
    return (
        '<p class="note biased-note"><b><code>biased</code> is the truth plus an offset, not a '
        "model.</b> It is the paper's S_b: the actual future plus a fixed per-company offset "
        "(<code>biased_offset</code>), built to be maximally biased between companies. "
        f"{at_zero}; and as it moves exactly as the actuals move, its sign accuracy is near "
        "100 % on every company. Its top sign-accuracy ratings (and any skill it shows) come "
        "from peeking at the truth by design, not from forecasting.</p>"
    )


def study_section(data: ReportData) -> str:
    """The study: data, period, window shape, companies, systems, perturbations, and gaps."""
    study = data.study
    tickers = list(study.get("tickers", []))
    companies = data.companies
    if not companies.empty:
        companies = companies[companies["ticker"].isin(tickers)]
    company_rows = []
    for ticker in tickers:
        row = companies[companies["ticker"] == ticker] if not companies.empty else pd.DataFrame()
        name = row["company_name"].iloc[0] if not row.empty else "(not in the companies seed)"
        industry = row["industry"].iloc[0] if not row.empty else ""
        windows = data.windows[data.windows["ticker"] == ticker]
        n_windows = (
            num(
                float(windows["n_windows"].iloc[0]),
                "window_errors",
                "window_end_date",
                {"run_id": data.run_id, "ticker": ticker},
                agg="count_distinct",
                integer=True,
            )
            if not windows.empty
            else "0"
        )
        company_rows.append([esc(ticker), esc(name), esc(industry), n_windows])
    rated = system_order(data)
    systems = data.systems.set_index("system_id") if not data.systems.empty else pd.DataFrame()
    system_rows = []
    for system_id in rated:
        info = systems.loc[system_id] if system_id in systems.index else None

        def field(name: str, info=info) -> str:
            if info is None or pd.isna(info.get(name)):
                return ""
            return esc(info.get(name))

        system_rows.append(
            [
                f"<code>{esc(system_id)}</code>",
                field("display_name"),
                field("paper_symbol"),
                field("modality"),
                field("family"),
                field("purpose"),
                field("architecture"),
                field("is_foundation_model"),
            ]
        )
    unavailable_rows = []
    requested = list(study.get("systems", []))
    for system_id in requested:
        if system_id not in rated:
            why = withdrawn_reason(data.withdrawn.get(system_id))
            unavailable_rows.append(
                [
                    f"<code>{esc(system_id)}</code>",
                    why or "in this study but has no ratings in the run",
                ]
            )
    if not data.systems.empty:
        empty = data.systems["implementation"].isna() | (
            data.systems["implementation"].astype(str).str.strip() == ""
        )
        for row in data.systems[empty].itertuples():
            if row.system_id in rated:
                continue  # rated from imported predictions
            why = withdrawn_reason(data.withdrawn.get(row.system_id))
            unavailable_rows.append(
                [
                    f"<code>{esc(row.system_id)}</code> ({esc(row.display_name)})",
                    why or f"not runnable in this version: {esc(row.description)}",
                ]
            )
        for row in data.systems[~empty].itertuples():
            if row.system_id in rated or row.system_id in requested:
                continue
            unavailable_rows.append(
                [
                    f"<code>{esc(row.system_id)}</code> ({esc(row.display_name)})",
                    "not in this study (var systems; <code>tsrate systems</code> says whether it "
                    f"can run here): {esc(row.description)}",
                ]
            )
    perturbation_rows = []
    studied = set(study.get("perturbations", []))
    rated_perturbations = set(perturbation_order(data))
    takes_images = False
    if not data.systems.empty:
        takes_images = bool(
            data.systems[data.systems["system_id"].isin(rated)]["modality"]
            .astype(str)
            .str.contains("image")
            .any()
        )
    for row in data.perturbations.itertuples() if not data.perturbations.empty else []:
        if row.perturbation_id in rated_perturbations:
            status = "rated"
        elif row.perturbation_id in studied:
            status = "in the study but not rated"
        elif row.modality == "image" and not takes_images:
            status = "unavailable: acts on image inputs, and no rated system takes images"
        else:
            status = "not in this study (var perturbations)"
        perturbation_rows.append(
            [
                esc(row.perturbation_id),
                esc(row.name),
                esc(row.family),
                esc(row.modality),
                esc(row.description),
                esc(status),
            ]
        )
    shape = (
        f"context n = {esc(study.get('context_length', '?'))} trading days, horizon d = "
        f"{esc(study.get('horizon', '?'))}, stride {esc(study.get('stride', '?'))}, "
        f"perturbation phase {esc(study.get('perturbation_phase', '?'))}, seed "
        f"{esc(study.get('seed', '?'))}"
    )
    parts = [
        '<section id="study"><h2>The study</h2>',
        f"<p>Run <code>{esc(data.run_id)}</code>, published {esc(data.published_at[:19])} UTC to "
        f"<code>{esc(data.snapshot_name)}</code>. Daily closing prices of "
        f"{len(tickers)} companies, study period {esc(study.get('start', '?'))} to "
        f"{esc(study.get('end', '?'))}; {shape}. A window is named by its last context day "
        "(the forecast origin); the target is always the clean future.</p>",
        "<h3>Companies</h3>",
        table_html(["Ticker", "Company", "Industry", "Windows"], company_rows),
        source_note(
            "window_errors", extra="windows per ticker; names from <code>seeds.companies</code>"
        ),
        "<h3>Systems rated</h3>",
        table_html(
            [
                "System",
                "Name",
                "Paper",
                "Modality",
                "Family",
                "Purpose",
                "Architecture",
                "Foundation",
            ],
            system_rows,
        ),
        source_note("ratings", extra="metadata from <code>marts.system_catalog</code>"),
        biased_note(data, rated, tickers),
        "<h3>Systems not rated in this run</h3>",
        table_html(["System", "Why"], unavailable_rows)
        if unavailable_rows
        else "<p>Every system of the seed was rated.</p>",
        '<p class="source">Source: <code>seeds.systems</code> (empty <code>implementation</code>) '
        "and the run's study.</p>",
        "<h3>Perturbations</h3>",
        table_html(
            ["Id", "Name", "Family", "Modality", "What it does", "In this run"], perturbation_rows
        ),
        '<p class="source">Source: <code>seeds.perturbations</code>, <code>marts.ratings</code>.</p>',
        "</section>",
    ]
    return "".join(parts)


def fewer_mark(fewer: dict[str, tuple[str, str]], system: str) -> str:
    """' P0 only' with its tooltip beside a system rated on fewer perturbations
    (:func:`.coverage.fewer_marks`); '' for the others."""
    if system not in fewer:
        return ""
    mark, tip = fewer[system]
    return f' <small class="partial" title="{esc(tip)}">{esc(mark)}</small>'


def summary_section(data: ReportData) -> str:
    """Table 2: each metric averaged per system and per perturbation, as two tables (rows:
    metrics; columns: systems, perturbations); the best value of each row in bold."""
    summary, per_perturbation = data.system_summary, data.perturbation_summary
    if summary.empty:
        return ""
    systems = [s for s in system_order(data) if s in set(summary["system_id"])]
    systems += sorted(set(summary["system_id"]) - set(systems))
    perturbations = (
        sorted(set(per_perturbation["perturbation_id"])) if not per_perturbation.empty else []
    )
    fewer = coverage.fewer_marks(data)
    system_rows, perturbation_rows = [], []
    systems_of = row_groups(summary, ("metric",))
    perturbations_of = row_groups(per_perturbation, ("metric",))
    for metric in (*ROBUSTNESS_METRICS, *ACCURACY_METRICS):
        by_system = systems_of.get((metric,), [])
        if not by_system:
            continue
        higher = bool(by_system[0].higher_is_better)
        label = esc(METRIC_LABELS.get(metric, metric)) + (" ↑" if higher else " ↓")
        run = {"run_id": data.run_id, "metric": metric}

        def cells(rows, key, names, mart, run=run, higher=higher):
            values = {
                getattr(r, key): r.avg_raw_score for r in rows if not pd.isna(r.avg_raw_score)
            }
            best = (max if higher else min)(values.values()) if values else None
            out = []
            for name in names:
                if name not in values:
                    out.append("–")
                    continue
                text = num(values[name], mart, "avg_raw_score", {**run, key: name})
                out.append(f'<b class="best">{text}</b>' if values[name] == best else text)
            return out

        system_rows.append([label, *cells(by_system, "system_id", systems, "system_summary")])
        by_perturbation = perturbations_of.get((metric,), [])
        perturbation_rows.append(
            [
                label,
                *cells(by_perturbation, "perturbation_id", perturbations, "perturbation_summary"),
            ]
        )
    return (
        '<section id="summary"><h2>Comparison across systems and perturbations, in the shape of Table 2</h2>'
        "<p>Plain means of the raw scores (↓ lower is better, ↑ higher is better); the best "
        "of each row in bold.</p><h3>Per system (mean over perturbations)</h3>"
        + table_html(
            ["Metric", *[f"<code>{esc(s)}</code>" + fewer_mark(fewer, s) for s in systems]],
            system_rows,
            css="table2",
        )
        + source_note("system_summary")
        + "<h3>Per perturbation (mean over systems)</h3>"
        + table_html(["Metric", *map(esc, perturbations)], perturbation_rows, css="table2")
        + source_note("perturbation_summary")
        + "</section>"
    )


def _mean_robustness(data: ReportData) -> tuple[pd.Series, list[str]]:
    """Each system's mean avg_rating over the robustness metrics (ascending: best first)."""
    summary = data.system_summary
    robustness = (
        summary[summary["metric"].isin(ROBUSTNESS_METRICS)] if not summary.empty else summary
    )
    if robustness.empty:
        return pd.Series(dtype=float), []
    means = robustness.groupby("system_id")["avg_rating"].mean().dropna()
    order = {s: i for i, s in enumerate(system_order(data))}
    ranked = sorted(means.index, key=lambda s: (means[s], order.get(s, len(order)), s))
    return means.loc[ranked], sorted(set(robustness["metric"]))


def alike_rows(data: ReportData, metrics: list[str]) -> tuple[list[tuple[str, str]], int]:
    """(the robustness rows, metric x perturbation of two or more rated systems, that give
    every system the same rating, in order; how many such rows of two or more there are)."""
    ratings = data.ratings
    if ratings.empty:
        return [], 0
    rated = ratings[ratings["metric"].isin(metrics) & ratings["rating"].notna()]
    per = rated.groupby(["metric", "perturbation_id"])["rating"].agg(["nunique", "size"])
    rows = per[per["size"] >= 2]
    return sorted(rows.index[rows["nunique"] == 1]), len(rows)


def _alike_rows_sentence(data: ReportData, metrics: list[str]) -> list[str]:
    """A sentence when some robustness rows rate every system alike: they do not separate
    the systems, add the same level to every mean and so narrow the gap the means show."""
    alike, rows = alike_rows(data, metrics)
    if not alike:
        return []
    shown = ", ".join(f"{esc(m)} on {esc(p)}" for m, p in alike[:3])
    more = f" and {len(alike) - 3} more" if len(alike) > 3 else ""
    count = derived("alike_rows", float(len(alike)), str(len(alike)))
    return [
        f"{count} of the {rows} robustness rows (metric × perturbation) rate every system "
        f"alike ({shown}{more}): they do not separate the systems, and they narrow the gap "
        "between the means."
    ]


def identical_systems_sentence(data: ReportData) -> list[str]:
    """A sentence naming the pairs of systems whose forecasts are the same on every window
    both forecast (data.identical_pairs, from marts.forecast_traces): they are rated alike by
    construction (the same predictions under two ids, or an import of a built-in system's
    forecasts), so their equal ratings say nothing about two models."""
    pairs = data.identical_pairs
    if not pairs:
        return []
    shown = "; ".join(f"<b>{esc(a)}</b> and <b>{esc(b)}</b>" for a, b, _ in pairs[:3])
    rest = len(pairs) - 3
    more = f" and {rest} more pair{'s' if rest > 1 else ''}" if rest > 0 else ""
    which = "These systems" if len(pairs) > 1 else "Two systems"
    return [
        f"{which} made the same forecasts on every window both forecast (equal to 1e-9 "
        f"relative, <code>marts.forecast_traces</code>), so they cannot be told apart and "
        f"are rated alike: {shown}{more}; if one is a copy, <code>tsrate withdraw</code> "
        "takes it out of the study."
    ]


def shaky_counts(data: ReportData) -> pd.DataFrame:
    """Per system: its published ratings (n_ratings) and how many are shaky (n_shaky)."""
    if data.stability.empty or data.ratings.empty:
        return pd.DataFrame(columns=["system_id", "n_ratings", "n_shaky"])
    judged = data.ratings.merge(
        data.stability[["metric", "perturbation_id", "system_id", "share"]],
        on=["metric", "perturbation_id", "system_id"],
    )
    judged = judged.assign(shaky=judged["share"].map(is_shaky))
    return (
        judged.groupby("system_id")
        .agg(n_ratings=("shaky", "size"), n_shaky=("shaky", "sum"))
        .reset_index()
    )


def derived(name: str, value: float, text: str) -> str:
    """A number computed from several mart values (a gap, a count): ``data-derived`` names
    it; the browser test recomputes it from the snapshot."""
    return f'<span class="derived" data-derived="{esc(name)}" data-value="{value!r}">{esc(text)}</span>'


def _separation(data: ReportData, metric: str, top: str, runner: str) -> tuple[str, str] | None:
    """How the leaderboard's skill scores for ``metric`` (95 % block-bootstrap intervals over
    tickers, all perturbations; higher is better) place ``top`` against ``runner``: ``ahead``
    (the intervals do not overlap, top's higher), ``behind`` (they do not overlap, runner's
    higher: the per-task geometric mean disagrees with the mean score) or ``overlap``; and
    the two intervals as text, each bound traced to its mart cell. None without the rows."""
    board = data.leaderboard
    if board.empty or not {"scope", "metric", "skill_score_lower"} <= set(board.columns):
        return None
    rows = board[(board["scope"] == "all") & (board["metric"] == metric)].set_index("system_id")
    if top not in rows.index or runner not in rows.index:
        return None
    bounds = rows.loc[[top, runner], ["skill_score_lower", "skill_score_upper"]]
    if bounds.isna().any().any():
        return None

    def interval(system: str) -> str:
        where = {"run_id": data.run_id, "scope": "all", "metric": metric, "system_id": system}
        low, high = (float(rows.loc[system, c]) for c in ("skill_score_lower", "skill_score_upper"))
        return (
            f"[{num(low, 'leaderboard', 'skill_score_lower', where)}, "
            f"{num(high, 'leaderboard', 'skill_score_upper', where)}]"
        )

    (a_low, a_high), (b_low, b_high) = bounds.to_numpy().tolist()
    place = "ahead" if a_low > b_high else "behind" if b_low > a_high else "overlap"
    return place, f"{interval(top)} vs {interval(runner)}"


def _versus(place: str, other: str, label: str) -> str:
    """The clause comparing the lowest mean score with the runner-up's (``other``)."""
    return {
        "ahead": f"clearly ahead of {other}: their {label} skill scores' 95 % intervals "
        "in the leaderboard do not overlap",
        "behind": f"yet the leaderboard ranks {other} ahead: their {label} skill scores' "
        "95 % intervals (per task, relative to the baseline) do not overlap",
        "overlap": f"but not separably from {other}: their {label} skill scores' 95 % "
        "intervals in the leaderboard overlap",
    }[place]


def _compared(data: ReportData, metric: str) -> tuple[pd.DataFrame, list[str] | None, str]:
    """The systems' mean raw ``metric``, lowest first, as the verdict compares them
    (:func:`.coverage.compared_means`): from ``system_summary`` when every system is rated
    on the same perturbations (None); else over the perturbations every compared system is
    rated on (their ids), with the sentence that says so and names each system rated on
    fewer (:mod:`.coverage`)."""
    means, shared, left_out = coverage.compared_means(data, metric)
    if not shared:
        return means, None, ""
    fewer = coverage.partial_systems(coverage.rated_perturbations(data, [metric]))
    which = "perturbation" if len(shared) == 1 else "perturbations"
    said = [
        f"<b>{esc(s)}</b> was rated on {esc(coverage.named_perturbations(p))}"
        for s, p in fewer.items()
        if s not in left_out
    ]
    if left_out:
        said.append(f"{named(left_out)} shares none of them and is not compared")
    text = (
        f"Accuracy is compared on the {which} every system is rated on, "
        f"{esc(' '.join(shared))}, since {'; '.join(said)}. "
    )
    return means, shared, text


def verdict_section(data: ReportData) -> str:
    """The verdict, first on the page: the most and least robust systems and by how much
    (systems with the same mean rating are named together as a tie; when every system
    has it, the verdict says the ratings do not separate them), the most and least
    accurate by SMAPE (and whether the leaderboard separates the lowest from the
    runner-up), the lowest MASE likewise, and how firm the leaders' ratings are."""
    means, metrics = _mean_robustness(data)
    run = {"run_id": data.run_id}
    if means.empty:
        return section("verdict", "Verdict", "<p>No ratings in this run.</p>")

    def rating_of(system: str) -> str:
        where = {**run, "system_id": system, "metric": metrics}
        return num(float(means[system]), "system_summary", "avg_rating", where, agg="avg")

    levels = num(
        float(data.system_summary["rating_levels"].max()),
        "system_summary",
        "rating_levels",
        run,
        agg="max",
        integer=True,
    )
    best, worst = means.index[0], means.index[-1]
    # means of a few small rating levels: equal ones are equal fractions, up to rounding
    leaders = [s for s in means.index if math.isclose(means[s], means[best], abs_tol=1e-9)]
    laggards = [s for s in means.index if math.isclose(means[s], means[worst], abs_tol=1e-9)]
    scale = f"on a 1 (best) to {levels} scale"
    # a system rated on fewer perturbations (an import may leave some out) has its mean over
    # fewer ratings: the sentence says over what, and names it with its own counts
    fewer = coverage.fewer_robustness(data, [s for s in means.index if s in {*leaders, *laggards}])
    over = (
        f"over {len(metrics)} robustness metrics and the perturbations"
        if not fewer
        else f"over the robustness metrics and perturbations each is rated on, {len(metrics)} "
        "metrics for a system rated on every perturbation"
    )
    sentences = []
    if len(means) == 1:
        sentences.append(
            f"Only <b>{esc(best)}</b> is rated in this run (mean robustness rating "
            f"{rating_of(best)} {scale}): there is nothing to compare."
        )
    elif len(leaders) == len(means):
        sentences.append(
            f"All {len(means)} rated systems have the same mean robustness rating "
            f"({rating_of(best)} {scale}, {over}): the ratings do not separate them."
        )
    else:
        gap = float(means[worst] - means[best])
        most = (
            f"{named(leaders)} is the most robust"
            if len(leaders) == 1
            else f"{named(leaders)} tie as the most robust"
        )
        least = (
            f"{named(laggards)} the least"
            if len(laggards) == 1
            else f"{named(laggards)} tie as the least"
        )
        sentences.append(
            f"Of {len(means)} rated systems, {most} (mean robustness rating {rating_of(best)} "
            f"{scale}, {over}) and {least} ({rating_of(worst)}): a gap of "
            + derived("robustness_gap", gap, format_number(gap))
            + " rating levels."
        )
        sentences.extend(_alike_rows_sentence(data, metrics))
    sentences.extend(identical_systems_sentence(data))
    sentences.extend(fewer)

    ordered, smape_on, compared_on = _compared(data, "smape")

    def mean_of(row, metric: str) -> str:
        where = {**run, "system_id": row.system_id, "metric": metric}
        on = smape_on if metric == "smape" else mase_on
        if on is None:  # every system rated on the same perturbations: the summary's mean
            return num(float(row.avg_raw_score), "system_summary", "avg_raw_score", where)
        where = where | {"perturbation_id": on}
        return num(float(row.avg_raw_score), "ratings", "raw_score", where, agg="avg")

    if len(ordered) >= 2:
        top, bottom, runner = ordered.iloc[0], ordered.iloc[-1], ordered.iloc[1]
        separation = _separation(data, "smape", top.system_id, runner.system_id)
        lowest = (
            f"{compared_on}By accuracy, <b>{esc(top.system_id)}</b> has the lowest mean SMAPE "
            f"({mean_of(top, 'smape')})"
        )
        highest = f"<b>{esc(bottom.system_id)}</b>"
        if separation is None:
            sentences.append(f"{lowest} and {highest} the highest ({mean_of(bottom, 'smape')}).")
        else:
            place, intervals = separation
            other = f"<b>{esc(runner.system_id)}</b> ({mean_of(runner, 'smape')})"
            sentences.append(
                f"{lowest}, {_versus(place, other, 'SMAPE')} ({intervals}); {highest} has the "
                f"highest ({mean_of(bottom, 'smape')})."
            )
    by_mase, mase_on, _ = _compared(data, "mase")
    if len(by_mase) >= 2:  # the scale-free error can order the leaders differently
        top, runner = by_mase.iloc[0], by_mase.iloc[1]
        too = " too" if len(ordered) >= 2 and ordered.iloc[0].system_id == top.system_id else ""
        on = f" (on {esc(' '.join(mase_on))})" if mase_on is not None else ""
        lowest = (
            f"By MASE{on}, <b>{esc(top.system_id)}</b> has the lowest mean{too} "
            f"({mean_of(top, 'mase')})"
        )
        separation = _separation(data, "mase", top.system_id, runner.system_id)
        if separation is None:
            sentences.append(f"{lowest}.")
        else:
            place, intervals = separation
            other = f"<b>{esc(runner.system_id)}</b> ({mean_of(runner, 'mase')})"
            sentences.append(f"{lowest}, {_versus(place, other, 'MASE')} ({intervals}).")
    counts = shaky_counts(data)
    if counts.empty:
        sentences.append(
            "How firm these ratings are is unknown: the snapshot has no bootstrap shares "
            "(<code>marts.rating_stability</code>)."
        )
    else:
        mine = counts[counts["system_id"].isin(leaders)]
        total, shaky = int(counts["n_ratings"].sum()), int(counts["n_shaky"].sum())
        if not mine.empty:
            n, k = int(mine["n_ratings"].sum()), int(mine["n_shaky"].sum())
            whose, each = f"{esc(best)}'s", ""
            if len(leaders) > 1:
                whose = "the leaders'"
                per_leader = mine.set_index("system_id")
                each = ", ".join(  # in the order the sentence before named the leaders
                    f"{esc(s)} {int(per_leader.loc[s, 'n_shaky'])} of "
                    f"{int(per_leader.loc[s, 'n_ratings'])}"
                    for s in leaders
                    if s in per_leader.index
                )
                each += "; "
            sentences.append(
                f"How firm: {derived('leader_shaky', float(k), str(k))} of {whose} "
                f"{derived('leader_ratings', float(n), str(n))} "
                f"{'rating' if n == 1 else 'ratings'} {'is' if k == 1 else 'are'} shaky "
                f"({each}under "
                f"{SHAKY_SHARE:.0%} of bootstrap resamples of the window dates give the "
                f"published level), and {derived('shaky', float(shaky), str(shaky))} of all "
                f"{derived('ratings', float(total), str(total))}; ⚠ marks each one in the "
                "tables below."
            )
    body = (
        '<p class="verdict">'
        + " ".join(sentences)
        + "</p>"
        + source_note(
            *(
                ("system_summary", "rating_stability")
                if smape_on is None and mase_on is None
                else ("system_summary", "ratings", "rating_stability")
            ),
            extra="hover a number to see the mart row it comes from",
        )
    )
    return section("verdict", "Verdict", body)


def overview_section(data: ReportData) -> str:
    """One row per system, best first: mean robustness rating, mean SMAPE, MASE and sign
    accuracy, and its shaky ratings; the per-metric detail is in the rating tables."""
    means, metrics = _mean_robustness(data)
    summary = data.system_summary
    if means.empty:
        return ""
    names = display_names(data)
    counts = shaky_counts(data).set_index("system_id")
    fewer = coverage.fewer_marks(data)
    run = {"run_id": data.run_id}
    rows = []
    shown: dict[str, int] = {}  # equal means share the first one's rank, as the verdict ties them
    for rank, system in enumerate(means.index, start=1):
        tied = [s for s in shown if math.isclose(means[s], means[system], abs_tol=1e-9)]
        shown[system] = shown[tied[0]] if tied else rank
        cells = [
            str(shown[system]),
            f"<code>{esc(system)}</code>" + fewer_mark(fewer, system),
            esc(names.get(system, "") if isinstance(names.get(system), str) else ""),
            num(
                float(means[system]),
                "system_summary",
                "avg_rating",
                {**run, "system_id": system, "metric": metrics},
                agg="avg",
            ),
        ]
        for metric in ACCURACY_METRICS:
            position = first_row(summary, {"system_id": system, "metric": metric})
            value = None if position is None else summary["avg_raw_score"].iat[position]
            cells.append(
                num(
                    None if value is None or pd.isna(value) else float(value),
                    "system_summary",
                    "avg_raw_score",
                    {**run, "system_id": system, "metric": metric},
                )
            )
        if system in counts.index:
            k, n = int(counts.loc[system, "n_shaky"]), int(counts.loc[system, "n_ratings"])
            cells.append(f"{k} of {n}" + (" ⚠" if k else ""))
        else:
            cells.append("–")
        rows.append(cells)
    header = [
        "Rank",
        "System",
        "Name",
        "Robustness rating (mean, 1 = best)",
        *[
            f"{esc(METRIC_LABELS.get(m, m))} (mean) {'↑' if m == 'sign_accuracy' else '↓'}"
            for m in ACCURACY_METRICS
        ],
        "Shaky ratings",
    ]
    body = (
        "<p>Systems ranked by their mean robustness rating (each robustness metric's rating "
        "averaged over perturbations, then over the metrics; equal means share a rank); "
        "accuracy columns are mean raw "
        "scores over perturbations. Per-metric ratings, intervals and flags: "
        '<a href="#ratings">Ratings</a>.</p>'
        + table_html(header, rows, css="summary")
        + source_note("system_summary", "rating_stability")
    )
    return section("overview", "Summary", body)
