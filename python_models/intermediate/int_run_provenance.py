"""Provenance of the selected run per system (code, data and settings fingerprints; training
data and cutoff from the systems seed or an import's metadata, via stg_systems). Thin wrapper over
tsrate.robustness.marts.provenance."""

from pathlib import Path

import duckdb
from dbt.version import __version__ as dbt_version

from tsrate.config import project_dir
from tsrate.robustness.marts.provenance import run_provenance


def model(dbt, session):
    runs = dbt.ref("int_runs_selected").df()
    prices = dbt.ref("stg_prices").df()
    run_partitions = dbt.ref("int_run_partitions_selected").df()[["run_id", "partition_key"]]
    partitions = dbt.ref("stg_forecast_partitions").df()
    used = run_partitions.merge(partitions, on="partition_key")[
        ["run_id", "system_id", "input_key"]
    ]
    systems = dbt.ref("stg_systems").df()
    versions = {"dbt": dbt_version, "duckdb": duckdb.__version__}
    return run_provenance(runs, prices, used, versions, Path(project_dir()), systems)
