{{ suite_ratings('int_interp_ratings_assigned', ['variant_id'], 'model_id', 'n_models', reasons=true) }}
