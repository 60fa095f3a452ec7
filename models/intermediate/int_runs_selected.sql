{#- The run the marts describe: env TSRATE_RUN_ID (what `tsrate build`/`run` set), else var
    run_id, else the newest run whose forecasts are complete ('latest'). An env var, not a
    --vars value: a new --vars value throws away the whole partial parse; read only when the
    model runs, so a rerun parses nothing (the suites' run-selection macro). -#}
{{ select_suite_run('stg_runs', 'run_id', 'forecasted', id_column='run_id', status_column='run_status') }}
