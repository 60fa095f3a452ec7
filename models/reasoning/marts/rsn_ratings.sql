{{ suite_ratings('rsn_ratings_assigned', ['task'], 'system_id', 'n_systems') }}
