"""DDL of the reasoning suite's raw tables: items, prompts, responses and run links.

``rsn_prompts.sample_index`` / ``temperature``: a sampled forecast reply (LLMTime's
``--forecast-samples N``: indices 0..N-1, each its own prompt hash, so several stored
responses per forecast chat); null for the one greedy reply. Added to older warehouses by
``alter table ... add column if not exists`` (their rows read null: greedy)."""

DDL = """
create table if not exists raw.rsn_items (
    item_id varchar primary key,
    source varchar not null,
    task varchar not null check (task in ('etiological', 'qa_single', 'qa_two', 'qa_perturbed', 'forecast')),
    category varchar not null,
    domain varchar,
    question varchar not null,
    options varchar[] not null,
    answer_index integer,
    series double[] not null,
    series_b double[],
    context varchar not null,
    future double[],
    params json not null,
    created_at timestamp not null
);

create table if not exists raw.rsn_suite_run_items (
    suite_run_id varchar not null,
    item_id varchar not null,
    primary key (suite_run_id, item_id)
);

create table if not exists raw.rsn_prompts (
    prompt_hash varchar primary key,
    system_id varchar not null,
    system_kind varchar not null,
    fingerprint varchar not null,
    item_id varchar not null,
    condition varchar not null,
    encoding varchar,
    messages json,
    created_at timestamp not null,
    sample_index integer,
    temperature double
);

-- warehouses made before sampled forecasts: their prompts are all greedy (null)
alter table raw.rsn_prompts add column if not exists sample_index integer;
alter table raw.rsn_prompts add column if not exists temperature double;

create table if not exists raw.rsn_suite_run_prompts (
    suite_run_id varchar not null,
    prompt_hash varchar not null,
    primary key (suite_run_id, prompt_hash)
);

create table if not exists raw.rsn_responses (
    prompt_hash varchar primary key,
    system_id varchar not null,
    raw_text varchar,
    parsed_choice integer,
    forecast double[],
    parse_ok boolean not null,
    parse_error varchar,
    seconds double not null,
    answered_at timestamp not null
);
"""
