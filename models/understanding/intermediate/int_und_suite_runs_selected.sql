{#- The suite run the marts describe: var und_suite_run_id, or the newest answered one. -#}
with

suite_runs as (
    select * from {{ ref('stg_und_suite_runs') }}
),

final as (
    select *
    from suite_runs
    {% if var('und_suite_run_id', 'latest') == 'latest' %}
    where status in ('answered', 'succeeded')
    qualify row_number() over (order by started_at desc, suite_run_id desc) = 1
    {% else %}
    where suite_run_id = '{{ var("und_suite_run_id") }}'
    {% endif %}
)

select * from final
