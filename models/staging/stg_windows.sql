with

source as (
    select * from {{ source('raw', 'windows') }}
),

renamed as (
    select
        cast(run_id as varchar) as run_id,
        cast(ticker as varchar) as ticker,
        cast(window_index as integer) as window_index,
        cast(window_end_date as date) as window_end_date,
        cast(context_start_date as date) as context_start_date,
        cast(horizon_end_date as date) as horizon_end_date,
    from source
)

select * from renamed
