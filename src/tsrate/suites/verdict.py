"""The verdict every suite report opens with: best and worst system, by how much, how firm.
Systems with the same mean goodness are named together as a tie; when all have it, the
verdict says the ratings do not separate them.

Read from the suite's ratings (one row per rated score: ``system_id``, ``rating``,
``rating_levels``, ``higher_is_better``; optional ``share_at_rating`` from its stability
mart). Convention: a rating's *goodness* is 0 for the worst level and 1 for the best
(``rating`` counts up with the raw score, so goodness = (rating - 1) / (levels - 1) when
higher is better, (levels - rating) / (levels - 1) otherwise); a system's score is its mean
goodness over its rated scores, and the verdict compares systems on the same scores only
(:func:`comparable`: those all share, else the largest group sharing some, else none), each
score once (:func:`without_repeats`: a score equal to another for every compared system,
e.g. a point forecaster's CRPS, which is its MAE, is left out, and the verdict says so).
When on every compared score the best and the worst systems' 95 % intervals of the raw
score overlap (``ci_low`` / ``ci_high``, optional, from the stability mart), the verdict
says the ratings do not separate them, however far apart their mean goodness is. A
rating is shaky when under 60 % of the resamples give its
level (the core report's threshold); with the share's Monte Carlo standard error
(``share_mc_se``, optional) a rating whose share lies within two of them of that cut is
counted as *near the cut*: another bootstrap seed could move it to the other side (an
exact share, standard error 0, never is). Numbers derived here are ``<span class="derived"
data-derived=... data-value=...>`` so a test can recompute them from the marts.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tsrate.html.charts import esc
from tsrate.html.page import named
from tsrate.methods.noise import NOISE

#: a rating is shaky below this share of resamples at its level (as in the core report)
SHAKY_SHARE = 0.6

#: a share within this many Monte Carlo standard errors of :data:`SHAKY_SHARE` is near the cut
NEAR_CUT_SE = 2.0


def floor_share(share: float, decimals: int) -> float:
    """``share`` rounded DOWN to ``decimals`` decimals, as the core report prints a share
    (:func:`tsrate.robustness.report.numbers.format_share`): a share printed as 0.60 or more
    is never a shaky one (0.599 -> 0.59 at two decimals, where rounding prints 0.60)."""
    scale = 10**decimals
    return math.floor(float(share) * scale + 1e-9) / scale


def goodness(ratings: pd.DataFrame) -> pd.Series:
    """Each rating's goodness in [0, 1] (1 = the best level); NaN for a null rating."""
    levels = ratings["rating_levels"].astype(float)
    rating = pd.to_numeric(ratings["rating"], errors="coerce").astype(float)
    span = (levels - 1).where(levels > 1)
    higher = ratings["higher_is_better"].astype(bool)
    up = (rating - 1) / span
    return up.where(higher, 1 - up).where(span.notna(), 1.0).where(rating.notna())


def system_scores(ratings: pd.DataFrame, system: str = "system_id") -> pd.DataFrame:
    """Per system: mean goodness, rated scores, shaky ones, ones near the shaky cut and
    ones without a share (firmness unknown); best first (ties by name)."""
    frame = ratings.assign(goodness=goodness(ratings)).dropna(subset=["goodness"])
    frame = frame.assign(shaky=False, near_cut=False, unknown=False)
    if "share_at_rating" in frame:
        share = pd.to_numeric(frame["share_at_rating"], errors="coerce")
        frame = frame.assign(shaky=share.lt(SHAKY_SHARE) & share.notna(), unknown=share.isna())
        if "share_mc_se" in frame:
            se = pd.to_numeric(frame["share_mc_se"], errors="coerce")
            near = (share - SHAKY_SHARE).abs().le(NEAR_CUT_SE * se) & se.gt(0)
            frame = frame.assign(near_cut=near & share.notna())
    out = (
        frame.groupby(system)
        .agg(mean_goodness=("goodness", "mean"), n_ratings=("goodness", "size"),
             n_shaky=("shaky", "sum"), n_near_cut=("near_cut", "sum"),
             n_unknown=("unknown", "sum"))
        .reset_index()
    )  # fmt: skip
    return out.sort_values(["mean_goodness", system], ascending=[False, True]).reset_index(
        drop=True
    )


