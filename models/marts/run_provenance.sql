{#- The analysis settings: every dbt var that changes a published number of the core marts,
    resolved as this build saw them (dbt_project.yml, then --vars), as one JSON object with
    the keys in this order, then the confidence levels of the weighted rejection score (the
    confidence_levels seed) and the selection scope. A var read by a core model and missing
    here is a unit test's failure (tests/unit/test_run_provenance_settings.py). -#}
{%- set analysis_vars = [
    'rating_levels', 'robustness_outcome', 'robustness_outcomes',
    'causal_seed', 'treatment_draws', 'matching_estimand', 'effect_strata',
    'distribution_aggregation', 'confounder_distributions', 'max_company_distributions',
    'bootstrap_seed', 'bootstrap_resamples', 'bootstrap_block_length', 'bootstrap_confidence',
    'bootstrap_effect_distributions',
    'leaderboard_baseline', 'leaderboard_bootstrap_seed', 'leaderboard_bootstrap_resamples',
    'baseline_families',
] -%}
{%- set settings = {} -%}
{%- for name in analysis_vars -%}
    {%- do settings.update({name: var(name)}) -%}
{%- endfor %}
with

provenance as (
    select * from {{ ref('int_run_provenance') }}
),

sources as (
    select * from {{ ref('int_source_run_inputs') }}
),

confidence as (
    select
        to_json(list({'confidence': confidence, 'weight': weight} order by confidence desc))
            as levels,
    from {{ ref('confidence_levels') }}
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
        cast(provenance.study_id as varchar) as study_id,
        cast(provenance.study_hash as varchar) as study_hash,
        cast(json_merge_patch(
            '{{ tojson(settings) | replace("'", "''") }}',
            json_object('confidence_levels', confidence.levels,
                        'run_scope', provenance.selection_scope)
        ) as varchar) as analysis_settings,
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
    cross join confidence
    left join sources
        on sources.run_id = provenance.run_id and sources.system_id = provenance.system_id
)

select * from final
