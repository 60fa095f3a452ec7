"""Weighted Rejection Score per run x system x perturbation x analysis (paper eq. 1).

Thin wrapper over tsrate.stats.weighted_rejection_scores applied to each analysis of
wrs_pairs. Feeds the wrs_industry / wrs_company rows of robustness_scores.
"""

import pandas as pd

from tsrate.stats import WRS_COLUMNS, weighted_rejection_scores

COLUMNS = ["run_id", "analysis", "metric", *WRS_COLUMNS]
SCHEMA = {
    **dict.fromkeys(["run_id", "analysis", "metric", "system_id", "perturbation_id"], "string"),
    **dict.fromkeys(["raw_score", "max_score"], "float64"),
    "n_pairs": "int64",
}
#: The columns of wrs_pairs the score needs.
PAIR_INPUT = ["run_id", "analysis", "system_id", "perturbation_id", "confidence", "weight"]
PAIR_INPUT += ["weighted_rejection"]


def read_columns(relation, columns: list[str]) -> pd.DataFrame:
    """Only ``columns`` of a DuckDB relation, text as categoricals with sorted categories.

    DuckDB casts each text column to an ENUM of its (sorted) distinct values, so Arrow
    carries small integer codes instead of millions of strings and pandas gets categoricals
    (groupby order = value order); dates arrive as datetime64.
    """
    types = dict(zip(relation.columns, map(str, relation.types), strict=True))
    select = []
    for name in columns:
        values = []
        if types[name] == "VARCHAR":
            values = sorted(
                v for (v,) in relation.select(name).distinct().fetchall() if v is not None
            )
        if values:
            literal = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
            select.append(f"cast({name} as ENUM({literal})) as {name}")
        else:
            select.append(name)
    return relation.select(", ".join(select)).to_arrow_table().to_pandas(date_as_object=False)


def wrs(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per run, analysis, system and perturbation with the summed score."""
    frames = []
    for (run_id, analysis), block in pairs.groupby(
        ["run_id", "analysis"], sort=True, observed=True
    ):
        scores = weighted_rejection_scores(block)
        scores.insert(0, "metric", f"wrs_{analysis}")
        scores.insert(0, "analysis", analysis)
        scores.insert(0, "run_id", run_id)
        frames.append(scores)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    return pd.concat(frames, ignore_index=True)[COLUMNS].astype(SCHEMA)


def model(dbt, session):
    return wrs(read_columns(dbt.ref("wrs_pairs"), PAIR_INPUT))
