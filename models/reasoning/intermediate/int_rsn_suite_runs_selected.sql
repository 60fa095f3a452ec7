{#- The suite run the marts describe: var rsn_suite_run_id, or the newest answered one. -#}
{{ select_suite_run('stg_rsn_suite_runs', 'rsn_suite_run_id', 'answered') }}
