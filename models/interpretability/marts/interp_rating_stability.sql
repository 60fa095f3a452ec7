{{ suite_rating_stability('int_interp_rating_stability_computed', 'variant_id', 'n_seeds', system='model_id') }}