#: a suite ratings' columns that say how a score was rated, not which score it is (the
#: score: every other column but the system's), its stability mart's among them (a model
#: rated over fewer training seeds is rated on the same score)
RATING_COLUMNS = frozenset(
    {"raw_score", "rating", "rating_levels", "higher_is_better", "rank", "rating_reason",
     "n_systems", "n_models", "share_at_rating", "share_mc_se", "n_seeds", "n_resamples",
     "n_resamples_undefined", "goodness", "shaky", "near_cut", "unknown", "ci_low",
     "ci_high"}
)  # fmt: skip


def comparable(ratings: pd.DataFrame, system: str = "system_id") -> tuple[pd.DataFrame, str]:
    """The rated scores a verdict may compare systems on, and a sentence saying what it left
    out ("" when every system is rated on the same scores): :func:`compared_once` with
    every score counted, repeats included."""
    frame, left_out, _, _ = _compared(ratings, system, once=False)
    return frame, left_out


def compared_once(
    ratings: pd.DataFrame, system: str = "system_id"
) -> tuple[pd.DataFrame, str, str]:
    """:func:`comparable`, then :func:`without_repeats` on the scores it keeps: the compared
    frame, the sentence saying what was left out, and the clause naming each repeat dropped
    ("" when none). The sentence's counts ("the 2 of the 6 scores") leave the dropped
    repeats out, as the verdict's count of rated scores does, and name them."""
    frame, left_out, repeated, _ = _compared(ratings, system, once=True)
    return frame, left_out, repeated


def rated_once(ratings: pd.DataFrame, system: str = "system_id") -> pd.DataFrame:
    """Every system's rated scores (non-null goodness), each score once: less the scores
    :func:`compared_once` drops as repeats, for every system rated on them, compared or
    not. The one rule behind every "rated scores" count: the verdict sentence's per-system
    counts and the summary table's "Rated scores" column are counts of these rows."""
    frame = ratings.assign(goodness=goodness(ratings)).dropna(subset=["goodness"])
    _, _, _, dropped = _compared(ratings, system, once=True)
    if not dropped:
        return frame
    return frame[~_score_keys(frame, system).isin(dropped)]


def _score_keys(frame: pd.DataFrame, system: str) -> pd.Series:
    """Each row's score as a tuple of its key columns' values (as text)."""
    keys = [c for c in frame.columns if c != system and c not in RATING_COLUMNS]
    return pd.Series(
        list(zip(*(frame[k].astype(str) for k in keys), strict=True)), index=frame.index
    )


