{#- A contracted model's column comments, written in its materialization's main statement
    instead of by persist_docs afterwards (which lists the relation's columns twice, then
    comments them: three statements a node). A contract makes the columns exactly the
    documented ones (checked before the relation is built), so no listing is needed. Used
    by the project's view and table materializations; a model without an enforced contract
    keeps dbt's persist_docs. -#}
{% macro tsrate_folds_column_comments() -%}
  {%- set contract_config = config.get('contract') -%}
  {{ return(contract_config is not none and contract_config.enforced
            and config.persist_column_docs() and (model.columns | length) > 0) }}
{%- endmacro %}


{#- `comment on column` for every documented column of the model, as dbt-duckdb's
    alter_column_comment writes them (each ends with `;`), less trailing whitespace (as
    macros/persist_docs.sql: a YAML block scalar ends with a newline). -#}
{% macro tsrate_column_comments(relation) -%}
  {%- for column_name, column in model.columns.items() %}
  comment on column {{ relation }}.{{ adapter.quote(column_name) if column['quote'] else column_name }} is {{ duckdb_escape_comment(column['description'].rstrip()) }};
  {%- endfor %}
{%- endmacro %}


{#- The comments a main statement carries after the relation's SQL (which ends with `;`):
    the relation's (persist_docs' relation half) and, for a contracted model, its columns'. -#}
{% macro tsrate_comments_in_statement(relation) -%}
  {%- if config.persist_relation_docs() and model.description %}
  {{ alter_relation_comment(relation, model.description) }}
  {%- endif %}
  {%- if tsrate_folds_column_comments() %}
  {{ tsrate_column_comments(relation) }}
  {%- endif %}
{%- endmacro %}
