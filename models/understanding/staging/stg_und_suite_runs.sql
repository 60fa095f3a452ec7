{{ stg_suite_runs('understanding', [('config_name', 'varchar'), ('n_prompts', 'integer')]) }}
