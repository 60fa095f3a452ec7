with

source as (
    select * from {{ source('raw', 'sentiments') }}
),

renamed as (
    select
        cast(run_id as varchar) as run_id,
        cast(sentiment_system_id as varchar) as sentiment_system_id,
        cast(ticker as varchar) as ticker,
        cast(window_end_date as date) as window_end_date,
        cast(sentiment as integer) as sentiment,
        cast(stripe_intensity as integer) as stripe_intensity,
        cast(probability_negative as double) as probability_negative,
        cast(probability_neutral as double) as probability_neutral,
        cast(probability_positive as double) as probability_positive,
        cast(trend_score as double) as trend_score,
        cast(trend_label as integer) as trend_label,
    from source
)

select * from renamed
