{#- Use a model's custom schema as is (staging, intermediate, marts, seeds) instead of
    prefixing it with the target schema: analysts query marts.window_errors. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}{{ target.schema }}{%- else -%}{{ custom_schema_name | trim }}{%- endif -%}
{%- endmacro %}
