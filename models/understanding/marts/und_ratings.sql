{{ suite_ratings('und_ratings_assigned', ['feature'], 'system_id', 'n_systems') }}
