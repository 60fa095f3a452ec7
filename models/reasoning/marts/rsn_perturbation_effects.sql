{#- Section 5.3: each perturbed twin against its original, per system and condition. -#}
with

responses as (
    select * from {{ ref('int_rsn_responses_scored') }}
    where task in ('qa_two', 'qa_perturbed')
),

items as (
    select
        item_id,
        json_extract_string(params, '$.original_item_id') as original_item_id,
        cast(json_extract(params, '$.perturbed_index') as integer) as perturbed_index,
    from {{ ref('stg_rsn_items') }}
    where task = 'qa_perturbed'
),

paired as (
    select
        perturbed.suite_run_id,
        perturbed.system_id,
        perturbed.condition,
        perturbed.is_correct as correct_perturbed,
        original.is_correct as correct_original,
        -- the pair's difference: 1 lost, -1 gained, 0 the same (unanswered = wrong)
        (case when original.is_correct then 1.0 else 0.0 end)
            - (case when perturbed.is_correct then 1.0 else 0.0 end) as accuracy_difference,
        coalesce(perturbed.parsed_choice = items.perturbed_index, false) as lured,
        1.0 / perturbed.n_options as chance_level,
    from responses as perturbed
    inner join items on items.item_id = perturbed.item_id
    inner join responses as original
        on original.suite_run_id = perturbed.suite_run_id
        and original.system_id = perturbed.system_id
        and original.condition = perturbed.condition
        and original.item_id = items.original_item_id
    where perturbed.task = 'qa_perturbed'
),

aggregated as (
    select
        suite_run_id,
        system_id,
        condition,
        count(*) as n_pairs,
        avg(case when correct_original then 1.0 else 0.0 end) as accuracy_original,
        avg(case when correct_perturbed then 1.0 else 0.0 end) as accuracy_perturbed,
        count(*) filter (where correct_original and correct_perturbed) as n_both_correct,
        count(*) filter (where correct_original and not correct_perturbed) as n_lost,
        count(*) filter (where lured) as n_lured,
        avg(chance_level) as chance_level,
        -- t 95 % interval of the mean paired difference (the drop) over the pairs
        {{ mean_t_interval('accuracy_difference', 'low') }} as accuracy_drop_ci_low,
        {{ mean_t_interval('accuracy_difference', 'high') }} as accuracy_drop_ci_high,
    from paired
    group by suite_run_id, system_id, condition
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(system_id as varchar) as system_id,
        cast(condition as varchar) as condition,
        cast(n_pairs as integer) as n_pairs,
        cast(accuracy_original as double) as accuracy_original,
        cast(accuracy_perturbed as double) as accuracy_perturbed,
        cast(accuracy_original - accuracy_perturbed as double) as accuracy_drop,
        -- clipped to [-1, 1], the range of a difference of two accuracies (null stays null:
        -- greatest / least would skip it)
        cast(case when accuracy_drop_ci_low is not null
            then greatest(-1.0, accuracy_drop_ci_low) end as double) as accuracy_drop_ci_low,
        cast(case when accuracy_drop_ci_high is not null
            then least(1.0, accuracy_drop_ci_high) end as double) as accuracy_drop_ci_high,
        cast(n_both_correct as integer) as n_both_correct,
        cast(n_lost as integer) as n_lost,
        cast(n_lured as integer) as n_lured,
        cast(n_lured / n_pairs as double) as share_lured,
        cast(chance_level as double) as chance_level,
    from aggregated
)

select * from final
