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

{#- The suite run a suite's marts describe (at most one row): env TSRATE_<RUN_VAR> (what a
    suite's build sets, e.g. TSRATE_UND_SUITE_RUN_ID), else the dbt var `run_var`, or for
    'latest' the newest run in status `ready_status` or succeeded. The env var is read only
    when the model runs (`execute`), never while dbt parses: a new suite run id then keeps
    dbt's partial parse (a changed --vars value re-parses the whole project). -#}
{% macro select_suite_run(suite_runs_model, run_var, ready_status) %}
{%- set requested = (env_var('TSRATE_' ~ run_var | upper, '') if execute else '') or var(run_var, 'latest') -%}
with

suite_runs as (
    select * from {{ ref(suite_runs_model) }}
),

final as (
    select *
    from suite_runs
    {% if requested == 'latest' %}
    where suite_run_status in ('{{ ready_status }}', 'succeeded')
    qualify row_number() over (order by started_at desc, suite_run_id desc) = 1
    {% else %}
    where suite_run_id = '{{ requested }}'
    {% endif %}
)

select * from final
{% endmacro %}

{#- A suite's ratings mart: the rows of its ratings model (tsrate.suites.rating.rate_scores)
    cast to the contract, with how many systems share each rated group. `keys` are the
    group columns besides suite_run_id and metric; `system` names the rated column and
    `count_name` the column counting it. With `reasons`, the mart also carries rate_scores'
    `rating_reason` (why a rating is null or rated by its distance from the ideal) and
    `count_name` counts only the systems that entered the comparison (non-null rank). -#}
{% macro suite_ratings(assigned_model, keys, system, count_name, reasons=false) %}
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
        {%- if reasons %}
        cast(rating_reason as varchar) as rating_reason,
        cast(count(rank) over (partition by suite_run_id, metric{% for key in keys %}, {{ key }}{% endfor %}) as integer) as {{ count_name }},
        {%- else %}
        cast(count(*) over (partition by suite_run_id, metric{% for key in keys %}, {{ key }}{% endfor %}) as integer) as {{ count_name }},
        {%- endif %}
    from assigned
)

select * from final
{% endmacro %}

{#- A suite's rating-stability mart: the rows of its stability model (share of resamples at
    each published rating) cast to the contract. `key` is the rated group's column besides
    suite_run_id and metric (task, feature, ...), or a list of such columns; `count_name`
    counts the resampled units (items, prompts, seeds); `system` names the rated column
    (system_id, model_id). -#}
{#- interval=true adds ci_low / ci_high: the interval of each rated score over the same
    resamples (understanding and reasoning compute it; interpretability does not). -#}
{% macro suite_rating_stability(computed_model, key, count_name, system='system_id', interval=false) %}
{%- set keys = [key] if key is string else key -%}
with

computed as (
    select * from {{ ref(computed_model) }}
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(metric as varchar) as metric,
        {%- for k in keys %}
        cast({{ k }} as varchar) as {{ k }},
        {%- endfor %}
        cast({{ system }} as varchar) as {{ system }},
        cast(raw_score as double) as raw_score,
        cast(rating as integer) as rating,
        cast(rating_levels as integer) as rating_levels,
        cast(rating_reason as varchar) as rating_reason,
        cast(share_at_rating as double) as share_at_rating,
        {%- if interval %}
        cast(ci_low as double) as ci_low,
        cast(ci_high as double) as ci_high,
        {%- endif %}
        cast(n_resamples as integer) as n_resamples,
        cast({{ count_name }} as integer) as {{ count_name }},
    from computed
)

select * from final
{% endmacro %}
