"""Local Hugging Face language models (tsrate.systems.hf_local): greedy ``generate``
against a step-by-step argmax loop; its token limits, batching and progress count; seeded
sampling (varied samples, the same again, special tokens dropped, no top-k cut on a random
model, one list of sample indices a chat); the registry entry (numeric+image rows, the
study's context length, 80 without a study). Each test well under a second.

Written for round 8 of the mutation sweep (tests/planted/mutate.py; the survivors are
tests/planted/sweep8_language_models.json). The older tests (test_hf_local.py) load tiny
checkpoints from disk and take tens of seconds here; these build their models in memory
(tests/support/memory_models.py) or use stand-ins for the transformers loaders and
processors, so the sweep can run them for every planted error.
"""

from __future__ import annotations

import types

import pytest

from tests.support.hf_local_systems import (
    loaded,
    project_var,
    settings,
)
from tests.support.memory_models import bigram_model, tiny_gemma
from tsrate import TsrateError
from tsrate.systems import hf_local
from tsrate.systems.hf_local import HfLocalSystem

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


# -- greedy generation ------------------------------------------------------------------------------------

#: greedy after ":" writes "10.5, 10.5, …"; after "!" "No" and the end of sequence
SUCCESSOR = {":": "1", "1": "0", "0": ".", ".": "5", "5": ",", ",": " ", " ": "1"}
SUCCESSOR |= {"!": "N", "N": "o", "o": "<eos>"}


@pytest.fixture(scope="module")
def bigram():
    return bigram_model(SUCCESSOR)


@pytest.fixture(scope="module")
def gemma_model():
    return tiny_gemma(seed=3)


def test_generate_follows_the_greedy_reply_and_drops_the_end_of_sequence(bigram):
    system = loaded(*bigram, max_new_tokens=9, batch_size=2)
    texts = ["stop!", "1, 2, 3, 4, go:", "q:"]
    assert system.generate(texts) == ["No", "10.5, 10.", "10.5, 10."]
    assert system.generate(texts, max_new_tokens=4) == ["No", "10.5", "10.5"]
    assert system.generate(texts, max_new_tokens=50) == ["No", "10.5, 10.", "10.5, 10."]


def test_generate_stops_where_the_stopping_rule_reads_the_reply_only(bigram):
    from tsrate.systems.numeric_decoding import stopping_for

    system = loaded(*bigram, max_new_tokens=40, batch_size=1)
    stop = stopping_for(system._tokenizer, 2)
    # the prompt holds four numbers: read with it, the rule would stop at once
    assert system.generate(["1, 2, 3, 4, go:"], stopping=stop) == ["10.5, 10.5,"]


def test_generate_with_choices_is_not_clipped_to_the_setting(bigram):
    from tsrate.systems.choice_decoding import ChoiceTrie

    system = loaded(*bigram, max_new_tokens=2)
    tokenizer = system._tokenizer
    trie = ChoiceTrie.of(tokenizer, ["10.5, 1", "2"], [tokenizer.eos_token_id])
    assert system.generate(["go:"], max_new_tokens=trie.max_tokens(), choices=[trie]) == ["10.5, 1"]
    # without choices the setting clips the same request
    assert system.generate(["go:"], max_new_tokens=trie.max_tokens()) == ["10"]


def greedy_loop(model, tokenizer, text: str, steps: int) -> str:
    """Independent greedy decoding: full forward passes without a cache, argmax."""
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    out = []
    with torch.no_grad():
        for _ in range(steps):
            token = int(torch.argmax(model(input_ids=ids).logits[0, -1]))
            if token == tokenizer.eos_token_id:
                break
            out.append(token)
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    return tokenizer.decode(out, skip_special_tokens=True)


def test_generate_is_greedy_on_a_random_model(gemma_model):
    system = loaded(*gemma_model, max_new_tokens=12, batch_size=1)
    texts = ["Next values?", "12, 13, 14,"]
    assert system.generate(texts) == [greedy_loop(*gemma_model, text, 12) for text in texts]


