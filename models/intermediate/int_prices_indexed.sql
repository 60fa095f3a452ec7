{#- Numbers each ticker's trading days so a horizon step is "index + step" and the clean
    one-step change (for the MASE scale) is at hand. -#}
with

prices as (
    select * from {{ ref('stg_prices') }}
),

final as (
    select
        ticker,
        price_date,
        close,
        row_number() over (partition by ticker order by price_date) as trading_day_index,
        abs(close - lag(close) over (partition by ticker order by price_date)) as abs_one_step_change,
    from prices
)

select * from final
