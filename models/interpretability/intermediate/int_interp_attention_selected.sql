{#- Attention rows of the selected suite run's training runs. -#}
with

runs as (
    select * from {{ ref('int_interp_runs_selected') }}
),

attention as (
    select * from {{ ref('stg_interp_attention') }}
),

final as (
    select
        runs.suite_run_id,
        runs.run_key,
        runs.variant_key,
        runs.variant_id,
        runs.model_id,
        runs.seed,
        attention.attention,
        attention.target_index,
        attention.source_index,
        attention.lag,
        attention.value,
    from runs
    inner join attention on attention.run_key = runs.run_key
)

select * from final
