with

source as (
    select * from {{ source('raw', 'model_checkpoints') }}
),

renamed as (
    select
        cast(system_id as varchar) as system_id,
        cast(checkpoint_key as varchar) as checkpoint_key,
        cast(checkpoint_path as varchar) as checkpoint_path,
        cast(model_size as varchar) as model_size,
        cast(train_start as date) as train_start,
        cast(train_end as date) as train_end,
        cast(first_window_end as date) as first_window_end,
        cast(last_window_end as date) as last_window_end,
        cast(tickers as varchar) as tickers,
        cast(training_windows as integer) as training_windows,
        cast(validation_windows as integer) as validation_windows,
        cast(best_epoch as integer) as best_epoch,
        cast(validation_loss as double) as validation_loss,
        cast(device as varchar) as device,
        cast(training_seconds as double) as training_seconds,
        cast(git_revision as varchar) as git_revision,
        cast(settings_json as varchar) as settings_json,
        cast(trained_at as timestamp) as trained_at,
        cast(registered_at as timestamp) as registered_at,
    from source
)

select * from renamed
