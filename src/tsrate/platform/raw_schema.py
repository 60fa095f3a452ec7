"""The raw schema: every raw table tsrate writes, and the one function that creates them.

Raw tables are the only tables Python writes; dbt builds everything else from them. Their
definitions, in one place:

* :data:`CORE_DDL` — the robustness core: prices, runs, windows, perturbed inputs, forecast
  partitions, forecasts and quantiles, skipped systems, forecast failures, fallback windows
  (``raw.forecast_fallbacks``), sentiment labels (``raw.sentiments``) and trained model
  checkpoints;
* :data:`IMPORTED_SYSTEMS_DDL` — systems registered by an import of predictions (read by
  ``stg_systems``, so it exists before any import);
* :data:`REGISTERED_LLMS_DDL` — language models registered under their own id by
  ``tsrate register-llm`` (read by ``stg_systems`` and by a run that forecasts one);
* :data:`SUITE_RUNS_DDL` — one table of suite runs for every suite;
* each registered suite's own raw tables: ``DDL`` of ``tsrate.suites.<name>.schema``, the one
  definition the suite kit gives each suite (collected here through the registry
  :data:`tsrate.suites.SUITES`, so this module names no suite).

:func:`create_raw_tables` creates them all when missing (idempotent; the DDL only adds, so a
warehouse written by an older version gains its new tables empty). It is called at the
writing edges: ingest (``store_prices``), the start of a forecast run (``run_forecasts``) or
of a build (``close_interrupted_runs``, ``dbt_runner.build``), an import of predictions, a
suite run and the registration of trained checkpoints — not on every connection
(:func:`tsrate.platform.warehouse.connect` only opens the file). Read-only paths never
created tables and still do not.
"""

from __future__ import annotations

import importlib

import duckdb

from tsrate.suites import SUITES

