"""Counts model tokens (word pieces) without loading torch.

`load_token_counter(model_dir)` returns a `TokenCounter`: a batch function that
maps lines (or any texts) to their word-piece counts, special tokens excluded. It
reads the model's `tokenizer.json` with `tokenizers` directly and resets the
truncation and padding that the packaged file fixes at 128 (see LIMITS.md), so
long texts are counted in full. Used by the chunker to size chunks in tokens and
by the pipeline to check that no embedding input exceeds the model's limit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

TokenCounter = Callable[[Sequence[str]], list[int]]
"""texts -> word pieces per text, without [CLS]/[SEP]."""


def approximate_counter(texts: Sequence[str]) -> list[int]:
    """A model-free estimate (one token per 3 characters, rounded up), used when a
    model ships no `tokenizer.json`. Overestimates code slightly, which is the safe side."""
    return [(len(t) + 2) // 3 for t in texts]


def load_token_counter(model_dir: Path | None) -> TokenCounter:
    """A counter for the model in `model_dir`, or `approximate_counter` without one."""
    if model_dir is None or not (Path(model_dir) / "tokenizer.json").is_file():
        return approximate_counter
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()

    def count(texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in tok.encode_batch(list(texts), add_special_tokens=False)]

    return count
