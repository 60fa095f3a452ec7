"""Tiny language models built in memory (nothing saved, nothing loaded from disk), for the
sweep tests of the local language-model systems. No test here.

- :func:`bigram_model`: the GPT-2 bigram machine of tests/support/tiny_models.py (each
  character's embedding points at the character that must follow it, attention and MLP
  outputs zeroed, the untied output layer 3x the identity), with a successor that may also be
  ``<eos>``: greedy decoding follows ``successor`` from the prompt's last character, so a
  reply is worked out by hand. The successor's logit is 30, every other one about 0 (sampling at
  temperature 1 picks another token with probability about 1e-11); a character without a
  successor scores every token 0 (sampling: uniform).
- :func:`tiny_gemma`: a random two-layer Gemma 3 over the same character tokenizer
  (tests/support/tiny_models.tiny_gemma_config), real attention and a sliding window.

Both return ``(model, tokenizer)`` with the tokenizer set as ``HfLocalSystem.load`` sets it
(left padding, ``<eos>`` pads).
"""

from __future__ import annotations

from tests.support.tiny_models import bigram_network, character_tokenizer, tiny_gemma_config


def bigram_model(successor: dict[str, str], extra_tokens=(), **special_tokens):  # noqa: ANN201
    import torch

    vocab, tokenizer = character_tokenizer(extra_tokens, multiple_of=2, **special_tokens)
    tokenizer.padding_side = "left"
    torch.manual_seed(0)
    # the final layer norm scales the one-hot row to about 10: x3 gives logits of 30
    model = bigram_network(vocab, successor, head_scale=3.0, pad_token_id=vocab["<eos>"])
    return model.eval(), tokenizer


def tiny_gemma(seed: int = 0):  # noqa: ANN201
    import torch
    from transformers import Gemma3ForCausalLM

    vocab, tokenizer = character_tokenizer()
    tokenizer.padding_side = "left"
    torch.manual_seed(seed)
    return Gemma3ForCausalLM(tiny_gemma_config(vocab)).eval(), tokenizer
