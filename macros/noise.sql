{#- Floating noise of 0 in SQL, the rule of tsrate.methods.noise: a difference a - b whose
    size is within 1e-12 x max(1, |a|, |b|) (the floating noise of subtracting two values of
    that size) is exactly 0. Two outcomes computed from the same numbers in another
    summation order differ by such noise; a test of the mean change would read it as an
    effect. Null where a or b is null. -#}
{% macro noise_free_difference(a, b) -%}
    case
        when abs(({{ a }}) - ({{ b }}))
            <= 1e-12 * greatest(1.0, abs({{ a }}), abs({{ b }})) then 0.0
        else ({{ a }}) - ({{ b }})
    end
{%- endmacro %}
