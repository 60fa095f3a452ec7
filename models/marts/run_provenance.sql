with

provenance as (
    select * from {{ ref('int_run_provenance') }}
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(system_id as varchar) as system_id,
        cast(tsrate_version as varchar) as tsrate_version,
        cast(git_revision as varchar) as git_revision,
        cast(git_reason as varchar) as git_reason,
        cast(dbt_version as varchar) as dbt_version,
        cast(duckdb_version as varchar) as duckdb_version,
        cast(study_hash as varchar) as study_hash,
        cast(price_rows as integer) as price_rows,
        cast(price_rows_fingerprint as varchar) as price_rows_fingerprint,
        cast(partitions as integer) as partitions,
        cast(partitions_fingerprint as varchar) as partitions_fingerprint,
        cast(training_data as varchar) as training_data,
        cast(training_cutoff as date) as training_cutoff,
        cast(training_data_reason as varchar) as training_data_reason,
    from provenance
)

select * from final
