with

attention as (
    select * from {{ ref('int_interp_attention_selected') }}
),

truth as (
    select * from {{ ref('stg_interp_truth') }}
),

truth_by_pair as (
    select variant_key, target_index, source_index, sum(weight) as true_weight
    from truth
    group by variant_key, target_index, source_index
),

aggregated as (
    select
        suite_run_id,
        variant_key,
        variant_id,
        model_id,
        attention,
        target_index,
        source_index,
        lag,
        avg(value) as mean_value,
        stddev_samp(value) as std_value,
        count(*) as n_runs,
    from attention
    group by all
),

judged as (
    select
        *,
        -- DA-RNN's input attention never covers the target itself: its beta diagonal is 0
        -- on every seed by construction (a structural zero), not a measured attention
        not (
            model_id = 'darnn' and attention = 'beta'
            and coalesce(target_index = source_index, false)
        ) as applicable,
    from aggregated
),

final as (
    select
        cast(aggregated.suite_run_id as varchar) as suite_run_id,
        cast(aggregated.variant_id as varchar) as variant_id,
        cast(aggregated.model_id as varchar) as model_id,
        cast(aggregated.attention as varchar) as attention,
        cast(aggregated.target_index as integer) as target_index,
        cast(aggregated.source_index as integer) as source_index,
        cast(aggregated.lag as integer) as lag,
        cast(case when aggregated.applicable then aggregated.mean_value end as double) as mean_value,
        cast(case when aggregated.applicable then aggregated.std_value end as double) as std_value,
        cast(aggregated.n_runs as integer) as n_runs,
        cast(aggregated.applicable as boolean) as applicable,
        cast(
            case
                when aggregated.lag is null then coalesce(truth_by_pair.true_weight, 0)
                else coalesce(truth.weight, 0)
            end as double
        ) as true_weight,
    from judged as aggregated
    left join truth_by_pair
        on truth_by_pair.variant_key = aggregated.variant_key
        and truth_by_pair.target_index = aggregated.target_index
        and truth_by_pair.source_index = aggregated.source_index
    left join truth
        on truth.variant_key = aggregated.variant_key
        and truth.target_index = aggregated.target_index
        and truth.source_index = aggregated.source_index
        and truth.lag = aggregated.lag
)

select * from final
