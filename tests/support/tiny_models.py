"""Tiny real models made on the spot, saved to disk and loaded by tsrate's real code: no
download, seconds on a CPU. Each imports torch/transformers when called, so a test that uses
one states its own ``pytest.importorskip`` guards. No test here.

- :func:`make_checkpoint`: a randomly initialised T5 with a ``chronos_config`` block, so the
  real ``BaseChronosPipeline.from_pretrained`` loading path and tokenizer run;
- :func:`save_bigram_model`: a GPT-2 bigram machine built by hand with a character tokenizer
  and a chat template. Each character's embedding points at the character that must follow
  it, attention and MLP outputs are zeroed, and the untied output layer is the identity, so
  greedy decoding after the chat template's ``assistant:`` follows ``successor``:
  :data:`NUMBERS` writes ``10.5, 10.5, …``, :data:`GARBAGE` writes ``xxxx…`` (no numbers);
- :func:`save_tiny_gemma`: a random two-layer Gemma 3 with the same character tokenizer,
  written by :class:`CountingConverter` in place of the packaged GGUF's conversion;
- :func:`make_tiny_clip`: a randomly initialised CLIP with a tiny BPE vocabulary.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

# -- Chronos ----------------------------------------------------------------------------------

#: shorter than the horizon of tests/unit/test_chronos.py (6), so the pipeline's roll-forward
#: runs too
PREDICTION_LENGTH = 4

CHRONOS_CONFIG = {
    "tokenizer_class": "MeanScaleUniformBins",
    "tokenizer_kwargs": {"low_limit": -15.0, "high_limit": 15.0},
    "context_length": 32,
    "prediction_length": PREDICTION_LENGTH,
    "n_tokens": 64,
    "n_special_tokens": 2,
    "pad_token_id": 0,
    "eos_token_id": 1,
    "use_eos_token": True,
    "model_type": "seq2seq",
    "num_samples": 5,
    "temperature": 1.0,
    "top_k": 50,
    "top_p": 1.0,
}


def make_checkpoint(directory: Path) -> Path:
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    config = T5Config(
        vocab_size=CHRONOS_CONFIG["n_tokens"],
        d_model=16,
        d_kv=8,
        d_ff=32,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )
    config.chronos_config = CHRONOS_CONFIG
    T5ForConditionalGeneration(config).save_pretrained(directory)
    return directory


# -- Hugging Face causal LMs: the bigram machine ----------------------------------------------

CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
NUMBERS = {":": "1", "1": "0", "0": ".", ".": "5", "5": ",", ",": " ", " ": "1"}
GARBAGE = {":": "x", "x": "x"}


def bigram_network(
    vocab: dict[str, int], successor: dict[str, str], head_scale: float = 1.0, **config
):  # noqa: ANN201 - a GPT2LMHeadModel; fmt: skip
    """A one-layer GPT-2 over ``vocab`` whose next token depends on the current one only:
    attention and MLP outputs zeroed, the embedding of each ``current`` token one-hot at its
    ``following`` token (10), the head ``head_scale`` x identity; ``<eos>`` is bos and eos;
    ``config`` adds GPT2Config fields."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    size = len(vocab)
    model = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=size,
            n_positions=4096,
            n_embd=size,
            n_layer=1,
            n_head=2,
            tie_word_embeddings=False,
            bos_token_id=vocab["<eos>"],
            eos_token_id=vocab["<eos>"],
            **config,
        )
    )
    with torch.no_grad():
        model.transformer.wpe.weight.zero_()
        model.transformer.wte.weight.zero_()
        for current, following in successor.items():
            model.transformer.wte.weight[vocab[current], vocab[following]] = 10.0
        for layer in model.transformer.h:
            for projection in (layer.attn.c_proj, layer.mlp.c_proj):
                projection.weight.zero_()
                projection.bias.zero_()
        model.lm_head.weight.copy_(head_scale * torch.eye(size))
    return model


