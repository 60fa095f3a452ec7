"""Local Hugging Face language models (tsrate.systems.hf_local): the reused keys and values
of :func:`continuation_cache` against a fresh forward pass over the second inputs (how much
is reused, worked out by hand; pad positions zero; nothing when nothing is common; one short
of the width when the second inputs are the prompts themselves), each test well under a
second.

Written for round 8 of the mutation sweep (tests/planted/mutate.py; the survivors are
tests/planted/sweep8_language_models.json). The older tests (test_hf_local.py) load tiny
checkpoints from disk and take tens of seconds here; these build their models in memory
(tests/support/memory_models.py) or use stand-ins for the transformers loaders and
processors, so the sweep can run them for every planted error.
"""

from __future__ import annotations

import inspect

import pytest

from tests.support.memory_models import tiny_gemma
from tsrate.systems import hf_local

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


# -- the reused keys and values -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gemma_model():
    return tiny_gemma(seed=3)


def left_padded(rows: list[list[int]], pad: int):  # noqa: ANN201
    width = max(len(r) for r in rows)
    ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows])
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    return ids, mask


def prefill(model, ids, mask):  # noqa: ANN001, ANN201
    """A forward pass with a fresh cache made without the config, positions from the padding
    (as ``generate`` derives them)."""
    from transformers import DynamicCache

    cache = DynamicCache()
    positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
    # transformers 5.25 renamed the argument (the old name warns); the extra allows >= 5
    name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    with torch.no_grad():
        model(input_ids=ids, attention_mask=mask, position_ids=positions, **{name: cache})
    return cache


def test_continuation_cache_reuses_the_common_prefix_laid_out_as_a_fresh_prefill(gemma_model):
    model, tokenizer = gemma_model
    pad = tokenizer.pad_token_id
    prompts = [[11, 12, 13, 14, 15, 16], [21, 22, 23], [31, 32, 33, 34]]
    replies = [[41, 42, 43], [51, 52, pad], [61, 62, 63]]  # row 1 ended early (padded)
    first_ids, first_mask = left_padded(prompts, pad)
    first = torch.cat([first_ids, torch.tensor(replies)], dim=1)
    full_mask = torch.cat([first_mask, torch.ones(3, 3, dtype=torch.long)], dim=1)
    # the first call fed its prompts and every new token but the last (9 - 1 positions)
    cache = prefill(model, first[:, :-1], full_mask[:, :-1])
    assert cache.get_seq_length() == 8
    # second inputs: row 0 keeps its whole reply (8 fed + 1), row 1 its first reply token then
    # another, row 2 its prompt and a different token
    second = [prompts[0] + [41, 42, 43], prompts[1] + [51, 70, 71], prompts[2] + [72]]
    ids, mask = left_padded(second, pad)
    assert ids.shape[1] == 9
    reused = hf_local.continuation_cache(
        cache, first, first_mask, {"input_ids": ids, "attention_mask": mask}
    )
    # rows start at 0, 3, 4; common prefixes 8 (all the cache holds), 4, 4: min(8, 3 + 4, 4 + 4)
    assert reused.get_seq_length() == 7
    fresh = prefill(model, ids, mask)
    real = mask[:, :7].bool()
    for kept, computed in zip(reused.layers, fresh.layers, strict=True):
        for ours, theirs in ((kept.keys, computed.keys), (kept.values, computed.values)):
            torch.testing.assert_close(
                ours.transpose(1, 2)[real], theirs[:, :, :7].transpose(1, 2)[real]
            )
            assert (ours.transpose(1, 2)[~real] == 0).all()  # pad positions hold zeros


def test_continuation_cache_reuses_all_but_the_last_token_when_nothing_differs(gemma_model):
    model, tokenizer = gemma_model
    pad = tokenizer.pad_token_id
    prompts = [[11, 12, 13, 14], [21, 22]]
    replies = [[41, 42], [51, 52]]
    first_ids, first_mask = left_padded(prompts, pad)
    first = torch.cat([first_ids, torch.tensor(replies)], dim=1)
    full_mask = torch.cat([first_mask, torch.ones(2, 2, dtype=torch.long)], dim=1)
    cache = prefill(model, first[:, :-1], full_mask[:, :-1])
    ids, mask = left_padded([p + r for p, r in zip(prompts, replies, strict=True)], pad)
    reused = hf_local.continuation_cache(
        cache, first, first_mask, {"input_ids": ids, "attention_mask": mask}
    )
    assert reused.get_seq_length() == 5  # width 6 less the one token generate feeds
    fresh = prefill(model, ids, mask)
    real = mask[:, :5].bool()
    for kept, computed in zip(reused.layers, fresh.layers, strict=True):
        torch.testing.assert_close(
            kept.keys.transpose(1, 2)[real], computed.keys[:, :, :5].transpose(1, 2)[real]
        )
        torch.testing.assert_close(
            kept.values.transpose(1, 2)[real], computed.values[:, :, :5].transpose(1, 2)[real]
        )


def test_continuation_cache_leaves_one_token_when_the_second_inputs_are_the_prompts(gemma_model):
    """Replies that open with a number have no lead-in: the second inputs are the first
    prompts themselves, all in the cache; ``generate`` must still be fed one token, so the
    reuse stops one short of the width (3 of the 4 positions)."""
    model, tokenizer = gemma_model
    pad = tokenizer.pad_token_id
    prompts = [[11, 12, 13, 14], [21, 22]]
    first_ids, first_mask = left_padded(prompts, pad)
    first = torch.cat([first_ids, torch.tensor([[41, 42], [51, 52]])], dim=1)
    full_mask = torch.cat([first_mask, torch.ones(2, 2, dtype=torch.long)], dim=1)
    cache = prefill(model, first[:, :-1], full_mask[:, :-1])
    second = {"input_ids": first_ids, "attention_mask": first_mask}
    reused = hf_local.continuation_cache(cache, first, first_mask, second)
    assert reused.get_seq_length() == 3
    fresh = prefill(model, first_ids, first_mask)
    real = first_mask[:, :3].bool()
    for kept, computed in zip(reused.layers, fresh.layers, strict=True):
        torch.testing.assert_close(
            kept.keys.transpose(1, 2)[real], computed.keys[:, :, :3].transpose(1, 2)[real]
        )


def test_continuation_cache_reuses_nothing_or_one_position(gemma_model):
    model, tokenizer = gemma_model
    pad = tokenizer.pad_token_id
    first_ids, first_mask = left_padded([[11, 12, 13]], pad)
    first = torch.cat([first_ids, torch.tensor([[41]])], dim=1)
    cache = prefill(model, first[:, :-1], torch.ones(1, 3, dtype=torch.long))

    def reuse(rows):  # noqa: ANN001, ANN202
        ids, mask = left_padded(rows, pad)
        return hf_local.continuation_cache(
            cache, first, first_mask, {"input_ids": ids, "attention_mask": mask}
        )

    assert reuse([[99, 12, 13, 41]]) is None  # the first token differs: nothing in common
    one = reuse([[11, 98, 13, 41]])
    assert one.get_seq_length() == 1
    fresh = prefill(model, torch.tensor([[11, 98, 13, 41]]), torch.ones(1, 4, dtype=torch.long))
    torch.testing.assert_close(one.layers[0].keys, fresh.layers[0].keys[:, :, :1])
