{{ stg_suite_runs('interpretability', [('config_name', 'varchar'), ('n_units', 'integer')]) }}
