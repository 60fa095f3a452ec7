with

window_errors as (
    select * from {{ ref('window_errors') }}
),

long as (
    unpivot window_errors
    on smape, mase, sign_accuracy
    into name metric value metric_value
),

final as (
    select
        run_id,
        system_id,
        perturbation_id,
        cast(metric as varchar) as metric,
        avg(metric_value) as mean,
        stddev_samp(metric_value) as std,
        cast(count(metric_value) as integer) as n,
        metric = 'sign_accuracy' as higher_is_better,
    from long
    group by run_id, system_id, perturbation_id, metric
)

select * from final
