{#- The project's tables (SQL and Python models) built under their own name inside the
    model's transaction, instead of dbt-duckdb's default (create `<name>__dbt_tmp`, list the
    old table's indexes, rename the old table to `<name>__dbt_backup`, rename the new one
    into place, commit, drop the backup). DuckDB's DDL is transactional: the old table is
    dropped and the new one created in one transaction, so other connections see the old
    table until the commit, and a model that fails leaves the old table in place (the
    transaction is rolled back). dbt-duckdb builds tables with foreign keys the same way.
    A Python model's job runs on a cursor of its own (its own transaction): it writes
    `<name>__dbt_tmp`, and the model's transaction drops the old table and renames the new
    one into place. Fewer statements a node than the default (BENCHMARKS.md has the
    counts): dbt's Python around each statement is a build's per-node cost.

    Kept from the default: pre- and post-hooks outside and inside the transaction, the
    contract (dbt-duckdb's create_table_as: the column check, the typed table with its
    constraints, then the insert), the model's sql_header, Python models (their job is
    submitted from this materialization's `main` statement, as dbt requires), a relation
    of another type of this name dropped in the same transaction (a view that becomes a
    table), indexes (create_indexes), grants, persist_docs (a SQL table's relation comment
    rides in its `main` statement, and so do a contracted one's column comments,
    column_comments.sql; other tables' column comments as dbt writes them), the relation
    cache (the dropped relation leaves it; dbt adds the returned one), and the removal of
    `__dbt_tmp` / `__dbt_backup` relations a crashed build of the default left (looked up
    in the cache: no statement when there is none).
    Not handled: foreign keys (none in this project: a model whose contract declares one
    is refused with a compiler error) and DuckLake's partitioned_by / sorted_by.
    Checked by tests/integration/test_lean_tables.py. -#}
{% materialization table, adapter='duckdb', supported_languages=['sql', 'python'] %}

  {%- set language = model['language'] -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set grant_config = config.get('grants') -%}

  {% if 'foreign_key' in enforced_constraint_types() %}
    {% do exceptions.raise_compiler_error(
      "model " ~ model.name ~ " declares a foreign key: the project's table materialization "
      ~ "(macros/materializations/table.sql) does not handle foreign keys") %}
  {% endif %}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}

  -- `BEGIN` happens here (the first statement inside the transaction):
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {#- what dbt-duckdb's default materialization leaves when a build of it crashed mid-way (leftovers.sql) -#}
  {% do tsrate_drop_leftovers(target_relation, 'table') %}

  {% if language == 'python' %}
    {#- the Python job runs on a cursor of its own, in its own transaction, so it cannot
        replace a table this transaction dropped: it writes `<name>__dbt_tmp` (committed),
        renamed into place below -#}
    {%- set intermediate_relation = make_intermediate_relation(target_relation) -%}
    {% call statement('main', language=language) -%}
      {{- create_table_as(False, intermediate_relation, compiled_code, language) }}
    {%- endcall %}
  {% endif %}

  {% if existing_relation is not none %}
    {#- dropped in the transaction (a statement of its own opens it: adapter.drop_relation
        would run outside one and commit at once): readers see the old relation until the
        commit, and a model that fails leaves it in place -#}
    {% call statement('drop_existing_relation') -%}
      drop {{ existing_relation.type }} if exists {{ existing_relation }} cascade
    {%- endcall %}
    {% do adapter.cache_dropped(existing_relation) %}
  {% endif %}

  {% if language == 'python' %}
    {{ adapter.rename_relation(intermediate_relation, target_relation) }}
  {% else %}
    {% call statement('main', language=language) -%}
      {{- create_table_as(False, target_relation, compiled_code, language) }}
      {#- create_table_as ends its SQL with `;` #}
      {{ tsrate_comments_in_statement(target_relation) }}
    {%- endcall %}
  {% endif %}

  {% do create_indexes(target_relation) %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}

  {#- a SQL table's relation comment was written with it, and a contracted one's column
      comments too (column_comments.sql; dbt enforces contracts on SQL models only) -#}
  {% do persist_docs(target_relation, model, for_relation=(language != 'sql'),
                     for_columns=not (language == 'sql' and tsrate_folds_column_comments())) %}

  -- `COMMIT` happens here
  {{ adapter.commit() }}

  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}

{% endmaterialization %}
