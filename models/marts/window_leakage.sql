{#- Leakage flags: does a window's truth lie inside a system's training data? One row per
    run, system and window (ticker x origin) of window_errors. Rules (docs/probabilistic.md,
    "Provenance and leakage"):
    - a system trained by tsrate with a registered checkpoint (raw.model_checkpoints: the
      ViT's tickers and training period are known exactly; the system's newest checkpoint):
      in_training_data = the window's ticker is one of the checkpoint's training tickers AND
      one of its target days (the ticker's trading days after the origin, up to
      horizon_end_date) lies inside the training period [train_start, train_end]: the first
      target day is on or before train_end and the last on or after train_start (a
      train_end that is not a trading day leaks nothing to an origin the trading day before
      it). Target days are the run's own (int_run_days, the series it forecast), not the
      days raw.prices holds now: a day merged into the history after the run is none;
    - a system whose training statement (run_provenance.training_data, from the systems
      seed) starts 'none:' (no training: naive, seasonal naive, ARIMA, random, biased): false;
    - a system with a stated training cutoff (run_provenance.training_cutoff: the last day
      its training data can cover, from the systems seed or an import's --metadata) whose
      window's first target day is after it: every target day lies after the cutoff, so
      false ('after cutoff');
    - any other window (pretrained foundation models, LLMs and imported predictions before
      their cutoff or without one): null, with the reason -- the stated corpus names no
      tickers and dates, or nothing is stated, so leakage cannot be ruled out. -#}
with

window_errors as (
    select * from {{ ref('window_errors') }}
),

windows as (
    select * from {{ ref('int_windows_located') }}
),

run_days as (
    select run_id, ticker, study_position, price_date from {{ ref('int_run_days') }}
),

provenance as (
    select * from {{ ref('int_run_provenance') }}
),

checkpoints as (
    select * from {{ ref('stg_model_checkpoints') }}
    qualify row_number() over (partition by system_id order by registered_at desc, checkpoint_key) = 1
),

system_windows as (
    select distinct run_id, system_id, ticker, window_end_date from window_errors
),

located as (
    -- the first target day: the day after the origin in the series the run forecast
    -- (int_run_days: a day merged into raw.prices since is none of the run's target days;
    -- the day after the origin when the calendar lacks it, which errs toward flagging)
    select
        system_windows.*,
        windows.horizon_end_date,
        coalesce(first_target.price_date, system_windows.window_end_date + 1) as first_target_date,
    from system_windows
    left join windows
        on windows.run_id = system_windows.run_id
        and windows.ticker = system_windows.ticker
        and windows.window_end_date = system_windows.window_end_date
    left join run_days as first_target
        on first_target.run_id = windows.run_id
        and first_target.ticker = windows.ticker
        and first_target.study_position = windows.end_position + 1
),

final as (
    select
        cast(located.run_id as varchar) as run_id,
        cast(located.system_id as varchar) as system_id,
        cast(located.ticker as varchar) as ticker,
        cast(located.window_end_date as date) as window_end_date,
        cast(located.horizon_end_date as date) as horizon_end_date,
        cast(case
            when checkpoints.system_id is not null then
                list_contains(string_split(checkpoints.tickers, ','), located.ticker)
                and located.first_target_date <= checkpoints.train_end
                and located.horizon_end_date >= checkpoints.train_start
            when provenance.training_data like 'none:%' then false
            when located.first_target_date > provenance.training_cutoff then false
        end as boolean) as in_training_data,
        cast(case
            when checkpoints.system_id is not null then 'checkpoint'
            when provenance.training_data like 'none:%' then 'no training'
            when located.first_target_date > provenance.training_cutoff then 'after cutoff'
            else 'unknown'
        end as varchar) as leakage_basis,
        cast(checkpoints.checkpoint_key as varchar) as checkpoint_key,
        cast(case
            when checkpoints.system_id is not null then null
            when provenance.training_data like 'none:%' then null
            when located.first_target_date > provenance.training_cutoff then null
            when provenance.training_data is not null then
                'training data stated without tickers and dates (' || provenance.training_data
                || '): whether it covers this window is not known'
                || coalesce('; a target day is on or before its cutoff '
                    || strftime(provenance.training_cutoff, '%Y-%m-%d'), '')
            else 'what the system was trained on is not recorded (pretrained weights, an LLM or '
                || 'imported predictions): leakage cannot be ruled out'
                || coalesce(' (' || provenance.training_data_reason || ')', '')
        end as varchar) as leakage_reason,
    from located
    left join checkpoints
        on checkpoints.system_id = located.system_id
    left join provenance
        on provenance.run_id = located.run_id
        and provenance.system_id = located.system_id
)

select * from final