CORE_DDL = """
create schema if not exists raw;

create table if not exists raw.prices (
    ticker varchar not null,
    price_date date not null,
    close double not null check (close > 0),
    source varchar not null,
    loaded_at timestamp not null,
    primary key (ticker, price_date)
);

create table if not exists raw.runs (
    run_id varchar primary key,
    started_at timestamp not null,
    finished_at timestamp,
    status varchar not null,
    study_hash varchar not null,
    study json not null,
    tickers varchar[] not null,
    systems varchar[] not null,
    perturbations varchar[] not null,
    study_start date not null,
    study_end date not null,
    context_length integer not null,
    horizon integer not null,
    stride integer not null,
    perturbation_phase integer not null,
    message varchar
);

create table if not exists raw.windows (
    run_id varchar not null,
    ticker varchar not null,
    window_index integer not null,
    window_end_date date not null,
    context_start_date date not null,
    horizon_end_date date not null,
    primary key (run_id, ticker, window_end_date)
);

create table if not exists raw.perturbed_inputs (
    run_id varchar not null,
    ticker varchar not null,
    perturbation_id varchar not null,
    price_date date not null,
    position integer not null,
    clean_value double not null,
    input_value double,
    is_perturbed boolean not null,
    primary key (run_id, ticker, perturbation_id, price_date)
);

create table if not exists raw.forecast_partitions (
    partition_key varchar primary key,
    input_key varchar not null,
    run_id varchar not null,
    system_id varchar not null,
    ticker varchar not null,
    perturbation_id varchar not null,
    n_windows integer not null,
    n_rows bigint not null,
    seconds double not null,
    finished_at timestamp not null,
    n_fallback_windows integer,
    n_copied_windows integer
);

-- warehouses made before fallback windows were recorded: their partitions read null
-- (unknown), not 0
alter table raw.forecast_partitions add column if not exists n_fallback_windows integer;
-- likewise before windows whose forecast copies a stretch of their context were counted
alter table raw.forecast_partitions add column if not exists n_copied_windows integer;

create table if not exists raw.run_partitions (
    run_id varchar not null,
    partition_key varchar not null,
    reused boolean not null,
    primary key (run_id, partition_key)
);

create table if not exists raw.forecasts (
    run_id varchar not null,
    partition_key varchar not null,
    system_id varchar not null,
    ticker varchar not null,
    window_end_date date not null,
    perturbation_id varchar not null,
    horizon_step integer not null,
    forecast double not null
);

create table if not exists raw.forecast_quantiles (
    run_id varchar not null,
    partition_key varchar not null,
    system_id varchar not null,
    ticker varchar not null,
    window_end_date date not null,
    perturbation_id varchar not null,
    horizon_step integer not null,
    q10 double not null,
    q20 double not null,
    q30 double not null,
    q40 double not null,
    q50 double not null,
    q60 double not null,
    q70 double not null,
    q80 double not null,
    q90 double not null
);

create table if not exists raw.run_skipped_systems (
    run_id varchar not null,
    system_id varchar not null,
    reason varchar not null,
    recorded_at timestamp not null,
    primary key (run_id, system_id)
);

create table if not exists raw.forecast_failures (
    run_id varchar not null,
    partition_key varchar not null,
    system_id varchar not null,
    ticker varchar not null,
    window_end_date date not null,
    perturbation_id varchar not null,
    reason varchar not null,
    raw_text varchar not null,
    recorded_at timestamp not null,
    primary key (partition_key, window_end_date)
);

create table if not exists raw.forecast_fallbacks (
    run_id varchar not null,
    partition_key varchar not null,
    system_id varchar not null,
    ticker varchar not null,
    window_end_date date not null,
    perturbation_id varchar not null,
    reason varchar not null,
    recorded_at timestamp not null,
    primary key (partition_key, window_end_date)
);

create table if not exists raw.sentiments (
    run_id varchar not null,
    sentiment_system_id varchar not null,
    ticker varchar not null,
    window_end_date date not null,
    sentiment integer not null check (sentiment in (-1, 0, 1)),
    stripe_intensity integer not null,
    probability_negative double not null,
    probability_neutral double not null,
    probability_positive double not null,
    trend_score double not null,
    trend_label integer not null check (trend_label in (-1, 0, 1)),
    primary key (run_id, sentiment_system_id, ticker, window_end_date)
);

create table if not exists raw.model_checkpoints (
    system_id varchar not null,
    checkpoint_key varchar not null,
    checkpoint_path varchar not null,
    model_size varchar,
    train_start date,
    train_end date,
    first_window_end date,
    last_window_end date,
    tickers varchar not null,
    training_windows integer,
    validation_windows integer,
    best_epoch integer,
    validation_loss double,
    device varchar,
    training_seconds double,
    git_revision varchar not null,
    settings_json varchar not null,
    trained_at timestamp not null,
    registered_at timestamp not null,
    primary key (system_id, checkpoint_key)
);
"""

IMPORTED_SYSTEMS_DDL = """
create schema if not exists raw;
create table if not exists raw.imported_systems (
    system_id varchar not null,
    display_name varchar not null,
    paper_symbol varchar,
    modality varchar not null,
    family varchar not null,
    purpose varchar,
    architecture varchar,
    is_foundation_model boolean,
    accepted_perturbations varchar not null,
    description varchar not null,
    base_model varchar,
    source varchar not null,
    registered_at timestamp not null,
    training_corpus varchar,
    training_cutoff date
);

-- warehouses made before an import could state its model's training data: their
-- registrations read null (not recorded)
alter table raw.imported_systems add column if not exists training_corpus varchar;
alter table raw.imported_systems add column if not exists training_cutoff date;
"""

# language models registered under their own id (tsrate.systems.registered): append-only,
# the latest registration of an id wins; the key is stored by the NAME of its variable only
REGISTERED_LLMS_DDL = """
create schema if not exists raw;
create table if not exists raw.registered_llms (
    system_id varchar not null,
    display_name varchar not null,
    base_url varchar not null,
    model varchar not null,
    api_key_env varchar,
    modality varchar not null,
    registered_at timestamp not null
);
"""

