"""APE and PIE raw scores: the worst case over confounder distributions (paper RQ2/RQ3).

Thin wrapper over tsrate.causal.worst_case applied to perturbation_effects, per confounder.
Feeds the ape_* / pie_* rows of robustness_scores. Tunables come from
python_models/perturbation_effect_scores.yml.
"""

import pandas as pd

from tsrate.causal import DISTRIBUTION_AGGREGATIONS, worst_case

AGGREGATIONS = DISTRIBUTION_AGGREGATIONS
KEYS = ["run_id", "system_id", "perturbation_id", "confounder"]
COLUMNS = [
    "run_id",
    "system_id",
    "perturbation_id",
    "confounder",
    "measure",
    "metric",
    "raw_score",
    "oracle_score",
    "n_distributions",
    "worst_distribution_id",
    "aggregation",
    "estimand",
]

#: Column types (worst_distribution_id is all null with the mean aggregation).
TEXT = ["run_id", "system_id", "perturbation_id", "confounder", "measure", "metric"]
TEXT += ["worst_distribution_id", "aggregation", "estimand"]
SCHEMA = {
    **dict.fromkeys(TEXT, "string"),
    **dict.fromkeys(["raw_score", "oracle_score"], "float64"),
    "n_distributions": "int64",
}


def effect_scores(effects: pd.DataFrame, aggregation: str) -> pd.DataFrame:
    """One row per run, system, perturbation, confounder and measure (ape | pie)."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(
            f"distribution_aggregation must be one of {sorted(AGGREGATIONS)} (got {aggregation!r})"
        )
    if effects.empty:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    ape_how, pie_how = AGGREGATIONS[aggregation]
    effects = effects.copy()
    effects["confounder"] = effects["confounder"].replace({"ticker": "company"})

    ape = worst_case(effects, KEYS, "ape_matched", ape_how).rename(
        columns={"ape_matched": "raw_score"}
    )
    oracle = worst_case(effects, KEYS, "ape_oracle", ape_how, id_column=None)
    ape = ape.merge(
        oracle[[*KEYS, "ape_oracle"]].rename(columns={"ape_oracle": "oracle_score"}),
        on=KEYS,
        how="left",
    )
    ape["measure"] = "ape"
    ape["aggregation"] = ape_how

    pie = worst_case(effects, KEYS, "pie_percent", pie_how).rename(
        columns={"pie_percent": "raw_score"}
    )
    pie["oracle_score"] = float("nan")
    pie["measure"] = "pie"
    pie["aggregation"] = pie_how

    out = pd.concat([ape, pie], ignore_index=True)
    out = out.rename(columns={"n_values": "n_distributions"})
    if "worst_distribution_id" not in out.columns:
        out["worst_distribution_id"] = None
    out["metric"] = out["measure"] + "_" + out["confounder"]
    estimands = effects.groupby(KEYS)["estimand"].first().rename("estimand").reset_index()
    out = out.merge(estimands, on=KEYS, how="left")
    out = out.sort_values([*KEYS, "measure"]).reset_index(drop=True)[COLUMNS]
    return out.astype(SCHEMA)


def model(dbt, session):
    aggregation = dbt.config.get("distribution_aggregation")
    if not aggregation:
        raise ValueError(
            "perturbation_effect_scores: set config distribution_aggregation "
            "(var distribution_aggregation)"
        )
    return effect_scores(dbt.ref("perturbation_effects").df(), str(aggregation))
