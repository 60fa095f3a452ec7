with

source as (
    select * from {{ source('raw', 'runs') }}
),

renamed as (
    select
        cast(run_id as varchar) as run_id,
        cast(started_at as timestamp) as started_at,
        cast(finished_at as timestamp) as finished_at,
        cast(status as varchar) as run_status,
        cast(study_hash as varchar) as study_hash,
        cast(study as json) as study,
        {#- raw.runs.study_id is added by tsrate.robustness.studies.ensure_studies at the
            writing edges; a warehouse not yet migrated treats each run as its own study. #}
        {%- set run_columns = adapter.get_columns_in_relation(source('raw', 'runs')) | map(attribute='name') | map('lower') | list if execute else [] %}
        cast({{ 'study_id' if 'study_id' in run_columns else 'run_id' }} as varchar) as study_id,
        tickers,
        systems,
        perturbations,
        cast(study_start as date) as study_start,
        cast(study_end as date) as study_end,
        cast(context_length as integer) as context_length,
        cast(horizon as integer) as horizon,
        cast(stride as integer) as stride,
        cast(perturbation_phase as integer) as perturbation_phase,
        cast(message as varchar) as run_message,
    from source
)

select * from renamed
