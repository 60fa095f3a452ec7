{#- Figure A.5: each context combination against the same system's forecast without context. -#}
with

scored as (
    select * from {{ ref('int_rsn_forecasts_scored') }}
),

paired as (
    select
        with_context.suite_run_id,
        with_context.system_id,
        with_context.condition,
        with_context.item_id,
        without_context.mae as mae_without_context,
        with_context.mae as mae_with_context,
        without_context.mse as mse_without_context,
        with_context.mse as mse_with_context,
    from scored as with_context
    inner join scored as without_context
        on without_context.suite_run_id = with_context.suite_run_id
        and without_context.system_id = with_context.system_id
        and without_context.item_id = with_context.item_id
        and without_context.condition = 'without_context'
    where with_context.condition <> 'without_context'
        -- a gain compares a system with itself: only items where both forecasts are usable
        and without_context.usable and with_context.usable
),

aggregated as (
    select
        suite_run_id,
        system_id,
        condition,
        count(*) as n_paired,
        avg(mae_without_context) as mae_without_context,
        avg(mae_with_context) as mae_with_context,
        avg(mse_without_context) as mse_without_context,
        avg(mse_with_context) as mse_with_context,
        count(*) filter (where mae_with_context < mae_without_context) as n_improved,
        -- t 95 % interval of the mean paired difference (the gain) over the items
        {{ mean_t_interval('mae_without_context - mae_with_context', 'low') }} as mae_gain_ci_low,
        {{ mean_t_interval('mae_without_context - mae_with_context', 'high') }} as mae_gain_ci_high,
    from paired
    group by suite_run_id, system_id, condition
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(system_id as varchar) as system_id,
        cast(condition as varchar) as condition,
        cast(case condition
            when 'with_context' then 'Ca'
            when 'with_characteristics' then 'Ch'
            when 'with_context_metadata' then 'CaMe'
            when 'with_characteristics_metadata' then 'ChMe'
            when 'with_all_context' then 'all'
        end as varchar) as paper_label,
        cast(n_paired as integer) as n_paired,
        cast(mae_without_context as double) as mae_without_context,
        cast(mae_with_context as double) as mae_with_context,
        cast(mae_without_context - mae_with_context as double) as mae_gain,
        cast(mae_gain_ci_low as double) as mae_gain_ci_low,
        cast(mae_gain_ci_high as double) as mae_gain_ci_high,
        cast(mse_without_context as double) as mse_without_context,
        cast(mse_with_context as double) as mse_with_context,
        cast(mse_without_context - mse_with_context as double) as mse_gain,
        cast(n_improved as integer) as n_improved,
        cast(n_improved / n_paired as double) as share_improved,
    from aggregated
)

select * from final
