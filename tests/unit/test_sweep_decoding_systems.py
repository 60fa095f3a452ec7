"""Gaps the mutation sweep found in the decoding helpers of the language-model systems.

Every expectation here is worked by hand (vocabulary entries, replies and their numbers) or
written from the definition with numpy, never taken from the product's own functions.
"""

from __future__ import annotations

import numpy as np
import pytest

from tsrate.systems import numeric_decoding


def test_token_surface_reads_byte_tokens_in_hexadecimal_and_sentencepiece_spaces():
    # 0x2C = 44 = ","; 0x0A = 10 = newline; 0x2D = 45 = "-"
    assert numeric_decoding.token_surface("<0x2C>") == ","
    assert numeric_decoding.token_surface("<0x0A>") == "\n"
    assert numeric_decoding.token_surface("<0x2d>") == "-"
    assert numeric_decoding.token_surface("▁12") == " 12"
    assert numeric_decoding.token_surface("Ġ3Ċ") == " 3\n"


class _Vocabulary:
    """A tokenizer over a fixed list: ``tokens`` as the vocabulary's strings, ``texts`` as
    what ``decode`` makes of each (they may differ, as for real byte-level tokenizers)."""

    def __init__(self, tokens, texts, eos_token_id):
        self.tokens = tokens
        self.texts = texts
        self.eos_token_id = eos_token_id

    def __len__(self):
        return len(self.tokens)

    def convert_ids_to_tokens(self, ids):
        return [self.tokens[i] for i in ids]

    def decode(self, ids):
        return "".join(self.texts[i] for i in ids)


def _vocabulary(eos_token_id):
    full = "0123456789.,-+ \n"
    entries = [
        ("<pad>", ""),  # 0: not numeric
        ("1", "1"),  # 1: a digit
        ("▁2", " 2"),  # 2: a digit after a space
        ("<0x0A>", "\n"),  # 3: a byte token, newline
        ("abc", "abc"),  # 4: letters
        (None, ""),  # 5: a hole in the vocabulary
        ("7", "7x"),  # 6: looks numeric, decodes to more than a number
        ("", ""),  # 7: decodes to nothing
        ("xyz", "5"),  # 8: its string is not numeric (the cheap pass drops it)
        (full, full),  # 9: every numeric character at once
        ("<eos>", ""),  # 10
        ("<eot>", ""),  # 11
    ]
    tokens = [t for t, _ in entries]
    texts = [x for _, x in entries]
    return _Vocabulary(tokens, texts, eos_token_id)


def test_numeric_token_ids_keep_tokens_numeric_by_string_and_by_decoding_plus_the_ends():
    ids = numeric_decoding.numeric_token_ids(_vocabulary(10), eos_ids=[11])
    assert ids == [1, 2, 3, 9, 10, 11]
    # a tokenizer without an end-of-sequence id: only the extra end ids are added
    assert numeric_decoding.numeric_token_ids(_vocabulary(None), eos_ids=(11,)) == [1, 2, 3, 9, 11]


class _Model:
    def __init__(self, head):
        self.head = head

    def get_output_embeddings(self):
        return self.head

    def set_output_embeddings(self, head):
        self.head = head


@pytest.mark.parametrize("bias", [True, False])
def test_restricted_head_writes_the_allowed_logits_at_their_indices_and_the_rest_lowest(bias):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    vocab, width = 10, 4
    head = torch.nn.Linear(width, vocab, bias=bias)
    model = _Model(head)
    allowed = [1, 4, 7]
    hidden = torch.randn(2, 3, width)
    weight = head.weight.detach().numpy().astype(float)
    offset = head.bias.detach().numpy().astype(float) if bias else np.zeros(vocab)
    h = hidden.numpy().astype(float)
    with numeric_decoding.restricted_head(model, allowed) as small:
        assert model.head is small
        assert "allowed" not in small.state_dict()  # the index is not a saved weight
        with torch.no_grad():
            logits = small(hidden).numpy().astype(float)
    assert model.head is head
    assert logits.shape == (2, 3, vocab)
    expected = np.full((2, 3, vocab), float(torch.finfo(torch.float32).min))
    for k in allowed:
        expected[..., k] = h @ weight[k] + offset[k]
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)
    # greedy over the restricted head picks the best allowed token, by hand
    best = np.array(allowed)[np.argmax(h @ weight[allowed].T + offset[allowed], axis=-1)]
    np.testing.assert_array_equal(logits.argmax(-1), best)


def test_a_reply_without_any_separator_is_not_complete():
    assert not numeric_decoding.ForecastComplete(None, 0, 1).done("12")
    assert numeric_decoding.ForecastComplete(None, 0, 1).done("12,")


class _Replies:
    """batch_decode of fixed replies; records whether special tokens were skipped."""

    def __init__(self, replies):
        self.replies = replies
        self.skipped = None

    def batch_decode(self, ids, skip_special_tokens=False):
        self.skipped = skip_special_tokens
        return self.replies


