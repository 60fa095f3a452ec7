"""Raw tables of the interpretability suite, defined once: variants, truth, runs, outputs."""

DDL = """
create table if not exists raw.interp_suite_run_variants (
    suite_run_id varchar not null,
    variant_key varchar not null,
    study varchar not null,
    parameter varchar,
    parameter_value double,
    primary key (suite_run_id, variant_key, study)
);

create table if not exists raw.interp_suite_run_units (
    suite_run_id varchar not null,
    run_key varchar not null,
    reused boolean not null,
    primary key (suite_run_id, run_key)
);

create table if not exists raw.interp_variants (
    variant_key varchar primary key,
    variant_id varchar not null,
    dataset_id integer not null,
    n_series integer not null,
    length integer not null,
    params json not null,
    created_at timestamp not null
);

create table if not exists raw.interp_truth (
    variant_key varchar not null,
    target_index integer not null,
    source_index integer not null,
    lag integer not null,
    weight double not null,
    primary key (variant_key, target_index, source_index, lag)
);

create table if not exists raw.interp_runs (
    run_key varchar primary key,
    variant_key varchar not null,
    model_id varchar not null,
    seed integer not null,
    config_name varchar not null,
    settings json not null,
    device varchar not null,
    n_series integer not null,
    train_mse double not null,
    test_mse double not null,
    loss_history double[] not null,
    seconds double not null,
    finished_at timestamp not null
);

create table if not exists raw.interp_scores (
    run_key varchar not null,
    series_index integer not null,
    split varchar not null check (split in ('train', 'test')),
    mse double not null,
    primary key (run_key, series_index, split)
);

create table if not exists raw.interp_predictions (
    run_key varchar not null,
    series_index integer not null,
    time_index integer not null,
    actual double not null,
    prediction double not null,
    primary key (run_key, series_index, time_index)
);

create table if not exists raw.interp_attention (
    run_key varchar not null,
    attention varchar not null check (attention in ('beta', 'alpha', 'tcdf_picks')),
    target_index integer not null,
    source_index integer not null,
    lag integer,
    value double not null
);
"""
