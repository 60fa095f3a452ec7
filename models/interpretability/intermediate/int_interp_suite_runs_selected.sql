{#- The suite run the marts describe: var interp_suite_run_id, or the newest trained one. -#}
{{ select_suite_run('stg_interp_suite_runs', 'interp_suite_run_id', 'trained') }}
