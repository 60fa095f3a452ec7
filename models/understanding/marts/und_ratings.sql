{{ suite_ratings('int_und_ratings_assigned', ['prompting', 'feature'], 'system_id', 'n_systems', reasons=true) }}
