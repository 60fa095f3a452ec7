{#- ARQ1-ARQ3 (paper Figures 7-9): every robustness and accuracy metric averaged by group of
    systems, the groups read from the systems seed. Each system counts once: its
    system_summary average (over its perturbations) is averaged over the group's systems. -#}
{%- set baseline_families = var('baseline_families') -%}
with

summary as (
    select * from {{ ref('system_summary') }}
),

systems as (
    select * from {{ ref('stg_systems') }}
),

labelled as (
    select
        summary.run_id,
        summary.system_id,
        summary.metric,
        summary.metric_family,
        summary.higher_is_better,
        summary.rating_levels,
        summary.avg_raw_score,
        summary.avg_rating,
        {% if baseline_families -%}
        coalesce(systems.family in ('{{ baseline_families | join("', '") }}'), false) as is_baseline,
        {%- else -%}
        false as is_baseline,
        {%- endif %}
        case
            when systems.is_foundation_model then 'foundation'
            when not systems.is_foundation_model then 'non-foundation'
        end as foundation_group,
        case systems.modality
            when 'numeric' then 'uni-modal'
            when 'numeric+image' then 'multi-modal'
        end as modality_group,
        case systems.purpose
            when 'time-series' then 'time-series-specific'
            when 'general-purpose' then 'general-purpose'
        end as purpose_group,
        case
            when systems.architecture in ('encoder-only', 'decoder-only', 'encoder-decoder')
                then systems.architecture
        end as architecture_group,
    from summary
    inner join systems
        on systems.system_id = summary.system_id
),

grouped as (
    select *, 'foundation' as comparison, foundation_group as group_name from labelled
    union all
    select *, 'modality' as comparison, modality_group as group_name from labelled
    union all
    select *, 'purpose' as comparison, purpose_group as group_name from labelled
    union all
    select *, 'architecture' as comparison, architecture_group as group_name from labelled
),

scoped as (
    select
        grouped.*,
        scopes.system_scope,
    from grouped
    cross join (values ('all_systems'), ('without_baselines')) as scopes (system_scope)
    where grouped.group_name is not null
        and (scopes.system_scope = 'all_systems' or not grouped.is_baseline)
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(system_scope as varchar) as system_scope,
        cast(comparison as varchar) as comparison,
        cast(group_name as varchar) as group_name,
        cast(metric as varchar) as metric,
        cast(any_value(metric_family) as varchar) as metric_family,
        cast(count(*) as integer) as n_systems,
        cast(string_agg(system_id, ' ' order by system_id) as varchar) as system_ids,
        cast(avg(avg_raw_score) as double) as avg_raw_score,
        cast(min(avg_raw_score) as double) as min_system_score,
        cast(max(avg_raw_score) as double) as max_system_score,
        cast(avg(avg_rating) as double) as avg_rating,
        cast(any_value(rating_levels) as integer) as rating_levels,
        cast(bool_and(higher_is_better) as boolean) as higher_is_better,
    from scoped
    group by run_id, system_scope, comparison, group_name, metric
)

select * from final
