"""Confounded treatment assignment (paper section 4.2, RQ2/RQ3): draw 0 of every
distribution of int_confounder_distributions, for every perturbation set.

Thin wrapper over tsrate.methods.causal.assignment.assignment_batches, streamed to DuckDB as Arrow record
batches one distribution at a time. Tunables come from int_treatments_assigned.yml; the public mart
treatment_assignments selects from it.
"""

from collections.abc import Iterator

import pyarrow as pa

from tsrate.methods.causal.assignment import ARROW_SCHEMA, assignment_batches


def model(dbt, session):
    seed = dbt.config.get("causal_seed")
    if seed is None:
        raise ValueError("int_treatments_assigned: set config causal_seed (var causal_seed)")
    units = (
        dbt.ref("window_errors")
        .select("run_id, ticker, industry, window_end_date")
        .distinct()
        .to_arrow_table()
        .to_pandas(date_as_object=False)
    )
    perturbation_sets = dbt.ref("int_perturbation_sets_derived").df()
    distributions = dbt.ref("int_confounder_distributions").df()
    batches = assignment_batches(units, perturbation_sets, distributions, int(seed))
    first = next(batches, None)
    if first is None:  # no run with effects: an empty table of the right types
        return ARROW_SCHEMA.empty_table()

    def stream() -> Iterator[pa.RecordBatch]:
        yield first
        yield from batches

    return pa.RecordBatchReader.from_batches(ARROW_SCHEMA, stream())
