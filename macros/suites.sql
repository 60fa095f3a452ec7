{#- The suite kit's dbt half (tsrate.suites; recipe in docs/suites/README.md). -#}

{#- Staging view of one suite's runs: the rows of raw.suite_runs whose suite is `suite`,
    renamed and cast like every suite's; `details` lists the suite's own columns as
    (name, type) pairs, read from the raw `details` JSON object. -#}
{% macro stg_suite_runs(suite, details) %}
with

source as (
    select * from {{ source('raw', 'suite_runs') }}
    where suite = '{{ suite }}'
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(started_at as timestamp) as started_at,
        cast(finished_at as timestamp) as finished_at,
        cast(status as varchar) as suite_run_status,
        cast(config as json) as config,
        {%- for name, type in details %}
        cast(details ->> '{{ name }}' as {{ type }}) as {{ name }},
        {%- endfor %}
        cast(message as varchar) as suite_run_message,
    from source
)

select * from renamed
{% endmacro %}

{#- The suite run a suite's marts describe (at most one row): the dbt var `run_var`, or
    for 'latest' the newest run in status `ready_status` or succeeded. -#}
{% macro select_suite_run(suite_runs_model, run_var, ready_status) %}
with

suite_runs as (
    select * from {{ ref(suite_runs_model) }}
),

final as (
    select *
    from suite_runs
    {% if var(run_var, 'latest') == 'latest' %}
    where suite_run_status in ('{{ ready_status }}', 'succeeded')
    qualify row_number() over (order by started_at desc, suite_run_id desc) = 1
    {% else %}
    where suite_run_id = '{{ var(run_var) }}'
    {% endif %}
)

select * from final
{% endmacro %}

{#- A suite's ratings mart: the rows of its ratings model (tsrate.suites.rating.rate_scores)
    cast to the contract, with how many systems share each rated group. `keys` are the
    group columns besides suite_run_id and metric; `system` names the rated column and
    `count_name` the column counting it; `reason` adds rate_scores' rating_reason (why a
    rating is null, or was given by its distance from the ideal). -#}
{% macro suite_ratings(assigned_model, keys, system, count_name, reason=false) %}
with

assigned as (
    select * from {{ ref(assigned_model) }}
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(metric as varchar) as metric,
        {%- for key in keys %}
        cast({{ key }} as varchar) as {{ key }},
        {%- endfor %}
        cast({{ system }} as varchar) as {{ system }},
        cast(raw_score as double) as raw_score,
        cast(rating as integer) as rating,
        cast(rating_levels as integer) as rating_levels,
        cast(higher_is_better as boolean) as higher_is_better,
        cast(rank as integer) as rank,
        {%- if reason %}
        cast(rating_reason as varchar) as rating_reason,
        {%- endif %}
        cast(count(*) over (partition by suite_run_id, metric{% for key in keys %}, {{ key }}{% endfor %}) as integer) as {{ count_name }},
    from assigned
)

select * from final
{% endmacro %}
