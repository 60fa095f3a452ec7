{#- The run the marts describe (its "anchor") and how wide the selection is.

    Run: env TSRATE_RUN_ID (what `tsrate build`/`run` set), else var run_id, else the newest
    run whose forecasts are complete ('latest'); with env TSRATE_STUDY_ID (or var study_id)
    not 'latest', only runs of that study are candidates. Scope (env TSRATE_RUN_SCOPE, else
    var run_scope): 'study' (default) rates every system of the run's study as of this run
    (int_run_partitions_selected), 'run' only the run's own partitions (`tsrate build
    --run-id`). Env vars, not --vars values: a new --vars value throws away the whole
    partial parse; read only when the model runs. -#}
{%- set requested_run = (env_var('TSRATE_RUN_ID', '') if execute else '') or var('run_id', 'latest') -%}
{%- set requested_study = (env_var('TSRATE_STUDY_ID', '') if execute else '') or var('study_id', 'latest') -%}
{%- set scope = (env_var('TSRATE_RUN_SCOPE', '') if execute else '') or var('run_scope', 'study') -%}
{%- if scope not in ('study', 'run') -%}
    {{ exceptions.raise_compiler_error("run_scope must be 'study' or 'run', got '" ~ scope ~ "'") }}
{%- endif %}
with

runs as (
    select * from {{ ref('stg_runs') }}
),

final as (
    select
        *,
        cast('{{ scope }}' as varchar) as selection_scope,
    from runs
    where true
    {%- if requested_study != 'latest' %}
        and study_id = '{{ requested_study }}'
    {%- endif %}
    {%- if requested_run == 'latest' %}
        and run_status in ('forecasted', 'succeeded', 'publish_failed')
    qualify row_number() over (order by started_at desc, run_id desc) = 1
    {%- else %}
        and run_id = '{{ requested_run }}'
    {%- endif %}
)

select * from final
