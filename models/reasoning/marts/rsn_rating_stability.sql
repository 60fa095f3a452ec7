{{ suite_rating_stability('int_rsn_rating_stability_computed', 'task', ['n_items', 'n_series'], interval=true) }}
