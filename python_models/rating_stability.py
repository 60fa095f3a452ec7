"""How stable the accuracy ratings are: a moving-block bootstrap over window dates.

Thin wrapper over tsrate.ratings.block_bootstrap_ratings, run for each accuracy metric of
window_errors (smape, mase, sign_accuracy; statistic = the mean over windows, as in
accuracy_scores). Tunables come from python_models/rating_stability.yml.
"""

import pandas as pd

from tsrate.ratings import BOOTSTRAP_COLUMNS, block_bootstrap_ratings

METRICS = ["smape", "mase", "sign_accuracy"]
COLUMNS = [
    "run_id",
    "metric",
    *BOOTSTRAP_COLUMNS,
    "higher_is_better",
    "block_length",
    "bootstrap_seed",
    "confidence",
]

#: Column types of the table (stable even when it is empty).
TEXT = ["run_id", "metric", "system_id", "perturbation_id"]
INTEGER = ["rating", "rating_level", "rating_levels", "n_resamples", "n_valid"]
INTEGER += ["block_length", "bootstrap_seed"]
NUMBER = ["raw_score", "ci_low", "ci_high", "share", "confidence"]
SCHEMA = {
    **dict.fromkeys(TEXT, "string"),
    **dict.fromkeys(INTEGER, "int64"),
    **dict.fromkeys(NUMBER, "float64"),
    "higher_is_better": "bool",
}


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


def rating_stability(
    window_errors: pd.DataFrame,
    levels: int,
    n_resamples: int,
    block_length: int,
    seed: int,
    confidence: float,
) -> pd.DataFrame:
    """One row per run, metric, system, perturbation and rating level.

    Every metric of a run uses the same seed, hence the same resampled histories. The block
    length is capped at the number of distinct window dates of the run.
    """
    frames = []
    for run_id, errors in window_errors.groupby("run_id", sort=True, observed=True):
        n_dates = errors["window_end_date"].nunique()
        used_block = max(1, min(int(block_length), n_dates))
        for metric in METRICS:
            values = errors[["system_id", "perturbation_id", "window_end_date", metric]]
            values = values.rename(columns={metric: "value"})
            boot = block_bootstrap_ratings(
                values, levels, n_resamples, used_block, seed, "mean", confidence=confidence
            )
            boot.insert(0, "metric", metric)
            boot.insert(0, "run_id", run_id)
            boot["higher_is_better"] = metric == "sign_accuracy"
            boot["block_length"] = used_block
            boot["bootstrap_seed"] = int(seed)
            boot["confidence"] = float(confidence)
            frames.append(boot)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    return pd.concat(frames, ignore_index=True)[COLUMNS].astype(SCHEMA)


def model(dbt, session):
    # dbt reads config keys from literal dbt.config.get("...") calls: one call per key.
    settings = {
        "rating_levels": dbt.config.get("rating_levels"),
        "bootstrap_resamples": dbt.config.get("bootstrap_resamples"),
        "bootstrap_block_length": dbt.config.get("bootstrap_block_length"),
        "bootstrap_seed": dbt.config.get("bootstrap_seed"),
        "bootstrap_confidence": dbt.config.get("bootstrap_confidence"),
    }
    unset = sorted(key for key, value in settings.items() if value is None)
    if unset:
        raise ValueError(f"rating_stability: set config {unset} (vars of the same names)")
    columns = ["run_id", "system_id", "perturbation_id", "window_end_date", *METRICS]
    return rating_stability(
        read_columns(dbt.ref("window_errors"), columns),
        int(settings["rating_levels"]),
        int(settings["bootstrap_resamples"]),
        int(settings["bootstrap_block_length"]),
        int(settings["bootstrap_seed"]),
        float(settings["bootstrap_confidence"]),
    )
