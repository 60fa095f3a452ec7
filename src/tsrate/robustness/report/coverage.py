"""Which perturbations each system is rated on, so that the verdict compares systems on what
they share.

An import may leave out whole perturbations (docs/systems.md): a system with forecasts for
P0 only has its mean SMAPE over clean inputs, the others over P0-P3, and those means rank
nothing. The verdict's accuracy comparison therefore averages each system's scores over the
perturbations every compared system is rated on (:func:`shared_perturbations`), and names
a system rated on fewer than the others (:func:`partial_systems`). The means come from
``marts.ratings`` rows (a plain mean over them, traceable), never from new rules: a lower
raw score still reads as more accurate.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from tsrate.html.charts import esc
from tsrate.robustness.report.data import ACCURACY_METRICS, ROBUSTNESS_METRICS, ReportData


def _read_rated(ratings: pd.DataFrame) -> dict[str, dict[str, set[str]]]:
    """{metric: {system: perturbation ids}} with a computed score (non-null raw_score)."""
    if ratings.empty or not {"metric", "perturbation_id", "raw_score"} <= set(ratings.columns):
        return {}
    rows = ratings[ratings["raw_score"].notna()]
    by_metric: dict[str, dict[str, set[str]]] = {}
    for (metric, system), group in rows.groupby(["metric", "system_id"], sort=True):
        by_metric.setdefault(str(metric), {})[str(system)] = {
            str(p) for p in group["perturbation_id"]
        }
    return by_metric


def rated_perturbations(data: ReportData, metrics: tuple[str, ...] | list[str]) -> dict:
    """{system: sorted perturbation ids} with a computed score (non-null raw_score) for any
    of ``metrics`` in the report's ratings (the default outcome). The ratings are read once
    per report (held on ``data`` until its ``ratings`` frame is replaced)."""
    held = data.rated_by_metric
    if held is None or held[0] is not data.ratings:
        held = data.rated_by_metric = (data.ratings, _read_rated(data.ratings))
    per_system: dict[str, set[str]] = {}
    for metric in dict.fromkeys(metrics):
        for system, perturbations in held[1].get(metric, {}).items():
            per_system.setdefault(system, set()).update(perturbations)
    return {system: sorted(per_system[system]) for system in sorted(per_system)}


def shared_perturbations(per_system: dict) -> tuple[list[str], list[str]]:
    """(systems compared, the perturbations they all share), from :func:`rated_perturbations`.

    Every system, on the perturbations all of them have; when no perturbation is shared by
    all, the systems rated on the perturbation most systems have (the first id on a tie), on
    the perturbations those share. Nothing to compare: ([], [])."""
    if not per_system:
        return [], []
    shared = set.intersection(*(set(p) for p in per_system.values()))
    if shared:
        return sorted(per_system), sorted(shared)
    counts = Counter(p for perturbations in per_system.values() for p in perturbations)
    top = min(counts, key=lambda p: (-counts[p], p))
    group = sorted(s for s, perturbations in per_system.items() if top in perturbations)
    return group, sorted(set.intersection(*(set(per_system[s]) for s in group)))


def partial_systems(per_system: dict) -> dict[str, list[str]]:
    """{system: its perturbations} for each system rated on fewer perturbations than all
    the systems together are rated on."""
    every = set().union(*(set(p) for p in per_system.values())) if per_system else set()
    return {s: p for s, p in sorted(per_system.items()) if set(p) < every}


def shared_means(data: ReportData, metric: str) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Each compared system's mean raw ``metric`` over the shared perturbations, lowest first
    (system_id, avg_raw_score); the shared perturbations; the systems left out (rated on none
    of them). Empty frame: no ratings to compare."""
    per_system = rated_perturbations(data, [metric])
    systems, shared = shared_perturbations(per_system)
    if not systems:
        return pd.DataFrame(columns=["system_id", "avg_raw_score"]), [], []
    ratings = data.ratings
    rows = ratings[
        (ratings["metric"] == metric)
        & ratings["system_id"].isin(systems)
        & ratings["perturbation_id"].isin(shared)
        & ratings["raw_score"].notna()
    ]
    means = rows.groupby("system_id")["raw_score"].mean().rename("avg_raw_score").reset_index()
    means = means.sort_values(["avg_raw_score", "system_id"]).reset_index(drop=True)
    return means, shared, sorted(set(per_system) - set(systems))


def compared_means(data: ReportData, metric: str) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The systems' mean raw ``metric`` as the verdict and the reading compare them, lowest
    first (system_id, avg_raw_score); the perturbations the means are over; the systems left
    out. Every system rated on the same perturbations: ``system_summary``'s means, over all
    of them ([]), nobody left out; else :func:`shared_means` (never [] perturbations)."""
    if not partial_systems(rated_perturbations(data, [metric])):
        summary = data.system_summary
        rows = summary[summary["metric"] == metric].dropna(subset=["avg_raw_score"])
        return rows.sort_values(["avg_raw_score", "system_id"]), [], []
    return shared_means(data, metric)


def named_perturbations(perturbations: list[str]) -> str:
    """'P0 only', 'P1 and P2', 'P0, P1 and P3'."""
    if len(perturbations) == 1:
        return f"{perturbations[0]} only"
    return ", ".join(perturbations[:-1]) + f" and {perturbations[-1]}"


def fewer_marks(data: ReportData) -> dict[str, tuple[str, str]]:
    """{system: (short mark, tooltip)} for each system rated on fewer perturbations than the
    others (on any robustness or accuracy metric), for the tables and figures that show each
    system's own means beside the others'. Every system fully rated: {}."""
    per_system = rated_perturbations(data, (*ROBUSTNESS_METRICS, *ACCURACY_METRICS))
    fewer = partial_systems(per_system)
    every = sorted(set().union(*(set(p) for p in per_system.values()))) if per_system else []
    return {
        system: (
            named_perturbations(mine),
            f"{system} was rated on {named_perturbations(mine)}: its means cover fewer "
            f"perturbations than the others' ({named_perturbations(every)}), so they do not "
            "compare with theirs; the verdict compares systems on the perturbations they share.",
        )
        for system, mine in fewer.items()
    }


def fewer_robustness(data: ReportData, systems: list[str]) -> list[str]:
    """A sentence for each of ``systems`` rated on fewer perturbations than the others:
    its robustness rating rests on its own ratings only (how many, over how many metrics)."""
    per_system = rated_perturbations(data, ROBUSTNESS_METRICS)
    fewer = partial_systems(per_system)
    ratings = data.ratings
    sentences = []
    for system in systems:
        if system not in fewer:
            continue
        mine = ratings[
            (ratings["system_id"] == system)
            & ratings["metric"].isin(ROBUSTNESS_METRICS)
            & ratings["raw_score"].notna()
        ]
        n, k = len(mine), mine["metric"].nunique()
        sentences.append(
            f"<b>{esc(system)}</b> was rated on {esc(named_perturbations(fewer[system]))}"
            f": its robustness rating rests on {n} rating{'s' if n != 1 else ''} over {k} "
            f"of the {len(ROBUSTNESS_METRICS)} robustness metrics, where the others' rest "
            "on every perturbation they are rated on."
        )
    return sentences
