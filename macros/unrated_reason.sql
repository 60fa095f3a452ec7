{#- Why a score cannot be rated, for marts.ratings' rows of scores that are null, NaN or
    infinite (int_ratings_assigned rates finite scores only): `value` is the score's
    column, `noun` what it is called in the reason ('score', 'mean'), `if_null` the reason
    for a null. One wording for robustness scores and accuracy means alike. -#}
{% macro unrated_reason(value, noun, if_null) -%}
case
            when {{ value }} is null then '{{ if_null }}'
            when isnan({{ value }})
                then 'the {{ noun }} is not a number (NaN), so it cannot be compared with the others'
            else 'the {{ noun }} is infinite (' || {{ value }} || '), so it cannot be compared with the others'
        end
{%- endmacro %}
