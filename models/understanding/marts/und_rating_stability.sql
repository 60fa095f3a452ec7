{#- The kit's suite_rating_stability columns, plus ci_low / ci_high: the interval of each
    rated score over the same resamples (every rated score carries an interval, as the
    core's rating_stability gives one). -#}
with

computed as (
    select * from {{ ref('int_und_rating_stability_computed') }}
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(metric as varchar) as metric,
        cast(prompting as varchar) as prompting,
        cast(feature as varchar) as feature,
        cast(system_id as varchar) as system_id,
        cast(raw_score as double) as raw_score,
        cast(rating as integer) as rating,
        cast(rating_levels as integer) as rating_levels,
        cast(rating_reason as varchar) as rating_reason,
        cast(share_at_rating as double) as share_at_rating,
        cast(ci_low as double) as ci_low,
        cast(ci_high as double) as ci_high,
        cast(n_resamples as integer) as n_resamples,
        cast(n_prompts as integer) as n_prompts,
    from computed
)

select * from final
