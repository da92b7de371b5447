"""The configured model behind the `Embedder` seam, with the lightest encoder that serves.

`ModelEmbedder(options)` encodes with the model's ONNX export (`indexer.onnx_encoder`:
ONNX Runtime + `tokenizers`, loaded in 0.1-0.3 s) when one exists, and with
sentence-transformers (`SentenceTransformerEmbedder`: torch, bf16 where the CPU has it,
6-20 s to import) otherwise, and for bulk work where it pays:

- a search's query, and any batch smaller than `TORCH_BATCH_MIN`, goes to ONNX;
- an index run announces how many texts it will embed (`expect`): from `TORCH_ABOVE`
  texts on, torch loads in a thread while ONNX embeds the first batches, and batches of
  `TORCH_BATCH_MIN` texts or more go to torch once it is loaded (the measurement:
  docs/BENCHMARKS.md, "Issue 41: cold start");
- without an export, torch does everything, and the first process that loads it makes
  the export (`indexer.onnx_export`; a long-lived process in a thread, others before
  they go on), so each later process is light. A model that cannot be exported keeps
  torch, and `encoder_state()` (in `status`) says why.

`prepare()` starts loading the encoder an index run will need in a thread (phase 1 calls
it at its first changed file), so the walk, the text, trigrams and symbols do not wait
for it; a run with nothing to embed never loads a model.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ctxd.indexer.embedder import (
    EmbedOptions,
    SentenceTransformerEmbedder,
    Vectors,
    resolve_model_dir,
)
from ctxd.indexer.errors import CtxdError
from ctxd.indexer.onnx_encoder import ExportState, OnnxEncoder, find_export, state_line

log = logging.getLogger(__name__)

TORCH_BATCH_MIN = 16
"""Batches of this many texts or more go to torch bf16 when it is loaded (faster there)."""
TORCH_ABOVE = 256
"""An index run with this many texts to embed loads torch for them (the load, 6-20 s,
pays off); fewer are embedded with ONNX alone."""
RECHECK_S = 5.0
"""How often a process without an export looks for one another process made."""


def encoder_state_of(options: EmbedOptions, cache: Path | None = None) -> dict[str, Any]:
    """The query encoder a process would use for `options` (`status`), loading nothing."""
    try:
        model_dir = resolve_model_dir(options.model)
    except CtxdError as err:
        return {"kind": "none", "reason": err.message}
    state = find_export(model_dir, cache) if model_dir is not None else None
    return state_line(state, local=model_dir is not None)


class ModelEmbedder:
    """ONNX for queries and small batches, torch for bulk (module docstring)."""

    def __init__(self, options: EmbedOptions, *, background_export: bool = False,
                 cache: Path | None = None, onnx_threads: int | None = None) -> None:
        self.options = options
        self.name = options.model
        self.torch = SentenceTransformerEmbedder(options)
        self.model_dir: Path | None = self.torch._dir
        self.background_export = background_export
        self.cache = cache
        self.onnx_threads = options.threads if onnx_threads is None else onnx_threads
        self._onnx: OnnxEncoder | None = None
        self._state: ExportState | None = None
        self._checked = 0.0
        self._lock = threading.Lock()
        self._loaders: dict[str, threading.Thread] = {}
        self._exporting: threading.Thread | None = None
        self._export_tried = False
        self._broken = ""
        """Why this process's export does not load (then it encodes with torch)."""

    # -- the Embedder seam ---------------------------------------------------------------

    @property
    def dimension(self) -> int:
        return self.torch.dimension

    @property
    def max_tokens(self) -> int:
        return self.torch.max_tokens

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self.torch.count_tokens(texts)

    @property
    def tokens_add_up(self) -> bool:
        return self.torch.tokens_add_up

    @property
    def precision(self) -> str:
        return self.torch.precision if self.torch_loaded else "fp32"

    def embed(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        onnx = self.onnx()
        if onnx is not None and not (self.torch_loaded and len(texts) >= TORCH_BATCH_MIN):
            try:
                onnx.load()
            except Exception as exc:  # a damaged export: this process keeps torch
                self._broken = f"the ONNX export {onnx.state.onnx_path} does not load: " \
                    f"{type(exc).__name__}: {exc}"[:500]
                log.warning("%s; encoding with torch", self._broken)
            else:
                return onnx.embed(texts)
        vecs = self.torch.embed(texts)
        self._after_torch()
        return vecs

    # -- which encoder -------------------------------------------------------------------

    @property
    def torch_loaded(self) -> bool:
        return self.torch._model is not None

    def export_state(self) -> ExportState | None:
        """The export of this model (usable or failed), None without one; looked up at
        most every `RECHECK_S` while there is none (a few stats)."""
        if self.model_dir is None:
            return None
        with self._lock:
            now = time.monotonic()
            if self._state is None and now - self._checked >= RECHECK_S:
                self._checked = now
                self._state = find_export(self.model_dir, self.cache)
            return self._state

    def onnx(self) -> OnnxEncoder | None:
        """The ONNX encoder, when this model has a usable export."""
        if self._broken:
            return None
        if self._onnx is not None:
            return self._onnx
        state = self.export_state()
        if state is None or not state.ok or self.model_dir is None:
            return None
        with self._lock:
            if self._onnx is None:
                self._onnx = OnnxEncoder(state, self.model_dir, self.name,
                                         threads=self.onnx_threads)
            return self._onnx

    def encoder_state(self) -> dict[str, Any]:
        """The query encoder for `status`: {kind: onnx|torch, reason or path}."""
        if self._broken:
            return {"kind": "torch", "reason": self._broken}
        return state_line(self.export_state(), local=self.model_dir is not None)

    def prepare(self) -> None:
        """Start loading what an index run will embed with, in a thread (idempotent)."""
        onnx = self.onnx()
        self._start(onnx.load if onnx is not None else self.torch._load, "ctxd-model-load")

    def expect(self, texts: int) -> None:
        """An index run is about to embed `texts` texts: load torch in a thread for many."""
        if texts >= TORCH_ABOVE and not self.torch_loaded:
            self._start(self.torch._load, "ctxd-torch-load")

    def _start(self, target: Any, name: str) -> None:
        with self._lock:
            if name in self._loaders:
                return

            def run() -> None:
                try:
                    target()
                except Exception:  # the embed call that needs it reports the error
                    log.debug("loading the model in the background failed", exc_info=True)

            # Not a daemon thread: a process that ends while the model is still loading (an
            # index run's storage_error, a Ctrl-C) waits for the load instead of tearing down
            # torch or ONNX Runtime under it, which aborted the process (SIGABRT, "terminate
            # called without an active exception") after it had printed its error.
            self._loaders[name] = thread = threading.Thread(target=run, name=name)
            thread.start()

    def _after_torch(self) -> None:
        """Torch is loaded: make the export if this model has none (once per process)."""
        if self._export_tried or self.model_dir is None:
            return
        self._export_tried = True
        if self.export_state() is not None:
            return
        if self.background_export:
            self._exporting = threading.Thread(target=self.export_now, name="ctxd-onnx-export",
                                               daemon=True)
            self._exporting.start()
        else:
            self.export_now()

    def export_now(self) -> ExportState | None:
        """Make (or find) this model's export now; needs torch (imports it)."""
        if self.model_dir is None:
            return None
        from ctxd.indexer.onnx_export import export

        state = export(self.model_dir, self.cache)
        with self._lock:
            self._state = state
        return state

    def wait_export(self, timeout: float | None = None) -> None:
        """Wait for a background export (tests, shutdown)."""
        if self._exporting is not None:
            self._exporting.join(timeout)
