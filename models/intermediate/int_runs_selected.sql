{#- The run the marts describe: env TSRATE_RUN_ID (what `tsrate build`/`run` set), else var
    run_id, else the newest run whose forecasts are complete ('latest'). An env var, not a
    --vars value: dbt re-parses only this file when it changes, where a new --vars value
    throws away the whole partial parse. -#}
{%- set run_id = env_var('TSRATE_RUN_ID', '') or var('run_id', 'latest') -%}
with

runs as (
    select * from {{ ref('stg_runs') }}
),

final as (
    select *
    from runs
    {% if run_id == 'latest' %}
    where run_status in ('forecasted', 'succeeded')
    qualify row_number() over (order by started_at desc, run_id desc) = 1
    {% else %}
    where run_id = '{{ run_id }}'
    {% endif %}
)

select * from final