SUITE_RUNS_DDL = """
create schema if not exists raw;

create table if not exists raw.suite_runs (
    suite varchar not null,
    suite_run_id varchar primary key,
    started_at timestamp not null,
    finished_at timestamp,
    status varchar not null,
    config json not null,
    details json not null,
    message varchar
);
"""


def suite_raw_ddl() -> str:
    """``raw.suite_runs`` plus the raw tables of every registered suite."""
    parts = [SUITE_RUNS_DDL]
    parts += [importlib.import_module(s.schema_module).DDL for s in SUITES.values()]
    return "\n".join(parts)


def create_suite_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create every suite raw table when missing and copy in the legacy suite runs."""
    con.execute(suite_raw_ddl())
    migrate_legacy_suite_runs(con)


# company metadata a study brings (price-file columns or --companies; tsrate.robustness.companies)
COMPANIES_DDL = """
create schema if not exists raw;
create table if not exists raw.company_metadata (
    ticker varchar not null,
    company_name varchar,
    industry varchar,
    biased_offset double,
    source varchar not null,
    loaded_at timestamp not null
);
"""

# the stored studies (tsrate.robustness.studies registers them and migrates older runs)
STUDIES_DDL = """
create schema if not exists raw;

create table if not exists raw.studies (
    study_id varchar primary key,
    study_name varchar not null,
    definition json not null,
    tickers varchar[] not null,
    study_start date not null,
    study_end date not null,
    context_length integer not null,
    horizon integer not null,
    stride integer not null,
    perturbation_phase integer not null,
    perturbations varchar[] not null,
    companies json not null,
    companies_source varchar not null,
    created_at timestamp not null
);

create table if not exists raw.study_imports (
    run_id varchar primary key,
    study_id varchar not null,
    system_id varchar not null,
    source varchar not null,
    file_sha256 varchar not null,
    imported_at timestamp not null
);

-- a system withdrawn from a study (`tsrate withdraw`): the study's marts leave out its
-- forecasts from runs started before the withdrawal; nothing is deleted
create table if not exists raw.study_withdrawals (
    study_id varchar not null,
    system_id varchar not null,
    withdrawn_at timestamp not null,
    reason varchar
);
"""


def create_raw_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create every raw table when missing (idempotent): the core's, the imported systems',
    the registered language models', ``raw.suite_runs`` and every registered suite's, in the order ``connect`` once did."""
    con.execute(CORE_DDL)
    con.execute(IMPORTED_SYSTEMS_DDL)
    con.execute(REGISTERED_LLMS_DDL)
    con.execute(STUDIES_DDL)
    con.execute(COMPANIES_DDL)
    create_suite_tables(con)


def migrate_legacy_suite_runs(con: duckdb.DuckDBPyConnection) -> None:
    """Copy the rows of the per-suite ``raw.<prefix>_suite_runs`` tables of older warehouses
    into ``raw.suite_runs`` (once; the old tables stay, untouched)."""
    legacy = {
        name
        for (name,) in con.execute(
            "select table_name from duckdb_tables() where schema_name = 'raw' "
            "and table_name like '%\\_suite\\_runs' escape '\\' and table_name <> 'suite_runs'"
        ).fetchall()
    }
    common = {"suite_run_id", "started_at", "finished_at", "status", "config", "message"}
    for suite in SUITES.values():
        table = f"{suite.prefix}_suite_runs"
        if table not in legacy:
            continue
        columns = [
            row[0]
            for row in con.execute(
                "select column_name from duckdb_columns() where schema_name = 'raw' "
                "and table_name = ? order by column_index",
                [table],
            ).fetchall()
        ]
        extra = [c for c in columns if c not in common]
        details = "json_object(" + ", ".join(f"'{c}', old.{c}" for c in extra) + ")"
        con.execute(
            f"insert into raw.suite_runs select '{suite.name}', old.suite_run_id, "
            f"old.started_at, old.finished_at, old.status, cast(old.config as json), "
            f"{details if extra else 'json_object()'}, old.message from raw.{table} as old "
            "where old.suite_run_id not in (select suite_run_id from raw.suite_runs)"
        )
