"""Systems that cannot be told apart: two system ids whose point forecasts are the same on
every window they share (the same predictions imported under two ids, or an import equal to
a built-in system's forecasts) are rated alike by construction on every metric of the point
forecasts (quantile forecasts are not compared here).

Two forecasts of the same ticker, window, perturbation and horizon step are **the same**
when they differ by at most :data:`RELATIVE_TOLERANCE` (1e-9) of the larger of their
magnitudes (so exactly equal values, and values that went through a CSV printed with full
precision, are the same; forecasts rounded to a few decimals are not), or when both are
missing (null or NaN) or both the same infinity. A missing forecast beside a number is a
difference. Two systems are **identical** when they share at least one forecast step and
every shared step is the same: a system imported on a subset of the perturbations is
compared on those. One SQL query finds the pairs (:func:`identical_pairs`), over any
relation with the columns ``system_id, ticker, window_end_date, perturbation_id,
horizon_step, forecast``: the import asks it of the forecast store
(:func:`tsrate.robustness.blackbox.predictions.import_forecasts`), the report of the
published ``marts.forecast_traces``.
"""

from __future__ import annotations

import duckdb

#: how far apart two forecasts may be and still be the same: this share of the larger
#: magnitude (float64 round-trips through text exactly; 1e-9 allows for a last-digit change)
RELATIVE_TOLERANCE = 1e-9

#: the key a forecast step is compared on
STEP_KEY = ("ticker", "window_end_date", "perturbation_id", "horizon_step")


def same_forecast_sql(a: str, b: str) -> str:
    """SQL true when forecasts ``a`` and ``b`` are the same (see the module): DuckDB takes
    NaN = NaN as true and NaN as larger than any number, so missing values are decided
    before the tolerance is (``abs(a - b)`` of a NaN would compare as anything)."""
    missing_a = f"({a} is null or isnan({a}))"
    missing_b = f"({b} is null or isnan({b}))"
    return (
        f"case when {missing_a} or {missing_b} then {missing_a} and {missing_b} "
        f"when {a} = {b} then true "
        f"when isinf({a}) or isinf({b}) then false "
        f"else abs({a} - {b}) <= {RELATIVE_TOLERANCE!r} * greatest(abs({a}), abs({b})) end"
    )


def pairs_sql(source: str, system: str | None = None) -> str:
    """The query of :func:`identical_pairs` over the relation ``source`` (a table, a view or
    a parenthesised select): rows (system_a, system_b, n_shared) of each identical pair,
    system_a < system_b; with ``system`` (a SQL expression, e.g. a parameter) only the pairs
    of that system, which is then system_a.

    Cheap where nothing is alike: the pairs told apart by a first horizon step are dropped
    first (a join over 1/horizon of the rows), and only the others are compared step by step
    on every step they share."""
    keys = ", ".join(STEP_KEY)
    if system is None:
        which = "a.system_id < b.system_id"
    else:
        which = f"a.system_id = {system} and b.system_id <> a.system_id"
    same = same_forecast_sql("a.forecast", "b.forecast")
    on = " and ".join(f"b.{key} = a.{key}" for key in STEP_KEY)
    return f"""
        with steps as materialized (select system_id, {keys}, forecast from {source}),
        systems as (select distinct system_id from steps),
        told_apart as (
            select distinct a.system_id as system_a, b.system_id as system_b
            from steps a join steps b using ({keys})
            where a.horizon_step = 1 and {which} and not ({same})
        ),
        candidates as (
            select a.system_id as system_a, b.system_id as system_b
            from systems a cross join systems b
            where {which}
            and not exists (
                select 1 from told_apart t
                where t.system_a = a.system_id and t.system_b = b.system_id
            )
        ),
        shared as (
            select c.system_a, c.system_b, count(*) as n_shared, bool_and({same}) as same,
            from candidates c
            join steps a on a.system_id = c.system_a
            join steps b on b.system_id = c.system_b and {on}
            group by c.system_a, c.system_b
        )
        select system_a, system_b, n_shared from shared where same
        order by system_a, system_b
    """


