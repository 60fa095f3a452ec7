{{ stg_suite_runs('reasoning', [('source', 'varchar'), ('n_items', 'integer'), ('n_prompts', 'integer')]) }}
