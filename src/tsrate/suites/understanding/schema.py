"""DDL of the understanding suite's raw tables (series, prompts, replies, run links)."""

DDL = """
create table if not exists raw.und_suite_run_systems (
    suite_run_id varchar not null,
    system_id varchar not null,
    backend varchar not null,
    fingerprint varchar not null,
    primary key (suite_run_id, system_id)
);

create table if not exists raw.und_suite_run_prompts (
    suite_run_id varchar not null,
    prompt_key varchar not null,
    primary key (suite_run_id, prompt_key)
);

create table if not exists raw.und_series (
    series_key varchar primary key,
    dataset varchar not null,
    series_group varchar not null,
    split varchar not null,
    series_index integer not null,
    seed ubigint not null,
    generator_version integer not null,
    start_date date not null,
    length integer not null,
    sub_feature varchar not null,
    labels json not null,
    column_names varchar[] not null,
    values_1 double[] not null,
    values_2 double[],
    qualitative varchar not null,
    quantitative varchar not null,
    created_at timestamp not null
);

create table if not exists raw.und_prompts (
    prompt_key varchar primary key,
    series_key varchar not null,
    dataset varchar not null,
    task varchar not null,
    feature varchar not null,
    format varchar not null,
    decimals integer not null,
    template_id varchar not null,
    template_version integer not null,
    prompt_text varchar not null,
    expected json not null,
    options varchar[] not null,
    quadrant integer,
    series_length integer not null,
    created_at timestamp not null,
    prompting varchar not null default 'zero_shot'
);

-- warehouses created before prompting styles existed: their prompts were all zero-shot
alter table raw.und_prompts add column if not exists prompting varchar default 'zero_shot';

create table if not exists raw.und_responses (
    response_key varchar primary key,
    prompt_key varchar not null,
    system_id varchar not null,
    fingerprint varchar not null,
    raw_text varchar,
    parse_ok boolean not null,
    parse_error varchar,
    answer varchar,
    answer_value double,
    answer_date date,
    answered_at timestamp not null,
    parsed_by varchar,
    parser varchar,
    parser_text varchar
);

-- warehouses created before the chain-of-thought parser existed
alter table raw.und_responses add column if not exists parsed_by varchar;
alter table raw.und_responses add column if not exists parser varchar;
alter table raw.und_responses add column if not exists parser_text varchar;
"""