def test_the_stop_rule_reads_each_row_without_special_tokens_after_the_prompt():
    torch = pytest.importorskip("torch")
    tokenizer = _Replies(["1, 2, 3,", "1, 2"])
    stop = numeric_decoding.ForecastComplete(tokenizer, 2, 3)
    done = stop(torch.zeros((2, 5), dtype=torch.long))
    assert done.tolist() == [True, False]
    assert tokenizer.skipped is True


def test_lead_in_budget_and_completion():
    # the free-text opening is decoded with the full head for at most 24 tokens
    assert numeric_decoding.LEAD_IN_TOKENS == 24
    assert numeric_decoding.lead_in("7") == ("", True)
    assert numeric_decoding.lead_in("  .5") == ("", True)
    complete = numeric_decoding.LeadInComplete(None, 0, 0)
    assert complete.done("Sure:\n") is True
    assert complete.done("The next") is False
    assert complete.done("3") is True


# -- closed answers (choice_decoding) -------------------------------------------------------


def test_choice_trie_allows_the_next_tokens_of_the_answers_the_reply_begins():
    from tsrate.systems.choice_decoding import ChoiceTrie

    trie = ChoiceTrie([[5, 6], [5, 7, 8], [9], []], eos_ids=[2, 1, 2])
    assert trie.allowed([]) == [5, 9]
    assert trie.allowed([5]) == [6, 7]
    assert trie.allowed([5, 7]) == [8]
    assert trie.allowed([5, 6]) == [1, 2]  # a whole answer: only the end
    assert trie.allowed([5, 7, 8]) == [1, 2]
    assert trie.allowed([9]) == [1, 2]
    assert trie.allowed([3]) == [1, 2]  # nothing continues: the end
    assert trie.tokens() == [1, 2, 5, 6, 7, 8, 9]
    assert trie.max_tokens() == 4  # three tokens of "5 7 8" and the end
    # a whole answer that another continues: the end or the continuation
    assert ChoiceTrie([[5], [5, 6]], eos_ids=[0]).allowed([5]) == [0, 6]
    with pytest.raises(ValueError):
        ChoiceTrie([[], []], eos_ids=[0])


def test_admissible_keeps_only_spellings_read_as_the_same_answer():
    from tsrate.systems.choice_decoding import admissible, spellings

    assert spellings("Up") == ["Up", " Up", "up", " up", "UP", " UP"]
    # a parser that reads only lower-case "up"/"down" (after stripping)
    reads = {"up": "up", "down": "down"}
    got = admissible(["up", "Down", "sideways"], lambda t: reads.get(t.strip()))
    assert got == ["up", " up"]  # "Down" is unreadable as written, "sideways" always
    # a parser that reads every case as the lower-case answer
    got = admissible(["no"], lambda t: t.strip().lower() if t.strip().lower() == "no" else None)
    assert got == ["no", " no", "No", " No", "NO", " NO"]


class _Characters:
    """A vocabulary of strings; ``decode`` joins them (special tokens dropped when asked)."""

    def __init__(self, tokens, special=()):
        self.tokens = tokens
        self.special = set(special)

    def __len__(self):
        return len(self.tokens)

    def convert_ids_to_tokens(self, ids):
        return [self.tokens[i] for i in ids]

    def decode(self, ids, skip_special_tokens=False):
        return "".join(
            self.tokens[i] for i in ids if not (skip_special_tokens and i in self.special)
        )


def test_candidate_tokens_are_the_non_empty_tokens_made_of_the_characters():
    from tsrate.systems.choice_decoding import candidate_tokens

    vocabulary = _Characters(["1", None, "", "▁2", "a", "12", "<0x2C>", "1a"])
    assert candidate_tokens(vocabulary, "0123456789 ") == [0, 3, 5]
    assert candidate_tokens(vocabulary, "0123456789 ,") == [0, 3, 5, 6]
    assert candidate_tokens(vocabulary, "21") == [0, 5]  # "12" uses every character


def test_choice_trie_of_writes_the_answers_without_special_tokens():
    from tsrate.systems.choice_decoding import ChoiceTrie

    def tokenizer(text, add_special_tokens=True):
        ids = [ord(c) for c in text]
        return {"input_ids": ([1] if add_special_tokens else []) + ids}

    trie = ChoiceTrie.of(tokenizer, ["ab", "c"], eos_ids=[0])
    assert trie.allowed([]) == [ord("a"), ord("c")]
    assert trie.allowed([ord("a")]) == [ord("b")]


