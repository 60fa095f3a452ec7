"""An independent reference decoder for the restricted decoding of a local language model
(tsrate.systems.gemma, tsrate.systems.choice_decoding) on a character tokenizer: full forward
passes without a cache, every logit masked but the allowed characters, argmax. No test here.
"""

from __future__ import annotations


def character_greedy(model, tokenizer, text: str, next_characters, complete, eos, limit) -> str:
    """Independent reference decoder for a character tokenizer (one token per character):
    full forward passes without a cache; at each step every logit masked but the characters
    ``next_characters(reply)`` allows (and the end of sequence once ``complete(reply)``, or
    when nothing continues it); argmax; stop at an end of sequence or after ``limit`` steps."""
    import torch

    vocab = tokenizer.get_vocab()
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    reply = ""
    with torch.no_grad():
        for _ in range(limit):
            nxt = set(next_characters(reply))
            allowed = [vocab[c] for c in nxt]
            if complete(reply) or not nxt:
                allowed += eos
            mask = torch.full((model.config.vocab_size,), float("-inf"))
            mask[allowed] = 0.0
            token = int(torch.argmax(model(input_ids=ids).logits[0, -1] + mask))
            if token in eos:
                break
            reply += tokenizer.decode([token])
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    return reply


def trie_greedy(model, tokenizer, text: str, answers: list[str], eos: list[int]) -> str:
    """The next characters of the answers the reply so far begins; the end of sequence once
    the reply is a whole answer."""
    return character_greedy(
        model,
        tokenizer,
        text,
        lambda reply: [
            a[len(reply)] for a in answers if a.startswith(reply) and len(a) > len(reply)
        ],
        lambda reply: reply in answers,
        eos,
        1 + max(map(len, answers)),
    )
