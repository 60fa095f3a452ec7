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

{#- The run a layer of marts describes (at most one row): env TSRATE_<RUN_VAR> (what a
    build sets, e.g. TSRATE_UND_SUITE_RUN_ID, or TSRATE_RUN_ID for the core), else the dbt var
    `run_var`, or for 'latest' the newest run in status `ready_status` or succeeded.
    `id_column` / `status_column` name the run's id and status (a suite run's by default; the
    core's runs: run_id, run_status). The env var is read only when the model runs
    (`execute`), never while dbt parses: a new run id then keeps dbt's partial parse (a
    changed --vars value re-parses the whole project). -#}
{% macro select_suite_run(suite_runs_model, run_var, ready_status, id_column='suite_run_id', status_column='suite_run_status') %}
{%- set requested = (env_var('TSRATE_' ~ run_var | upper, '') if execute else '') or var(run_var, 'latest') -%}
with

suite_runs as (
    select * from {{ ref(suite_runs_model) }}
),

final as (
    select *
    from suite_runs
    {% if requested == 'latest' %}
    where {{ status_column }} in ('{{ ready_status }}', 'succeeded')
    qualify row_number() over (order by started_at desc, {{ id_column }} desc) = 1
    {% else %}
    where {{ id_column }} = '{{ requested }}'
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
    each published rating, with its Monte Carlo standard error share_mc_se) cast to the
    contract. `key` is the rated group's column besides
    suite_run_id and metric (task, feature, ...), or a list of such columns; `count_name`
    counts the resampled units (items, prompts, seeds); `system` names the rated column
    (system_id, model_id); `interval=true` adds ci_low / ci_high, the interval of each
    rated score over the same resamples (understanding and reasoning compute it;
    interpretability does not). -#}
{% macro suite_rating_stability(computed_model, key, count_name, system='system_id', interval=false) %}
{%- set keys = [key] if key is string else key -%}
{%- set counts = [count_name] if count_name is string else count_name -%}
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
        cast(share_mc_se as double) as share_mc_se,
        {%- if interval %}
        cast(ci_low as double) as ci_low,
        cast(ci_high as double) as ci_high,
        {%- endif %}
        cast(n_resamples as integer) as n_resamples,
        {%- for c in counts %}
        cast({{ c }} as integer) as {{ c }},
        {%- endfor %}
        cast(n_resamples_undefined as integer) as n_resamples_undefined,
    from computed
)

select * from final
{% endmacro %}

{#- Interval conventions in SQL, for suite marts computed in SQL (the Python ones:
    tsrate.suites.intervals). Each macro is an expression; the aggregate ones are used in a
    GROUP BY select. -#}