def identical_pairs(
    con: duckdb.DuckDBPyConnection, source: str, params: list | None = None
) -> list[tuple[str, str, int]]:
    """(system_a, system_b, shared forecast steps) of each pair of systems in ``source``
    whose forecasts are the same on every step they share, system_a < system_b, in order.
    ``source``: a relation with the columns above (``params`` fill its ``?``)."""
    rows = con.execute(pairs_sql(source), params or []).fetchall()
    return [(str(a), str(b), int(n)) for a, b, n in rows]


#: the runs whose forecasts the marts rate (int_run_partitions_selected's statuses)
RATED_STATUSES = ("forecasted", "succeeded", "build_failed", "publish_failed")

#: the forecasts the marts will rate for the study of run ``$run_id``: per system, its
#: forecasts from the newest run of the study started no later than that run (the run's own
#: systems from itself), leaving out a system withdrawn from the study after that run
#: started (as models/intermediate/int_run_partitions_selected.sql selects them)
STUDY_FORECASTS_SQL = f"""(
    with this_run as (select run_id, study_id, started_at from raw.runs where run_id = $run_id),
    withdrawn as (
        select system_id, max(withdrawn_at) as withdrawn_at from raw.study_withdrawals
        where study_id = (select study_id from this_run) group by system_id
    ),
    parts as (
        select r.run_id, r.started_at, r.run_id = $run_id as is_this_run, p.system_id,
               p.partition_key,
        from raw.runs r
        join this_run t
          on r.run_id = t.run_id
          or (r.study_id = t.study_id and r.started_at <= t.started_at
              and r.status in {RATED_STATUSES!r})
        join raw.run_partitions rp on rp.run_id = r.run_id
        join raw.forecast_partitions p on p.partition_key = rp.partition_key
        left join withdrawn w on w.system_id = p.system_id
        where w.withdrawn_at is null or r.started_at >= w.withdrawn_at
    ),
    newest as (
        select system_id, run_id from parts
        qualify row_number() over (
            partition by system_id order by is_this_run desc, started_at desc, run_id desc
        ) = 1
    )
    select parts.system_id, f.ticker, f.window_end_date, f.perturbation_id, f.horizon_step,
           f.forecast
    from parts
    join newest using (system_id, run_id)
    join raw.forecasts f on f.partition_key = parts.partition_key
)"""


def identical_import_note(
    con: duckdb.DuckDBPyConnection, run_id: str, system_id: str, study_id: str
) -> str:
    """One line when ``system_id``'s forecasts in run ``run_id`` (an import) are the same,
    on every window they share, as those of another system the marts rate in the same
    study ``study_id``: it names them, says the two will be rated alike, and how to
    withdraw one; '' otherwise. One query (and the study's name when it finds a pair)."""
    rows = con.execute(
        pairs_sql(STUDY_FORECASTS_SQL, "$system"), {"run_id": run_id, "system": system_id}
    ).fetchall()
    if not rows:
        return ""
    others = [str(other) for _, other, _ in rows]
    name = con.execute(
        "select max(study_name) from raw.studies where study_id = ?", [study_id]
    ).fetchone()[0]
    study = name or study_id  # `tsrate withdraw --study` takes either
    named = ", ".join(others[:-1]) + (" and " if len(others) > 1 else "") + others[-1]
    shared = sorted({int(n) for _, _, n in rows})  # per pair: its shared forecast steps
    counted = str(shared[0]) if len(shared) == 1 else f"{shared[0]} to {shared[-1]}"
    rated = "the two" if len(others) == 1 else "they"
    return (
        f"{system_id}'s forecasts equal those of {named}, already stored for study {study}, "
        f"on every window they share ({counted} forecasts, equal to 1e-9 relative): "
        f"{rated} cannot be told apart and will be rated alike (hint: if one is a copy, "
        f"withdraw it: tsrate withdraw {system_id} --study {study}, or tsrate "
        f"withdraw {others[0]} --study {study})"
    )
