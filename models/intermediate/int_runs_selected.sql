{#- The run the marts describe: env TSRATE_RUN_ID (what `tsrate build`/`run` set), else var
    run_id, else the newest run whose forecasts are complete ('latest'). An env var, not a
    --vars value: a new --vars value throws away the whole partial parse. And read only when
    the model runs (`execute`), never while dbt parses it: an env var read at parse time is
    recorded in the partial-parse state, and each new run id would re-parse this file (and
    re-process the whole manifest); read at run time, a rerun parses nothing. -#}
{%- set run_id = (env_var('TSRATE_RUN_ID', '') if execute else '') or var('run_id', 'latest') -%}
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