{#- One end (side 'low' or 'high') of the Wilson score 95 % interval of successes / trials,
    as tsrate.suites.intervals.wilson_interval computes it (equal to statsmodels'
    proportion_confint(method='wilson')): null for no trials; exactly 0 (low) at no success
    and 1 (high) at all successes; clipped to [0, 1]. -#}
{% macro wilson_interval(successes, trials, side) %}
{%- set k = '(cast(' ~ successes ~ ' as double))' -%}
{%- set n = '(cast(' ~ trials ~ ' as double))' -%}
{%- set z = 1.959963984540054 -%}  {#- scipy.stats.norm.ppf(0.975) -#}
(case when {{ n }} > 0 then
    {%- if side == 'low' %}
    case when {{ k }} = 0 then 0.0 else greatest(0.0,
    {%- elif side == 'high' %}
    case when {{ k }} = {{ n }} then 1.0 else least(1.0,
    {%- else %}
    {{ exceptions.raise_compiler_error("wilson_interval: side must be 'low' or 'high', not " ~ side) }}
    {%- endif %}
        ({{ k }} / {{ n }} + {{ z }} * {{ z }} / (2 * {{ n }})
         {{ '-' if side == 'low' else '+' }} {{ z }} * sqrt({{ k }} / {{ n }} * (1 - {{ k }} / {{ n }}) / {{ n }}
             + {{ z }} * {{ z }} / (4 * {{ n }} * {{ n }})))
        / (1 + {{ z }} * {{ z }} / {{ n }})) end
end)
{%- endmacro %}

{#- Effective counts of a proportion whose items are grouped in sampled units (clusters: the
    series several questions ask about), as tsrate.suites.intervals.clustered_counts
    computes them: a subquery (not an expression) with one row per `keys` group of
    `relation`: n_clusters, n_effective and successes_effective, the item counts divided
    by the design effect d = sum_i (y_i - p m_i)^2 / (n p (1 - p)) (Rao & Scott 1992;
    cluster i holds m_i items of which y_i succeed, n items, p = successes / n) floored at
    1, and design_effect = n / n_effective. One item per cluster: d = 1 exactly (the plain
    counts); p = 0 or 1 (d undefined): each cluster counts once. `success` is a boolean
    expression (null counts as failure), `cluster` the unit's column; join the result to
    the groups on `keys` and pass successes_effective and n_effective to wilson_interval. -#}
{% macro clustered_counts(relation, keys, success, cluster) %}
{%- set by = keys | join(', ') -%}
(
    with per_cluster as (
        select
            {{ by }},
            cast(count(*) as double) as m,
            cast(count(*) filter (where {{ success }}) as double) as y,
        from {{ relation }}
        group by {{ by }}, {{ cluster }}
    ),
    shared as (
        select
            *,
            sum(y) over grp / sum(m) over grp as p,
            sum(m) over grp as n,
            count(*) over grp as c,
        from per_cluster
        window grp as (partition by {{ by }})
    ),
    grouped as (
        select
            {{ by }},
            any_value(c) as n_clusters,
            any_value(n) as n,
            any_value(p) as p,
            case
                when any_value(p) in (0.0, 1.0) then cast(any_value(c) as double)
                when any_value(c) = any_value(n) then any_value(n)
                else any_value(n) / greatest(1.0,
                    sum((y - p * m) * (y - p * m)) / (any_value(n) * any_value(p) * (1 - any_value(p))))
            end as n_effective,
        from shared
        group by {{ by }}
    )
    select
        {{ by }},
        cast(n_clusters as integer) as n_clusters,
        n_effective,
        p * n_effective as successes_effective,
        n / n_effective as design_effect,
    from grouped
)
{%- endmacro %}

{#- Student t's 97.5 % quantile for `df` degrees of freedom (an integer expression >= 1;
    null below): scipy.stats.t.ppf(0.975, df) for df 1-30 (a table of its values), beyond
    the Cornish-Fisher expansion to df^-4 (Abramowitz & Stegun 26.7.5; relative error
    below 2e-8 at df 31 and smaller beyond: tests/unit/test_suite_kit.py checks both). -#}
{% macro t_quantile_975(df) %}
{%- set z = 1.959963984540054 -%}
{%- set g1 = (z ** 3 + z) / 4 -%}
{%- set g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96 -%}
{%- set g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384 -%}
{%- set g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160 -%}
{%- set v = '(cast(' ~ df ~ ' as double))' -%}
(case
    when ({{ df }}) between 1 and 30 then ([
        12.706204736174694, 4.302652729749462, 3.1824463052837078, 2.7764451051977934,
        2.5705818356363146, 2.4469118511449786, 2.364624251592784, 2.306004135204166,
        2.262157162798205, 2.228138851986274, 2.200985160091639, 2.1788128296672284,
        2.1603686564627913, 2.144786687917804, 2.131449545559776, 2.1199052992212546,
        2.1098155778333156, 2.1009220402410382, 2.0930240544083087, 2.085963447265864,
        2.0796138447276795, 2.0738730679040254, 2.0686576104190486, 2.0638985616280245,
        2.0595385527532972, 2.0555294386428735, 2.0518305164802846, 2.0484071417952454,
        2.045229642132703, 2.0422724563012378
    ])[cast({{ df }} as integer)]
    when ({{ df }}) > 30 then {{ z }} + {{ g1 }} / {{ v }} + {{ g2 }} / ({{ v }} ^ 2)
        + {{ g3 }} / ({{ v }} ^ 3) + {{ g4 }} / ({{ v }} ^ 4)
end)
{%- endmacro %}

{#- One end (side 'low' or 'high') of the t 95 % interval of the mean of `x` over the rows
    of the group (an aggregate expression): mean ± t_{0.975, n-1} · sd / sqrt(n), sd the
    sample standard deviation (n - 1 in the denominator), n the non-null values; null when
    n < 2. Used for the mean of paired differences (one difference per item). -#}
{% macro mean_t_interval(x, side) %}
{%- if side not in ('low', 'high') -%}
{{ exceptions.raise_compiler_error("mean_t_interval: side must be 'low' or 'high', not " ~ side) }}
{%- endif -%}
(case when count({{ x }}) >= 2 then
    avg({{ x }}) {{ '-' if side == 'low' else '+' }} {{ t_quantile_975('count(' ~ x ~ ') - 1') }}
        * stddev_samp({{ x }}) / sqrt(count({{ x }}))
end)
{%- endmacro %}
