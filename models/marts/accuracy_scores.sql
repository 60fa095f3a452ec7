with

window_errors as (
    select * from {{ ref('window_errors') }}
),

{#- include nulls: a system whose every value of a metric is null (e.g. MASE on a flat
    context) keeps its row, with a null mean and n = 0, so ratings lists it unrated with
    the reason instead of leaving it out without a word. -#}
long as (
    select * from window_errors
    unpivot include nulls (metric_value for metric in (smape, mase, sign_accuracy))
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