def test_pattern_answers_follow_the_partial_match_and_stop_at_the_cap():
    from tsrate.systems.choice_decoding import PatternAnswer, prefix_function

    # ids: 0 end of sequence, 1 "1", 2 "2", 3 ".", 4 "x", 5 "12"
    vocabulary = _Characters(["<eos>", "1", "2", ".", "x", "12"], special=[0])
    number = PatternAnswer(vocabulary, r"\d+\.\d", "0123456789.", eos_ids=[0], limit=4)
    assert number.allowed([]) == [1, 2, 5]  # "." cannot start "d+.d"
    assert number.allowed([1]) == [1, 2, 3, 5]
    assert number.allowed([1, 3]) == [1, 2]  # one digit after the point, not "12"
    assert number.allowed([1, 3, 2]) == [0]  # whole, nothing continues: the end
    assert number.allowed([1, 1, 1, 1]) == [0]  # four tokens: the cap
    assert number.allowed([1, 0]) == [0]  # ended
    assert number.tokens() == [0, 1, 2, 3, 5]
    assert number.max_tokens() == 5
    short = PatternAnswer(vocabulary, r"\d{1,2}", "0123456789.", eos_ids=[0], limit=3)
    assert short.allowed([1]) == [0, 1, 2]  # whole and continuable
    step = prefix_function([short, number], prompt_length=2)
    assert step(1, np.array([7, 7, 1, 3])) == [1, 2]


# -- the LLM forecaster's prompt and reply parsing (llm) -------------------------------------


def test_parse_reads_the_longest_run_and_exactly_the_horizon():
    from tsrate.systems.llm_replies import parse_forecast

    # the runs are "2" (in the lead-in) and "7, 8, 9": the longest is the forecast
    np.testing.assert_array_equal(parse_forecast("Next 2 days and one: 7, 8, 9", 3), [7, 8, 9])
    # exactly as many numbers as the horizon is enough
    np.testing.assert_array_equal(parse_forecast("4.5, -1, .25", 3), [4.5, -1.0, 0.25])
    # a numbered list of exactly the horizon: the values, not the item numbers
    np.testing.assert_array_equal(parse_forecast("1. 10\n2. 11\n3. 12", 3), [10, 11, 12])


def test_parse_refuses_blank_replies_and_any_infinite_value():
    from tsrate.systems.llm_replies import ReplyParseError, parse_forecast

    with pytest.raises(ReplyParseError, match="empty reply"):
        parse_forecast(" \n\t", 2)
    with pytest.raises(ReplyParseError, match="empty reply"):
        parse_forecast(None, 2)
    with pytest.raises(ReplyParseError, match="not finite"):
        parse_forecast("1, 1e999, 3", 3)  # one infinite value among finite ones


def test_failed_rows_keep_their_raw_reply():
    from tsrate.systems.llm_replies import parse_replies

    out = parse_replies(["1, 2", "no idea", None], 2)
    np.testing.assert_array_equal(out.values[0], [1, 2])
    assert np.isnan(out.values[1:]).all()
    assert [(f.row, f.raw_text) for f in out.failures] == [(1, "no idea"), (2, "")]


def test_prompt_digest_hashes_the_numeric_templates_unless_asked_for_the_image_ones():
    import hashlib

    from tsrate.systems import llm_prompts as llm

    def digest(*templates):
        return hashlib.sha256("\x00".join(templates).encode()).hexdigest()[:12]

    assert llm.prompt_digest() == digest(llm.SYSTEM_PROMPT, llm.USER_PROMPT)
    assert llm.prompt_digest(True) == digest(llm.SYSTEM_PROMPT, llm.USER_PROMPT_IMAGE)


def test_window_plots_are_png_urls_and_only_p6_needs_a_sentiment_system():
    import base64

    from tsrate.systems import llm_prompts as llm

    contexts = np.array([[1.0, 2.0, 3.0, 2.5], [4.0, 3.0, np.nan, 5.0]])
    images = llm.window_images(contexts, "P0", 16)  # no sentiment system needed
    assert images.shape == (2, 16, 16, 3) and images.dtype == np.uint8
    url = llm.png_data_url(images[0])
    head = "data:image/png;base64,"
    assert url.startswith(head)
    assert base64.b64decode(url[len(head) :])[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(Exception, match="P6 needs a sentiment system"):
        llm.window_images(contexts, "P6", 16)


def test_sampled_replies_served_from_the_cache_are_counted_one_per_sample(tmp_path):
    from tsrate.systems.llm import LlmSettings, LlmSystem

    settings = LlmSettings(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        api_key_env="",
        retries=0,
        cache_dir=str(tmp_path / "cache"),
    )
    system = LlmSystem("m", settings)
    asked = []

    def request(messages, temperature=None, n=None):
        asked.append(n)
        return [f"r{k}" for k in range(n)]

    system._request = request
    chat = [{"role": "user", "content": "go"}]
    assert system.sample(chat, [0, 1, 2], 0.5) == ["r0", "r1", "r2"]
    assert system.cache_hits == 0
    assert system.sample(chat, [2, 0, 1, 3], 0.5) == ["r2", "r0", "r1", "r0"]
    assert asked == [3, 1] and system.cache_hits == 3
