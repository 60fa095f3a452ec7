{#- Whether each rated system was forecast on the selected run's own inputs. In the study
    scope (int_run_partitions_selected) a system the selected run did not forecast itself is
    taken from the newest earlier run of the study that did (an import, a system left out of
    a later run); that run forecast the clean series it stored then. When the prices changed
    in between (`tsrate ingest --replace`, a revised adjusted close), its forecasts are scored
    here against another series. Per system and ticker it forecast: the study days compared
    (every day either run stored) and the days the source run lacks, has extra, or stored with
    another clean close (relative difference above 1e-9). The selected run's own systems
    compare with themselves: 0 changed. A source run that stored no inputs for the system's
    tickers cannot be compared: null. -#}
with

selected as (
    select run_id from {{ ref('int_runs_selected') }}
),

sources as (
    select distinct
        selected_partitions.run_id,
        selected_partitions.source_run_id,
        selected_partitions.system_id,
        partitions.ticker,
    from {{ ref('int_run_partitions_selected') }} as selected_partitions
    inner join {{ ref('stg_forecast_partitions') }} as partitions
        on partitions.partition_key = selected_partitions.partition_key
),

{#- every perturbation of a run stores the same clean series: one row per day -#}
stored_days as (
    select distinct inputs.run_id, inputs.ticker, inputs.price_date, inputs.clean_value,
    from {{ ref('stg_perturbed_inputs') }} as inputs
    where inputs.run_id in (select source_run_id from sources)
        or inputs.run_id in (select run_id from selected)
),

mine as (
    select sources.*, stored_days.price_date, stored_days.clean_value,
    from sources
    inner join stored_days
        on stored_days.run_id = sources.run_id and stored_days.ticker = sources.ticker
),

theirs as (
    select sources.*, stored_days.price_date, stored_days.clean_value,
    from sources
    inner join stored_days
        on stored_days.run_id = sources.source_run_id and stored_days.ticker = sources.ticker
    where sources.source_run_id <> sources.run_id
),

compared as (
    select
        run_id,
        system_id,
        source_run_id,
        ticker,
        price_date,
        source_run_id <> run_id and (
            mine.clean_value is null
            or theirs.clean_value is null
            or abs(theirs.clean_value - mine.clean_value)
                > 1e-9 * greatest(abs(mine.clean_value), 1e-300)
        ) as is_changed,
        theirs.price_date is not null as source_has_day,
    from mine
    full outer join theirs using (run_id, system_id, source_run_id, ticker, price_date)
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(system_id as varchar) as system_id,
        cast(source_run_id as varchar) as source_run_id,
        cast(count(*) as integer) as source_days_compared,
        {#- a source run that stored no inputs (a warehouse from before runs stored them)
            cannot be compared: null, never 0 -#}
        cast(case
            when source_run_id = run_id then 0
            when count(*) filter (where source_has_day) > 0
                then count(*) filter (where is_changed)
        end as integer) as source_days_changed,
        cast(case
            when count(*) filter (where source_has_day) > 0
                then min(price_date) filter (where is_changed)
        end as date) as first_changed_date,
    from compared
    group by run_id, system_id, source_run_id
)

select * from final