def _compared(
    ratings: pd.DataFrame, system: str, once: bool
) -> tuple[pd.DataFrame, str, str, frozenset]:
    """The rated scores a verdict may compare systems on (with ``once``, each once), the
    sentence saying what it left out, the repeats clause and the scores dropped as repeats
    (key tuples of :func:`_score_keys`).

    A mean goodness over different scores ranks nothing (a forecaster rated on the
    forecasting scores only against an answerer rated on the choice tasks only), so: every
    system on the scores they all share; with none shared by all, the largest group of
    systems rated on one same score (ties: the group sharing more scores, then by name),
    on every score the group shares, the others named as not compared; with no score
    rated for two systems, nothing."""
    frame = ratings.assign(goodness=goodness(ratings)).dropna(subset=["goodness"])
    keys = [c for c in frame.columns if c != system and c not in RATING_COLUMNS]
    if frame.empty or not keys:
        return _once(frame, "", system, once)
    score = _score_keys(frame, system)
    covered = score.groupby(frame[system]).agg(frozenset)
    union = frozenset(score)
    if (covered == union).all():
        return _once(frame, "", system, once)

    def repeats_of(kept: pd.DataFrame) -> tuple[pd.DataFrame, frozenset, str, str]:
        """The compared rows less the repeats (with ``once``), the dropped scores, the
        repeats clause and the words naming them in the sentence."""
        if not once:
            return kept, frozenset(), "", ""
        left, repeats = _drop_repeats(kept, system)
        dropped = frozenset(score[kept.index]) - frozenset(score[left.index])
        if not dropped:
            return left, dropped, "", ""
        names = ", ".join(f"<code>{esc(n)}</code>" for n in repeats)
        said = "a repeat" if len(repeats) == 1 else "repeats"
        return left, dropped, _repeats_clause(repeats), f"not counting {names}, {said}; "

    counts = ", ".join(f"{esc(name)} {len(on)}" for name, on in covered.items())
    shared = frozenset.intersection(*covered)
    if shared:
        kept, dropped, repeated, words = repeats_of(frame[score.isin(shared)])
        counts = ", ".join(f"{esc(name)} {len(on - dropped)}" for name, on in covered.items())
        n_on, n_all = len(shared - dropped), len(union - dropped)
        return (
            kept,
            (
                f" Compared on the {_derived('compared_scores', n_on, str(n_on))} scores "
                "every system is rated on, of "
                f"{_derived('scores_in_all', n_all, str(n_all))} in all ({words}rated "
                f"scores: {counts})."
            ),
            repeated,
            dropped,
        )
    groups = {frozenset(covered.index[[key in on for on in covered]]) for key in union}

    def among(group: frozenset) -> frozenset:
        return frozenset.intersection(*(covered[name] for name in group))

    group = min(groups, key=lambda g: (-len(g), -len(among(g)), sorted(g)))
    if len(group) < 2:
        return (
            frame.iloc[:0],
            (
                f"No score is rated for two systems (rated scores: {counts}): a mean goodness "
                "over different scores ranks nothing, so no best or worst is named; the summary "
                "table gives each system's own."
            ),
            "",
            frozenset(),
        )
    on = among(group)
    others = sorted(set(covered.index) - group)
    kept, dropped, repeated, words = repeats_of(frame[frame[system].isin(group) & score.isin(on)])
    counts = ", ".join(f"{esc(name)} {len(on_ - dropped)}" for name, on_ in covered.items())
    n_on, n_all = len(on - dropped), len(union - dropped)
    return (
        kept,
        (
            f" Compared on the {_derived('compared_scores', n_on, str(n_on))} of the "
            f"{_derived('scores_in_all', n_all, str(n_all))} scores that "
            f"these {len(group)} systems share; not compared: {named(others)}, rated on other "
            f"scores ({words}rated scores: {counts})."
        ),
        repeated,
        dropped,
    )


def _once(frame: pd.DataFrame, left_out: str, system: str, once: bool):
    """``frame``, ``left_out`` and, with ``once``, ``frame`` less its repeats, the clause
    and the dropped scores."""
    if not once:
        return frame, left_out, "", frozenset()
    kept, repeated = without_repeats(frame, system)
    if not repeated:
        return kept, left_out, repeated, frozenset()
    dropped = frozenset(_score_keys(frame, system)) - frozenset(_score_keys(kept, system))
    return kept, left_out, repeated, dropped


def _score_labels(frame: pd.DataFrame, system: str) -> pd.Series:
    """Each row's score as a reader names it: its key columns' values (those that vary in
    ``frame``, else all) joined by " · "."""
    keys = [c for c in frame.columns if c != system and c not in RATING_COLUMNS]
    varying = [k for k in keys if frame[k].astype(str).nunique() > 1] or keys
    if not varying:
        return pd.Series("", index=frame.index)
    return frame[varying].astype(str).agg(" · ".join, axis=1)


#: the fewest distinct raw scores (over the compared systems) a score needs before an equal
#: one is read as the same score counted twice rather than a coincidence
REPEAT_DISTINCT = 3


