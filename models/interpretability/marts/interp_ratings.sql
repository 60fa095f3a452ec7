{{ suite_ratings('interp_ratings_assigned', ['variant_id'], 'model_id', 'n_models') }}
