"""The ``treatment_assignments`` mart: confounded treatment assignment (paper section 4.2,
RQ2/RQ3; DESIGN.md method decisions) -- draw 0, the paper's single draw.

Built on tsrate.methods.causal.distributions.treatment_draws (the draws of assign_treatments as codes):
for every confounder distribution of int_confounder_distributions and every perturbation set of
system_perturbation_sets, each window (ticker x window_end_date of window_errors) draws one
perturbation. Tunables come from python_models/intermediate/int_treatments_assigned.yml.

The table has distributions x perturbation sets x windows rows (hundreds of millions for a
study of 500 companies), so the model streams it to DuckDB as Arrow record batches, one
distribution at a time, and never holds it in pandas.
"""

from collections.abc import Iterator

import pandas as pd
import pyarrow as pa

from tsrate.methods.causal.distributions import ASSIGNMENT_COLUMNS, treatment_draws

COLUMNS = ["run_id", "perturbation_set", *ASSIGNMENT_COLUMNS]
#: Column types (window_end_date holds datetime.date values, stored as DATE).
TEXT = ["run_id", "perturbation_set", "distribution_id", "confounder", "favored_value"]
TEXT += ["ticker", "industry", "perturbation_id"]
SCHEMA = {**dict.fromkeys(TEXT, "string"), "is_favored": "bool"}
ARROW_TYPES = {**dict.fromkeys(TEXT, pa.string()), "window_end_date": pa.date32()}
ARROW_SCHEMA = pa.schema([(name, ARROW_TYPES.get(name, pa.bool_())) for name in COLUMNS])


def _dates(values: pd.Series) -> pa.Array:
    days = pd.to_datetime(values).to_numpy().astype("datetime64[D]")
    return pa.array(days, type=pa.date32())


def assignment_batches(
    units: pd.DataFrame,
    perturbation_sets: pd.DataFrame,
    distributions: pd.DataFrame,
    seed: int,
) -> Iterator[pa.RecordBatch]:
    """The table as record batches: one per (run, perturbation set, distribution).

    ``units``: the distinct (run_id, ticker, industry, window_end_date) of window_errors.
    Order: run, perturbation set, distribution_id, ticker, window_end_date. Distributions
    whose favoured value matches no window of the run are dropped (``missing_favored="drop"``):
    the seed lists more companies than a study uses.
    """
    usable = perturbation_sets.loc[perturbation_sets["has_effects"].astype(bool)]
    for run_id, sets in usable.groupby("run_id", sort=True):
        run_units = units.loc[units["run_id"] == run_id, ["ticker", "industry", "window_end_date"]]
        for perturbation_set in sorted(sets["perturbation_set"].unique()):
            drawn = treatment_draws(
                run_units, distributions, perturbation_set.split(), seed, missing_favored="drop"
            )
            base, n = drawn.units, len(drawn.units)
            shared = {
                "run_id": pa.repeat(pa.scalar(str(run_id)), n),
                "perturbation_set": pa.repeat(pa.scalar(str(perturbation_set)), n),
                "ticker": pa.array(base["ticker"].astype(str).to_numpy(dtype=object)),
                "industry": pa.array(base["industry"].astype(str).to_numpy(dtype=object)),
                "window_end_date": _dates(base["window_end_date"]),
            }
            labels = pa.array([str(p) for p in drawn.perturbations])
            for draw in drawn.draws:
                dist = draw.distribution
                columns = {
                    **shared,
                    "distribution_id": pa.repeat(pa.scalar(str(dist["distribution_id"])), n),
                    "confounder": pa.repeat(pa.scalar(str(dist["confounder"])), n),
                    "favored_value": pa.repeat(pa.scalar(str(dist["favored_value"])), n),
                    "perturbation_id": labels.take(pa.array(draw.codes)),
                    "is_favored": pa.array(draw.favored),
                }
                yield pa.record_batch([columns[name] for name in COLUMNS], schema=ARROW_SCHEMA)


def _units(window_errors: pd.DataFrame) -> pd.DataFrame:
    return window_errors[["run_id", "ticker", "industry", "window_end_date"]].drop_duplicates()


def treatment_assignments(
    window_errors: pd.DataFrame,
    perturbation_sets: pd.DataFrame,
    distributions: pd.DataFrame,
    seed: int,
) -> pd.DataFrame:
    """One draw per (run, distribution, perturbation set, ticker, window), as a DataFrame.

    The same rows as the table (:func:`assignment_batches`); for small studies and tests.
    """
    batches = list(
        assignment_batches(_units(window_errors), perturbation_sets, distributions, seed)
    )
    if not batches:
        return pd.DataFrame(columns=COLUMNS).astype({**SCHEMA, "window_end_date": "datetime64[s]"})
    out = pa.Table.from_batches(batches, schema=ARROW_SCHEMA).to_pandas()
    out["window_end_date"] = pd.to_datetime(out["window_end_date"]).dt.date  # stored as DATE
    return out.astype(SCHEMA)
