with

scored as (
    select * from {{ ref('int_rsn_forecasts_scored') }}
),

paired as (
    select
        without_context.suite_run_id,
        without_context.system_id,
        without_context.item_id,
        without_context.mae as mae_without_context,
        with_context.mae as mae_with_context,
        without_context.mse as mse_without_context,
        with_context.mse as mse_with_context,
    from scored as without_context
    inner join scored as with_context
        on with_context.suite_run_id = without_context.suite_run_id
        and with_context.system_id = without_context.system_id
        and with_context.item_id = without_context.item_id
        and with_context.condition = 'with_context'
    where without_context.condition = 'without_context'
        -- a gain compares a system with itself: only items where both forecasts are usable
        and without_context.usable and with_context.usable
),

aggregated as (
    select
        suite_run_id,
        system_id,
        count(*) as n_paired,
        avg(mae_without_context) as mae_without_context,
        avg(mae_with_context) as mae_with_context,
        avg(mse_without_context) as mse_without_context,
        avg(mse_with_context) as mse_with_context,
        avg(case when mae_with_context < mae_without_context then 1.0 else 0.0 end) as share_improved,
    from paired
    group by suite_run_id, system_id
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(system_id as varchar) as system_id,
        cast(n_paired as integer) as n_paired,
        cast(mae_without_context as double) as mae_without_context,
        cast(mae_with_context as double) as mae_with_context,
        cast(mae_without_context - mae_with_context as double) as mae_gain,
        cast(mse_without_context as double) as mse_without_context,
        cast(mse_with_context as double) as mse_with_context,
        cast(mse_without_context - mse_with_context as double) as mse_gain,
        cast(share_improved as double) as share_improved,
    from aggregated
)

select * from final
