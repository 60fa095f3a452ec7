"""Scripted systems added to a real reasoning suite run in its raw tables: each choice prompt
of the random answerer copied to every scripted system, in the same suite run, with the
reply a test scripts for it. The reasoning integration tests that check the marts against
replies known by construction share it. No test here."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from types import SimpleNamespace

import duckdb
import pandas as pd

#: the random answerer's choice prompts of the run, with their item's answer and option count
CHOICE_PROMPTS = (
    "select p.*, i.answer_index, len(i.options) as n_options{items} "
    "from raw.rsn_prompts p join raw.rsn_items i using (item_id) "
    "where p.system_id = 'random' and i.task <> 'forecast' order by p.prompt_hash"
)

#: a scripted reply: raw_text, parsed_choice, parse_ok and parse_error (None: no reply stored)
Reply = Mapping[str, object] | None


def add_scripted_replies(
    warehouse,  # noqa: ANN001 - a Path
    systems: Iterable[str],
    reply: Callable[[int, SimpleNamespace], Reply],
    items: Mapping[str, str] | None = None,
) -> None:
    """Copy each choice prompt of the random answerer in ``warehouse``'s reasoning suite run
    to every one of ``systems`` with the reply ``reply(k, prompt)`` scripts: ``k`` counts
    the system's prompts from 0, ``prompt`` is the copy (its own ``prompt_hash`` and
    ``system_id``, the item's ``answer_index`` and ``n_options``, and ``items``: name ->
    an expression over the item ``i``)."""
    items = dict(items or {})
    extra = "".join(f", {sql} as {name}" for name, sql in items.items())
    con = duckdb.connect(str(warehouse))
    try:
        (suite_run_id,) = con.execute(
            "select suite_run_id from raw.suite_runs where suite = 'reasoning'"
        ).fetchone()
        prompts = con.execute(CHOICE_PROMPTS.format(items=extra)).df()
        new_prompts, replies = [], []
        for system in systems:
            for k, row in enumerate(prompts.to_dict("records")):
                digest = hashlib.sha256(f"{system}/{row['prompt_hash']}".encode()).hexdigest()[:24]
                copy = {**row, "prompt_hash": digest, "system_id": system}
                new_prompts.append(copy)
                said = reply(k, SimpleNamespace(**copy))
                if said is not None:
                    replies.append({"prompt_hash": digest, "system_id": system, **said})
        frame = pd.DataFrame(new_prompts).drop(columns=["answer_index", "n_options", *items])
        columns = ", ".join(frame.columns)
        con.register("new_prompts", frame)
        con.execute(f"insert into raw.rsn_prompts ({columns}) select {columns} from new_prompts")
        con.execute(
            "insert into raw.rsn_suite_run_prompts select ?, prompt_hash from new_prompts",
            [suite_run_id],
        )
        con.register("replies", pd.DataFrame(replies).astype({"parsed_choice": "Int64"}))
        con.execute(
            "insert into raw.rsn_responses (prompt_hash, system_id, raw_text, parsed_choice, "
            "forecast, parse_ok, parse_error, seconds, answered_at) select prompt_hash, "
            "system_id, raw_text, parsed_choice, null, parse_ok, parse_error, 0.0, "
            "current_timestamp from replies"
        )
    finally:
        con.close()
