with

provenance as (
    select * from {{ ref('int_run_provenance') }}
),

sources as (
    select * from {{ ref('int_source_run_inputs') }}
),

final as (
    select
        cast(provenance.run_id as varchar) as run_id,
        cast(provenance.system_id as varchar) as system_id,
        cast(provenance.tsrate_version as varchar) as tsrate_version,
        cast(provenance.git_revision as varchar) as git_revision,
        cast(provenance.git_reason as varchar) as git_reason,
        cast(provenance.dbt_version as varchar) as dbt_version,
        cast(provenance.duckdb_version as varchar) as duckdb_version,
        cast(provenance.study_hash as varchar) as study_hash,
        cast(provenance.price_rows as integer) as price_rows,
        cast(provenance.price_rows_fingerprint as varchar) as price_rows_fingerprint,
        cast(provenance.partitions as integer) as partitions,
        cast(provenance.partitions_fingerprint as varchar) as partitions_fingerprint,
        cast(provenance.training_data as varchar) as training_data,
        cast(provenance.training_cutoff as date) as training_cutoff,
        cast(provenance.training_data_reason as varchar) as training_data_reason,
        cast(sources.source_run_id as varchar) as source_run_id,
        cast(sources.source_days_changed as integer) as source_days_changed,
        cast(case
            when sources.source_run_id is null or sources.source_run_id = provenance.run_id
                then null
            when sources.source_days_changed is null
                then 'forecast in run ' || sources.source_run_id
                    || ', which stored no inputs to compare with this run''s series'
            when sources.source_days_changed > 0
                then 'forecast in run ' || sources.source_run_id || ' on other prices: '
                    || sources.source_days_changed || ' of ' || sources.source_days_compared
                    || ' ticker-days differ from this run''s series (first '
                    || strftime(sources.first_changed_date, '%Y-%m-%d')
                    || '); its scores compare forecasts of one series with another. '
                    || 'Forecast it again on this run''s inputs: tsrate run --systems '
                    || provenance.system_id
                    || ' (an imported model: tsrate export-inputs, then import-predictions)'
        end as varchar) as source_inputs_reason,
    from provenance
    left join sources
        on sources.run_id = provenance.run_id and sources.system_id = provenance.system_id
)

select * from final
