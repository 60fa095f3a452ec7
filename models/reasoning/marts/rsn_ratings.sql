{{ suite_ratings('int_rsn_ratings_assigned', ['task'], 'system_id', 'n_systems', reasons=true) }}
