{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('interp_raw', 'interp_runs') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='interp_runs') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('interp_raw', 'interp_runs') }}
    {%- else %}
    select null as run_key, null as variant_key, null as model_id, null as seed, null as config_name, null as settings, null as device, null as n_series, null as train_mse, null as test_mse, null as loss_history, null as seconds, null as finished_at limit 0
    {%- endif %}
),

renamed as (
    select
        cast(run_key as varchar) as run_key,
        cast(variant_key as varchar) as variant_key,
        cast(model_id as varchar) as model_id,
        cast(seed as integer) as seed,
        cast(config_name as varchar) as config_name,
        cast(settings as json) as settings,
        cast(device as varchar) as device,
        cast(n_series as integer) as n_series,
        cast(train_mse as double) as train_mse,
        cast(test_mse as double) as test_mse,
        cast(loss_history as double[]) as loss_history,
        cast(seconds as double) as train_seconds,
        cast(finished_at as timestamp) as finished_at,
    from source
)

select * from renamed
