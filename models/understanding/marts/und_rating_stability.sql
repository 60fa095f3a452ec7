{{ suite_rating_stability('int_und_rating_stability_computed', ['prompting', 'feature'], ['n_prompts', 'n_series'], interval=true) }}
