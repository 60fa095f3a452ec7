"""The paper's Table 2 per-system accuracy averages are means over every perturbation its
Table 6 prints for that system, P0 (the clean input) included: the convention
``marts.paper_comparison`` follows when it averages the run's scores over its perturbations.
Checked on the seed's printed numbers, to their printed precision."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

SEED = Path(__file__).resolve().parents[2] / "seeds" / "paper_values.csv"


def decimals(printed: str) -> int:
    return len(printed.split(".")[1]) if "." in printed else 0


def table2_and_table6_means() -> pd.DataFrame:
    values = pd.read_csv(SEED, dtype={"printed": str})
    table6 = values[values["paper_table"] == 6]
    table2 = values[(values["paper_table"] == 2) & (values["perturbation_id"] == "mean")]
    rows = []
    for (symbol, metric), group in table6.groupby(["paper_symbol", "metric"]):
        printed = table2[(table2["paper_symbol"] == symbol) & (table2["metric"] == metric)]
        if printed.empty:
            continue
        without_p0 = group[group["perturbation_id"] != "P0"]["value"]
        rows.append(
            {
                "symbol": symbol,
                "metric": metric,
                "table2": float(printed["value"].iloc[0]),
                "half_unit": 0.5 * 10.0 ** -decimals(printed["printed"].iloc[0]),
                "with_p0": sum(group["value"]) / len(group),
                "without_p0": sum(without_p0) / len(without_p0),
                "has_p0": "P0" in set(group["perturbation_id"]),
            }
        )
    return pd.DataFrame(rows)


def test_table2_system_averages_include_the_clean_input():
    means = table2_and_table6_means()
    assert len(means) == 33  # 11 systems x SMAPE, MASE, sign accuracy
    assert means["has_p0"].all()
    tolerance = means["half_unit"] * 1.02  # printed rounding (51.995 printed as 51.99)
    off = means[(means["with_p0"] - means["table2"]).abs() > tolerance]
    assert off.empty, off.to_string()
    # the other reading (P0 left out) misses most of them: the check can tell the two apart
    missed = (means["without_p0"] - means["table2"]).abs() > tolerance
    assert missed.sum() >= 25, means[~missed].to_string()