def test_token_limits():
    system = HfLocalSystem("x", settings(max_new_tokens=10))
    assert system.token_limit(None) == 10
    assert system.token_limit(3) == 3
    assert system.token_limit(50) == 10
    assert system.token_limit(50, True) == 50
    assert system.token_limit(None, True) == 10
    assert system.token_limit(0, True) == 10


def test_batches_in_order_or_by_length(bigram):
    texts = ["x" * 40, "ab", "abc", "x" * 70, "y"]
    system = loaded(*bigram, batch_size=2)
    # shortest first: 1 and 2 (full), 3, then 40 > 3 * 1.1 + 16, 70 > 40 * 1.1 + 16
    assert system.batches(texts) == [[4, 1], [2], [0], [3]]
    assert system.batches(texts[:2]) == [[1], [0]]
    assert system.batches(texts[:1]) == [[0]]
    system.group_by_length = False
    assert system.batches(texts) == [[0, 1], [2, 3], [4]]
    system.group_by_length = True
    system._processor = object()  # a vision-language model: in order
    assert system.batches(texts) == [[0, 1], [2, 3], [4]]
    assert system.batches([]) == []


def test_progress_is_told_for_calls_of_several_batches(bigram):
    system = loaded(*bigram, max_new_tokens=3, batch_size=1)
    told = []
    system.progress = told.append
    system.generate(["a:", "bb:"])
    assert [t.split(" ")[0] for t in told] == ["1/2", "2/2"]
    told.clear()
    system.generate(["a:"])
    assert told == []
    system.progress = None
    system.generate(["a:", "bb:"])  # nobody to tell


# -- sampling ---------------------------------------------------------------------------------------------


def test_sampling_is_seeded_varied_and_drops_special_tokens(bigram):
    system = loaded(*bigram, max_new_tokens=3)
    system.chat_text = lambda messages: messages[0]["content"]  # the text as it is
    chats = [[{"role": "user", "content": "z"}], [{"role": "user", "content": "stop!"}]]
    first = system.sample_all(chats, [[0, 1, 2, 3], [0, 1]], 1.0)
    assert system.sample_all(chats, [[0, 1, 2, 3], [0, 1]], 1.0) == first  # seeded
    varied, stopped = first
    assert len(varied) == 4 and len(set(varied)) > 1  # "z" has no successor: every token 1:1
    assert all(len(system._tokenizer(s)["input_ids"]) <= 3 for s in varied)
    assert stopped == ["No", "No"]  # the end of sequence is dropped


# -- the registry entry ----------------------------------------------------------------------------------


def test_the_registry_entry_names_the_system_and_reads_the_seed_and_study():
    with pytest.raises(TsrateError, match="must name it"):
        hf_local.create(None, None, "")
    image = hf_local.create(None, None, "phi3_numeric_image")  # a numeric+image seed row
    assert image.with_image is True and image.system_id == "phi3_numeric_image"
    assert hf_local.create(None, None, "phi3_numeric").with_image is False  # a numeric row
    assert hf_local.create(None, None, "not_in_the_seed").with_image is False
    assert image.context_length == project_var("context_length")
    study = types.SimpleNamespace(context_length=50)
    assert hf_local.create(study, None, "phi3_numeric_image").context_length == 50


def test_sampling_draws_from_the_full_distribution_and_needs_one_index_list_a_chat(
    gemma_model,
):
    """No top-k cut: on a random model (logits spread, no ties) a top-k of 1 would write the
    greedy reply every time; the samples differ. A chat without its list of sample indices
    is an error, not a silently shorter result."""
    system = loaded(*gemma_model, max_new_tokens=4)
    system.chat_text = lambda messages: messages[0]["content"]
    chat = [{"role": "user", "content": "Next?"}]
    (samples,) = system.sample_all([chat], [[0, 1, 2, 3, 4, 5]], 1.0)
    assert len(set(samples)) > 1
    with pytest.raises(ValueError, match="zip"):
        system.sample_all([chat, chat], [[0, 1]], 1.0)
