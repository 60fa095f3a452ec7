with

source as (
    select * from {{ source('raw', 'prices') }}
),

renamed as (
    select
        cast(ticker as varchar) as ticker,
        cast(price_date as date) as price_date,
        cast(close as double) as close,
        cast(source as varchar) as price_source,
        cast(loaded_at as timestamp) as loaded_at,
    from source
)

select * from renamed
