{#- The project's views in one `create or replace view`, instead of dbt's default view
    materialization (create `<name>__dbt_tmp`, rename the old view to `<name>__dbt_backup`,
    rename the new one into place, commit, drop the backup): DuckDB's DDL is transactional,
    so the old view stays visible to other connections until the commit, and a view whose
    SQL fails to bind leaves the old one in place. A view node runs 5 statements instead of
    9 (BEGIN, the view with its comment, DESCRIBE and the column comments of persist_docs,
    COMMIT): dbt's Python around each statement is a build's per-node cost (BENCHMARKS.md).

    Kept from the default: pre- and post-hooks outside and inside the transaction, the
    contract check of a contracted view (forecast_traces, window_inputs), the model's
    sql_header, dropping a relation of another type in the same transaction (a table that
    becomes a view), grants (apply_grants: DuckDB warns they are unsupported), persist_docs
    (the relation comment rides in the view's statement, and so do a contracted view's
    column comments, column_comments.sql; other views' column comments as dbt writes them), the relation cache (the dropped relation leaves it; dbt adds the returned one),
    and the removal of a `<name>__dbt_tmp` or `<name>__dbt_backup` relation a crashed build
    of dbt's default left (looked up in the cache: no statement when there is none).
    Checked by tests/integration/test_lean_views.py. -#}
{% materialization view, adapter='duckdb' %}

  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='view') -%}
  {%- set grant_config = config.get('grants') -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}

  -- `BEGIN` happens here (the first statement inside the transaction):
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {#- what dbt's default materialization leaves when a build of it crashed mid-way (leftovers.sql) -#}
  {% do tsrate_drop_leftovers(target_relation, 'view') %}

  {% if existing_relation is not none and not existing_relation.is_view %}
    {#- a table (or another type) of this name: dropped in the transaction, so a view that
        fails to build leaves it in place -#}
    {% call statement('drop_existing_relation') -%}
      drop {{ existing_relation.type }} if exists {{ existing_relation }} cascade
    {%- endcall %}
    {% do adapter.cache_dropped(existing_relation) %}
  {% endif %}

  {% call statement('main') -%}
    {{ tsrate_create_or_replace_view_as(target_relation, sql) }}
  {%- endcall %}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}

  {#- the relation's comment was written with the view, and a contracted view's column
      comments too (column_comments.sql) -#}
  {% do persist_docs(target_relation, model, for_relation=false,
                     for_columns=not tsrate_folds_column_comments()) %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}

  {{ adapter.commit() }}

  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}

{% endmaterialization %}


{#- dbt-duckdb's create_view_as (contract check, sql_header) as `create or replace`, with
    the relation's comment (persist_docs' relation half) in the same statement. -#}
{% macro tsrate_create_or_replace_view_as(relation, sql) -%}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config.enforced -%}
    {{ get_assert_columns_equivalent(sql) }}
  {%- endif -%}
  {%- set sql_header = config.get('sql_header', none) -%}

  {{ sql_header if sql_header is not none }}
  create or replace view {{ relation }} as (
    {{ sql }}
  );
  {{ tsrate_comments_in_statement(relation) }}
{%- endmacro %}