def save_bigram_model(folder, successor: dict[str, str]):
    vocab, tokenizer = character_tokenizer()
    tokenizer.chat_template = CHAT_TEMPLATE
    bigram_network(vocab, successor).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# -- Gemma 3 ------------------------------------------------------------------------------------


def character_tokenizer(extra_tokens=(), multiple_of: int = 1, **special_tokens):
    """A fast tokenizer with one token per printable character, then ``<eos>``, ``<unk>``,
    ``extra_tokens`` and unused tokens up to a multiple of ``multiple_of``; ``<eos>`` pads.
    Returns (vocab, tokenizer); ``special_tokens`` go to ``PreTrainedTokenizerFast``."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(string.printable)}
    for token in ("<eos>", "<unk>", *extra_tokens):
        vocab[token] = len(vocab)
    while len(vocab) % multiple_of:
        vocab[f"<unused{len(vocab)}>"] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    backend.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token="<eos>",
        pad_token="<eos>",
        unk_token="<unk>",
        **special_tokens,
    )
    return vocab, tokenizer


def tiny_gemma_config(vocab: dict[str, int], tied: bool = False):  # noqa: ANN201 - a Gemma3TextConfig
    """The two-layer Gemma 3 text configuration of the tiny test models over ``vocab`` (its
    ``<eos>`` is also the pad and bos token): one sliding-window layer (window 64), one full."""
    from transformers import Gemma3TextConfig

    return Gemma3TextConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=4096,
        sliding_window=64,
        layer_types=["sliding_attention", "full_attention"],
        eos_token_id=vocab["<eos>"],
        bos_token_id=vocab["<eos>"],
        pad_token_id=vocab["<eos>"],
        initializer_range=0.5,  # logits far apart: no argmax ties between the two paths
        tie_word_embeddings=tied,
    )


def save_tiny_gemma(folder: Path, seed: int = 0, tied: bool = False, turns: bool = False) -> Path:
    """A random two-layer Gemma 3 text model. Untied by default: a tiny random model with a
    tied head mostly repeats its last token, an untied one writes varied replies. ``turns``:
    the tokenizer has Gemma's turn tokens and, like the packaged GGUF's, no chat template."""
    import torch
    from transformers import Gemma3ForCausalLM

    special = ["<start_of_turn>", "<end_of_turn>"] if turns else []
    vocab, tokenizer = character_tokenizer(special, additional_special_tokens=special or None)
    if not turns:
        tokenizer.chat_template = CHAT_TEMPLATE
    config = tiny_gemma_config(vocab, tied)
    torch.manual_seed(seed)
    model = Gemma3ForCausalLM(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


class CountingConverter:
    def __init__(self, fail: bool = False, tied: bool = False, turns: bool = False):
        self.calls = 0
        self.fail = fail
        self.tied = tied
        self.turns = turns

    def __call__(self, folder: Path) -> None:
        self.calls += 1
        save_tiny_gemma(folder, tied=self.tied, turns=self.turns)
        if self.fail:
            raise RuntimeError("conversion killed")


# -- CLIP ---------------------------------------------------------------------------------------


def make_tiny_clip(folder: Path, image_size: int = 32, seed: int = 0) -> Path:
    """A randomly initialised CLIP (one layer, width 16, patches of 8) with a tiny BPE
    vocabulary of letters, saved like a real checkpoint."""
    import torch
    import transformers

    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for letter in "abcdefghijklmnopqrstuvwxyz":
        vocab[letter] = len(vocab)
        vocab[letter + "</w>"] = len(vocab)
    folder.mkdir()
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = transformers.CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    small = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2)
    config = transformers.CLIPConfig(
        text_config=dict(
            vocab_size=len(vocab),
            max_position_embeddings=64,
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=1,
            **small,
        ),
        vision_config=dict(image_size=image_size, patch_size=8, **small),
        projection_dim=8,
    )
    torch.manual_seed(seed)
    transformers.CLIPModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
