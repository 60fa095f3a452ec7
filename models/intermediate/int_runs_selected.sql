{#- The run the marts describe: var run_id, or the newest run whose forecasts are complete. -#}
with

runs as (
    select * from {{ ref('stg_runs') }}
),

final as (
    select *
    from runs
    {% if var('run_id', 'latest') == 'latest' %}
    where run_status in ('forecasted', 'succeeded')
    qualify row_number() over (order by started_at desc, run_id desc) = 1
    {% else %}
    where run_id = '{{ var("run_id") }}'
    {% endif %}
)

select * from final
