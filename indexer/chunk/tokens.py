"""Counts model tokens (word pieces) without loading torch.

`load_token_counter(model_dir)` returns a `TokenCounter`: a batch function that
maps lines (or any texts) to their word-piece counts, special tokens excluded. It
reads the model's `tokenizer.json` with `tokenizers` directly and resets the
truncation and padding that the packaged file fixes at 128, so long texts are counted
in full: the chunker sizes chunks in tokens with it, and the pipeline checks that no
embedding input exceeds the model's limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

TokenCounter = Callable[[Sequence[str]], list[int]]
"""texts -> word pieces per text, without [CLS]/[SEP]."""


def approximate_counter(texts: Sequence[str]) -> list[int]:
    """A model-free estimate (one token per 3 characters, rounded up), used when a
    model ships no `tokenizer.json`. Overestimates code slightly, which is the safe side."""
    return [(len(t) + 2) // 3 for t in texts]


def load_token_counter(model_dir: Path | None, *, fast: bool = True) -> TokenCounter:
    """A counter for the model in `model_dir`, or `approximate_counter` without one.
    `fast=False` always counts with the tokenizer (the benchmarks' baseline)."""
    if model_dir is None or not (Path(model_dir) / "tokenizer.json").is_file():
        return approximate_counter
    from tokenizers import Tokenizer

    text = (Path(model_dir) / "tokenizer.json").read_text(encoding="utf-8")
    tok = Tokenizer.from_str(text)
    tok.no_truncation()
    tok.no_padding()

    def count(texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in tok.encode_batch(list(texts), add_special_tokens=False)]

    config = json.loads(text)  # the same file, read once
    if fast and is_lowercase_bert(config):
        added = [str(t["content"]) for t in config.get("added_tokens") or []]
        return WordPieceCounter(tok, count, added)
    return count


def adds_up(counter: TokenCounter | None) -> bool:
    """True for a counter whose count of texts joined by `\\n` is the sum of theirs:
    `WordPieceCounter` (BERT splits at whitespace first, and a newline is no piece; an
    added token holds no newline). Not `approximate_counter` (it rounds per text)."""
    return isinstance(counter, WordPieceCounter)


def is_lowercase_bert(config: dict[str, Any]) -> bool:
    """True for an uncased BERT tokenizer (BertNormalizer lowercasing, BertPreTokenizer,
    WordPiece): the one whose counts `WordPieceCounter` reproduces."""
    normalizer = config.get("normalizer") or {}
    return (normalizer.get("type") == "BertNormalizer" and normalizer.get("lowercase") is True
            and (config.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
            and (config.get("model") or {}).get("type") == "WordPiece")


_ASCII_WORDS = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
"""An uncased BERT pre-tokenizer on printable ASCII: runs of letters and digits, and each
punctuation character alone (all ASCII symbols are BERT punctuation)."""
_SEP = "\x01"
"""Joins a batch's texts for `_count_ascii` (a control character: never in a fast text)."""
_ASCII_WORDS_SEP = re.compile(_ASCII_WORDS.pattern + "|" + _SEP)
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""Characters BERT's normaliser deletes (its clean_text), sent to the tokenizer instead."""


class _PieceCounts(dict[str, int]):
    """Word -> its WordPiece count, filled on first use (`__missing__`) from the model."""

    def __init__(self, model: Any, max_size: int) -> None:
        super().__init__({_SEP: -1})
        self._model = model
        self._max_size = max_size

    def __missing__(self, word: str) -> int:
        if len(self) >= self._max_size:
            self.clear()
            self[_SEP] = -1
        n = self[word] = len(self._model.tokenize(word))
        return n


class WordPieceCounter:
    """Word pieces per text for an uncased BERT tokenizer, without building encodings.

    Profiling phase 1 (`ctxd index --dry-run` of 2,900 real Python files) found 79% of
    its time in `Tokenizer.encode_batch`, which builds ids,
    offsets and masks to be counted and dropped. Code lines are nearly all printable
    ASCII: for those the normaliser is `lower()` and the pre-tokenizer one regex, and a
    word's piece count is the WordPiece model's, cached per word (code repeats its
    words). Any other text (non-ASCII, control characters, an added token such as
    `[CLS]`, which the tokenizer matches before normalising) goes to `fallback`, the full
    tokenizer. Counts equal the tokenizer's (tests/indexer/test_tokens.py).
    """

    def __init__(self, tok: Any, fallback: TokenCounter, added: Sequence[str] = (),
                 max_cached: int = 500_000) -> None:
        self._fallback = fallback
        self._counts = _PieceCounts(tok.model, max_cached)
        self._added = tuple(a for a in added if a)
        """Added tokens: one in a text sends it to the tokenizer (as does a control
        character)."""

    def _plain(self, text: str) -> bool:
        """No control character and no added token (one substring search each: 3x faster
        than one regex of the alternatives)."""
        return _ASCII_CONTROL.search(text) is None and not any(a in text for a in self._added)

    def _fast(self, text: str) -> bool:
        return text.isascii() and self._plain(text)

    def __call__(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        if self._fast("\n".join(texts)):
            return self._count_ascii(texts)
        out = [0] * len(texts)
        fast = [i for i, text in enumerate(texts) if text.isascii()]
        if not self._plain("\n".join(texts[i] for i in fast)):
            fast = [i for i in fast if self._plain(texts[i])]
        slow = sorted(set(range(len(texts))) - set(fast))
        for part, counter in ((fast, self._count_ascii), (slow, self._fallback)):
            if part:
                for i, n in zip(part, counter([texts[i] for i in part]), strict=True):
                    out[i] = n
        return out

    def _count_ascii(self, texts: Sequence[str]) -> list[int]:
        """Counts of printable-ASCII texts: one regex pass over all of them (joined by a
        separator that counts -1), the words' counts looked up, summed between separators."""
        import numpy as np  # here, not at import: settings and help stay free of numpy

        words = _ASCII_WORDS_SEP.findall(_SEP.join(texts).lower())
        counts = np.fromiter(map(self._counts.__getitem__, words), dtype=np.int64,
                             count=len(words))
        ends = np.flatnonzero(counts < 0)
        totals = np.cumsum(np.maximum(counts, 0))
        at_ends = np.concatenate([totals[ends], totals[-1:] if len(totals) else [0]])
        out: list[int] = np.diff(at_ends, prepend=0).tolist()
        return out