def without_repeats(frame: pd.DataFrame, system: str = "system_id") -> tuple[pd.DataFrame, str]:
    """The compared scores of :func:`comparable` less each score that repeats another, and
    a clause naming what it left out ("" when nothing).

    A score repeats another when the two are different metrics of the same rest (task,
    feature, ...) and, for every one of the two or more systems compared, give the same
    rating and raw scores equal up to floating noise (``|a - b| <= NOISE * max(|a|, |b|)``,
    NOISE = 1e-12, exact equality included), read in the same direction: e.g. a point
    forecaster's CRPS is its MAE, and counting both weighs one score twice. Only a score
    with at least :data:`REPEAT_DISTINCT` distinct raw scores can repeat another: two
    systems, or scores at their bounds (accuracies of 1 and 0 on two tasks), agree by
    chance, and both are kept. Metrics are taken in the order of their names; the first
    of a repeated pair is kept."""
    kept, repeats = _drop_repeats(frame, system)
    return kept, _repeats_clause(repeats)


def _repeats_clause(repeats: dict[str, str]) -> str:
    """The clause naming each repeat left out and the score it equals ("" when none)."""
    if not repeats:
        return ""
    said = "; ".join(
        f"<code>{esc(name)}</code> left out: it equals <code>{esc(other)}</code>"
        for name, other in repeats.items()
    )
    return f"; {said} for every system compared"


