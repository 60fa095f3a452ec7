with

source as (
    select * from {{ source('interp_raw', 'interp_runs') }}
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
