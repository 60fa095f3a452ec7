{#- The suite run the marts describe: var und_suite_run_id, or the newest answered one. -#}
{{ select_suite_run('stg_und_suite_runs', 'und_suite_run_id', 'answered') }}