def _drop_repeats(frame: pd.DataFrame, system: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """:func:`without_repeats`' frame and its repeats (each left-out score's label -> the
    score it equals)."""
    if frame.empty or not {"raw_score", "metric"} <= set(frame.columns):
        return frame, {}
    if frame[system].nunique() < 2:
        return frame, {}
    label = _score_labels(frame, system)
    rest = [c for c in frame.columns if c not in RATING_COLUMNS and c not in (system, "metric")]
    group = frame[rest].astype(str).agg(" · ".join, axis=1) if rest else label.map(lambda _: "")
    raw = frame.pivot_table(index=label, columns=system, values="raw_score", aggfunc="first")
    rating = frame.pivot_table(index=label, columns=system, values="rating", aggfunc="first")
    direction = frame.groupby(label)["higher_is_better"].first()
    group_of = group.groupby(label).first()
    kept: list[str] = []
    repeats: dict[str, str] = {}
    for name in sorted(raw.index):
        a = raw.loc[name].to_numpy(dtype=float)
        for other in (k for k in kept if group_of[k] == group_of[name]):
            b = raw.loc[other].to_numpy(dtype=float)
            noise = np.abs(a - b) - NOISE * np.fmax(np.abs(a), np.abs(b))
            if (
                len(np.unique(a[~np.isnan(a)])) >= REPEAT_DISTINCT
                and direction[name] == direction[other]
                and rating.loc[name].equals(rating.loc[other])
                and (np.isnan(a) == np.isnan(b)).all()
                and np.nan_to_num(noise, nan=0.0).max() <= 0
            ):
                repeats[name] = other
                break
        else:
            kept.append(name)
    if not repeats:
        return frame, {}
    return frame[~label.isin(list(repeats))], repeats


def _interval_overlap(frame: pd.DataFrame, first, last, system: str) -> int:
    """How many compared scores there are when on each of them every one of the systems
    ``first`` has a 95 % interval (``ci_low`` / ``ci_high``) overlapping every one of
    ``last``'s; 0 when on some score two do not overlap or an interval is missing."""
    if not {"ci_low", "ci_high"} <= set(frame.columns) or frame.empty:
        return 0
    label = _score_labels(frame, system)
    low = frame.pivot_table(index=label, columns=system, values="ci_low", aggfunc="first")
    high = frame.pivot_table(index=label, columns=system, values="ci_high", aggfunc="first")
    for a in first:
        for b in last:
            if a not in low.columns or b not in low.columns:
                return 0
            bounds = np.array([low[a], high[a], low[b], high[b]], dtype=float)
            if np.isnan(bounds).any():
                return 0
            a_low, a_high, b_low, b_high = bounds
            if not ((a_low <= b_high) & (b_low <= a_high)).all():
                return 0
    return len(low.index)


def _derived(name: str, value: float, text: str) -> str:
    return (
        f'<span class="derived" data-derived="{esc(name)}" data-value="{float(value)!r}">'
        f"{esc(text)}</span>"
    )


def verdict_html(ratings: pd.DataFrame, what: str, source: str, system: str = "system_id") -> str:
    """The verdict section (``<section id="verdict">``) for a suite's ``ratings``.

    ``what``: what the scores rate ("the reasoning tasks"); ``source``: the marts read."""
    head = '<section id="verdict"><h2>Verdict</h2><p class="verdict">'
    tail = f'</p><p class="source">Source: {source}.</p></section>'
    if ratings is None or ratings.empty or "rating" not in ratings:
        return head + "No rated scores in these marts yet." + tail
    ratings, left_out, repeated = compared_once(ratings, system)
    scores = system_scores(ratings, system)
    if scores.empty:
        return head + (left_out or "No system has a rating yet (every rating is null).") + tail
    has_shares = "share_at_rating" in ratings and ratings["share_at_rating"].notna().any()
    best, worst = scores.iloc[0], scores.iloc[-1]
    # means of a few goodness levels: equal ones are equal fractions, up to rounding
    leaders = scores[(scores["mean_goodness"] - best.mean_goodness).abs() <= 1e-9]
    laggards = scores[(scores["mean_goodness"] - worst.mean_goodness).abs() <= 1e-9]

    def pct(row, name: str) -> str:
        value = 100 * float(row.mean_goodness)
        return _derived(name, value, f"{value:.0f} %")

    n_scores = int(scores["n_ratings"].sum())
    counted = _derived("rated_scores", n_scores, str(n_scores))
    if len(scores) == 1:
        text = (
            f"Only <b>{esc(best[system])}</b> is rated on {what} "
            f"({pct(best, 'best_goodness')} of the way from the worst to the best level): "
            "nothing to compare."
        )
    elif len(leaders) == len(scores):
        text = (
            f"All {len(scores)} systems rated on {what} ({counted} rated scores{repeated}) "
            "have the "
            f"same mean goodness ({pct(best, 'best_goodness')}: 0 % = the worst rating level "
            "on every score, 100 % = the best): the ratings do not separate them."
        )
    else:
        gap = 100 * float(best.mean_goodness - worst.mean_goodness)
        top = "does best" if len(leaders) == 1 else "tie for best"
        bottom = "worst" if len(laggards) == 1 else "tie for worst"
        text = (
            f"Of {len(scores)} systems rated on {what} ({counted} rated scores{repeated}), "
            f"{named(list(leaders[system]))} {top} (mean goodness {pct(best, 'best_goodness')}: "
            "0 % = the worst rating level on every score, 100 % = the best) and "
            f"{named(list(laggards[system]))} {bottom} ({pct(worst, 'worst_goodness')}), "
            f"{_derived('gap', gap, f'{gap:.0f}')} points apart"
        )
        overlap = _interval_overlap(ratings, leaders[system], laggards[system], system)
        if overlap:
            text += (
                f", yet on each of the {_derived('overlapping', overlap, str(overlap))} "
                "compared scores their 95 % intervals overlap: the ratings do not separate "
                "them"
            )
        text += "."
    text += left_out
    if has_shares:
        k, n = int(leaders["n_shaky"].sum()), int(leaders["n_ratings"].sum())
        total = int(scores["n_shaky"].sum())
        whose, each = f"{esc(best[system])}'s", ""
        if len(leaders) > 1:
            whose = "the leaders'"
            each = ", ".join(
                f"{esc(r[system])} {int(r.n_shaky)} of {int(r.n_ratings)}"
                for _, r in leaders.iterrows()
            )
            each += "; "
        text += (
            f" How firm: {_derived('leader_shaky', k, str(k))} of {whose} "
            f"{_derived('leader_ratings', n, str(n))} {'rating' if n == 1 else 'ratings'} "
            f"{'is' if k == 1 else 'are'} shaky ({each}under "
            f"{SHAKY_SHARE:.0%} of resamples give the published level), "
            f"{_derived('shaky', total, str(total))} of all {n_scores}."
        )
        unknown = int(scores["n_unknown"].sum())
        if unknown:  # withheld or never resampled: neither shaky nor firm
            text += (
                f" {_derived('unknown_share', unknown, str(unknown))} of the {n_scores} "
                f"{'has' if unknown == 1 else 'have'} no resampled share: how firm "
                f"{'it is' if unknown == 1 else 'they are'} is unknown."
            )
        near = int(scores["n_near_cut"].sum())
        if near:
            text += (
                f" {_derived('near_cut', near, str(near))} of the {n_scores} "
                f"{'lies' if near == 1 else 'lie'} within two Monte Carlo standard errors "
                f"(share_mc_se) of the {SHAKY_SHARE:.0%} cut: another bootstrap seed could "
                f"put {'it' if near == 1 else 'them'} on its other side."
            )
    else:
        text += " How firm: unknown (no resampled shares in these marts)."
    return head + text + tail


#: the summary table's note names at most this many compared scores (then "and N more")
NAMED_SCORES = 12


def score_names(
    ratings: pd.DataFrame, system: str = "system_id", among: pd.DataFrame | None = None
) -> list[str]:
    """The distinct scores of ``among`` (default: ``ratings``) as a reader names them: the
    values of the key columns (every column but the system's and :data:`RATING_COLUMNS`)
    joined by " · ", leaving out a key with one value in all of ``ratings`` (the suite
    run); sorted."""
    among = ratings if among is None else among
    keys = [c for c in ratings.columns if c != system and c not in RATING_COLUMNS]
    varying = [k for k in keys if ratings[k].astype(str).nunique() > 1] or keys
    if not varying:
        return []
    rows = among[varying].astype(str).drop_duplicates()
    return sorted(" · ".join(row) for row in rows.itertuples(index=False, name=None))


def _listed(names: list[str]) -> str:
    shown = [f"<code>{esc(n)}</code>" for n in names[:NAMED_SCORES]]
    if len(names) > NAMED_SCORES:
        shown.append(f"and {len(names) - NAMED_SCORES} more")
    return ", ".join(shown)


def summary_table_html(ratings: pd.DataFrame, system: str = "system_id") -> str:
    """One row per system: mean goodness, rated scores, shaky ratings, each over the
    system's rated scores counted once (:func:`rated_once`: a repeat the verdict drops is
    in no column, as it is in none of the verdict's counts).

    When every system is rated on the same scores, each system's mean over its own rated
    scores is the verdict's, and the rows rank by it (best first). Otherwise (systems rated
    on different scores, :func:`comparable`) the rows rank by the mean over the scores the
    verdict compares, blank and unranked for the systems it leaves out, with the own-scores
    mean beside it for reference and a note naming the compared scores."""
    if ratings is None or ratings.empty or "rating" not in ratings:
        return ""
    # each system's own rated scores, each once: what the verdict's counts count
    scores = system_scores(rated_once(ratings, system), system)
    if scores.empty:
        return ""

    def shaky(r) -> str:  # noqa: ANN001
        near = f" ({int(r.n_near_cut)} near the cut)" if r.n_near_cut else ""
        return f"{int(r.n_shaky)}" + (" ⚠" if r.n_shaky else "") + near

    compared, left_out, repeated = compared_once(ratings, system)
    if not left_out:
        # every system on the same scores: its own, each once, are the compared ones
        ranks = _shared_ranks(list(scores["mean_goodness"]))
        rows = [
            [str(rank), f"<code>{esc(r[system])}</code>", f"{100 * r.mean_goodness:.0f} %",
             str(int(r.n_ratings)), shaky(r)]
            for rank, (_, r) in zip(ranks, scores.iterrows(), strict=True)
        ]  # fmt: skip
        header = ["Rank", "System", "Mean goodness (100 % = best level)", "Rated scores",
                  "Shaky ratings"]  # fmt: skip
        note = f'<p class="note">Each score counted once{repeated}.</p>'
        return _summary(header, rows, note if repeated else "")
    on = system_scores(compared, system) if not compared.empty else scores.iloc[:0]
    on = on.set_index(system)
    own = scores.set_index(system)
    order = [*on.index, *[name for name in own.index if name not in on.index]]
    ranked = dict(zip(on.index, _shared_ranks(list(on["mean_goodness"])), strict=True))
    rows = []
    for name in order:
        r = own.loc[name]
        rank = str(ranked[name]) if name in on.index else "–"
        mean_on = f"{100 * on.loc[name, 'mean_goodness']:.0f} %" if name in on.index else ""
        n_on = str(int(on.loc[name, "n_ratings"])) if name in on.index else ""
        rows.append(
            [rank, f"<code>{esc(name)}</code>", mean_on, n_on,
             f"{100 * r.mean_goodness:.0f} %", str(int(r.n_ratings)), shaky(r)]
        )  # fmt: skip
    header = ["Rank", "System", "Mean goodness on the compared scores (the verdict's)",
              "Compared scores", "Mean goodness on its own rated scores", "Rated scores",
              "Shaky ratings"]  # fmt: skip
    others = [name for name in order if name not in on.index]
    if compared.empty:
        note = (
            "No score is rated for two systems, so the verdict compares none: each system's "
            "mean over its own rated scores is given, and it ranks nothing (the systems are "
            "rated on different scores)."
        )
    else:
        names = score_names(ratings, system, among=compared)
        note = (
            f"The verdict compares {len(on)} systems on the same {len(names)} scores "
            f"({_listed(names)}), and so does the rank; "
            + (f"not compared: {named(others)}, rated on other scores; " if others else "")
            + "the mean over each system's own rated scores is beside it for reference only: "
            "over different scores it ranks nothing"
            + (f"; each score counted once{repeated}." if repeated else ".")
        )
    return _summary(header, rows, f'<p class="note">{note}</p>')


#: how a suite's ratings mark a score left unrated for being undefined (the core's wording)
NOT_RATED = "not rated:"


def not_rated_html(ratings: pd.DataFrame, system: str = "system_id") -> str:
    """The scores not rated for being undefined (``rating_reason`` starting "not rated:"),
    one row each: the score (its key columns), the system and the reason; "" when none.
    They are neither in the verdict nor in the summary: a null score ranks nothing."""
    if ratings is None or ratings.empty or "rating_reason" not in ratings:
        return ""
    reason = ratings["rating_reason"].astype("string")
    rows = ratings[reason.str.startswith(NOT_RATED).fillna(False).to_numpy(dtype=bool)]
    if rows.empty:
        return ""
    from tsrate.html.page import table

    keys = [c for c in ratings.columns if c != system and c not in RATING_COLUMNS]
    varying = [k for k in keys if ratings[k].astype(str).nunique() > 1] or keys
    rows = rows.sort_values([*varying, system], kind="stable")
    body = [
        [*(esc(str(r[k])) for k in varying), f"<code>{esc(r[system])}</code>",
         esc(r["rating_reason"])]
        for _, r in rows.iterrows()
    ]  # fmt: skip
    return (
        '<section id="not-rated"><h3>Not rated: undefined scores</h3>'
        f"<p>{_derived('not_rated', len(rows), str(len(rows)))} "
        f"{'score is' if len(rows) == 1 else 'scores are'} undefined (null or not a "
        "number): listed with the reason, not compared with the others, and left out of "
        "the verdict and the summary.</p>"
        + table([esc(h) for h in (*varying, system, "rating_reason")], body, css="not-rated")
        + "</section>"
    )


def _shared_ranks(means: list[float]) -> list[int]:
    """Ranks of ``means`` (best first): equal means (within 1e-9, as the verdict ties them)
    share the first one's rank, the next takes its position (1, 1, 3)."""
    ranks: list[int] = []
    for position, value in enumerate(means):
        tied = position and abs(value - means[position - 1]) <= 1e-9
        ranks.append(ranks[-1] if tied else position + 1)
    return ranks


def _summary(header: list[str], rows: list[list[str]], note: str) -> str:
    from tsrate.html.page import table

    return (
        '<section id="overview"><h2>Summary</h2>'
        + table(header, rows, css="summary")
        + note
        + ("</section>")
    )
