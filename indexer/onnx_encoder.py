"""The light encoder: a model's ONNX export run by ONNX Runtime, tokenized by `tokenizers`.

Searching needs one short text encoded; importing torch and sentence-transformers for it
costs 6-20 s on a busy 2-core machine, ONNX Runtime and `tokenizers` a fraction of a
second. `indexer.onnx_export` makes the export once, from the sentence-transformers model
in fp32 (the whole module chain: transformer, pooling, normalisation, as the model's
`modules.json` lists them), and checks it against that model before it is used.

Where exports live: `encoder_cache()` (the user's cache folder, `ctxd/encoders`), one
folder per model, named by the hash of the model's files (`content_hash`), holding
`model.onnx` and `meta.json`. A folder appears whole or not at all (made under a temporary
name, then renamed), so concurrent processes never read half an export, and the first of
two racing exporters wins. `meta.json` records the model folders (and their files' sizes
and mtimes) it was made from: a lookup (`find_export`) compares a few `stat`s, never hashes
the weights. A model that could not be exported has a folder with `ok: false` and the
reason, so it is tried once, and `status` says so.

Why the user's cache and not the index home: the export depends on the model only, so one
export serves every home of the user (each project's, each test's, each CI job's
temporary one); a fresh home indexes and searches without torch when the model was
exported once before.

Nothing here imports torch, transformers or sentence-transformers.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ctxd.indexer.chunk.tokens import TokenCounter, adds_up, load_token_counter

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]

EXPORT_FORMAT = 1
"""Bumped when the export's layout or meaning changes: older folders are then ignored."""

SKIPPED_NAMES = frozenset({"README.md", ".gitattributes"})
"""Files of a model folder that do not change its vectors (left out of its hash)."""

CACHE_ENV = "CTXD_ENCODER_CACHE"
"""Overrides the folder of exports (tests; a read-only home directory)."""


TELEMETRY_ENV = "ORT_DISABLE_TELEMETRY"
"""ONNX Runtime 1.32's Linux and macOS wheels report usage to Microsoft (1DS telemetry) and
write a device id under the user's cache folder unless this is set before the library
initialises; ctxd promises that nothing leaves the machine."""


def import_onnxruntime() -> Any:
    """`onnxruntime`, imported with its telemetry off (`ORT_DISABLE_TELEMETRY=1` unless the
    user set it): no uploader, no device id file, no offline event cache."""
    os.environ.setdefault(TELEMETRY_ENV, "1")
    import onnxruntime

    return onnxruntime


def encoder_cache() -> Path:
    """The folder of ONNX exports: `$CTXD_ENCODER_CACHE`, else the user's cache folder's
    `ctxd/encoders` (`XDG_CACHE_HOME` on Linux)."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given)
    import platformdirs

    return Path(platformdirs.user_cache_dir("ctxd", appauthor=False)) / "encoders"


def model_files(model_dir: Path) -> list[Path]:
    """The files that make the model's vectors: every file at the top of the folder and
    in the module folders `modules.json` names (pooling, dense, normalize), sorted."""
    folders = [model_dir]
    try:
        modules = json.loads((model_dir / "modules.json").read_text("utf-8"))
        folders += [model_dir / str(m["path"]) for m in modules if m.get("path")]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    out: list[Path] = []
    for folder in folders:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        out += [Path(e.path) for e in entries
                if e.name not in SKIPPED_NAMES and e.is_file(follow_symlinks=True)]
    return out


def stat_signature(model_dir: Path) -> list[list[Any]]:
    """[relative path, size, mtime_ns] of each of `model_files`: cheap to compare."""
    out: list[list[Any]] = []
    for p in model_files(model_dir):
        st = p.stat()
        out.append([p.relative_to(model_dir).as_posix(), st.st_size, st.st_mtime_ns])
    return out


def content_hash(model_dir: Path) -> str:
    """xxh3-128 of the model files' names and contents: the export's folder name."""
    import xxhash

    h = xxhash.xxh3_128()
    for p in model_files(model_dir):
        h.update(p.relative_to(model_dir).as_posix().encode() + b"\0")
        with open(p, "rb") as f:
            while chunk := f.read(1 << 22):
                h.update(chunk)
        h.update(b"\0")
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class ExportState:
    """An export folder as `meta.json` describes it: usable (`ok`) or why not."""

    folder: Path
    ok: bool
    reason: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def onnx_path(self) -> Path:
        return self.folder / "model.onnx"


def read_meta(folder: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((folder / "meta.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and meta.get("format") == EXPORT_FORMAT else None


def source_key(model_dir: Path) -> dict[str, Any]:
    """What `meta.json` records of a model folder it was made from."""
    return {"dir": os.path.realpath(model_dir), "files": stat_signature(model_dir)}


def find_export(model_dir: Path, cache: Path | None = None) -> ExportState | None:
    """The export made from the model in `model_dir` (usable or failed), or None when
    there is none yet. Reads a few `stat`s and small JSON files."""
    cache = cache or encoder_cache()
    try:
        key = source_key(model_dir)
        folders = [Path(e.path) for e in os.scandir(cache)
                   if e.is_dir() and not e.name.startswith(".")]
    except OSError:
        return None
    for folder in folders:
        meta = read_meta(folder)
        if meta is not None and key in meta.get("sources", []):
            return ExportState(folder, bool(meta.get("ok")), str(meta.get("reason", "")), meta)
    return None


def state_line(state: ExportState | None, local: bool = True) -> dict[str, Any]:
    """The query encoder as `status` reports it: `onnx`, or `torch` with the reason."""
    if not local:
        return {"kind": "torch", "reason": "the model is not a local folder; only a local "
                "model folder is exported to ONNX"}
    if state is None:
        return {"kind": "torch", "reason": "no ONNX export of this model yet; the next "
                "index run that embeds makes it"}
    if not state.ok:
        return {"kind": "torch", "reason": f"this model cannot be exported to ONNX: "
                f"{state.reason}"}
    return {"kind": "onnx", "path": str(state.onnx_path)}


class OnnxEncoder:
    """An `Embedder` over an ONNX export: L2-normalised float32 rows, as the model's
    sentence-transformers pipeline gives them in fp32 (cosine 1.0 to 1e-6 on the export's
    own check, `indexer.onnx_export.verify`). The session loads on first use."""

    def __init__(self, state: ExportState, model_dir: Path, name: str, threads: int = 0) -> None:
        meta = state.meta
        self.state = state
        self.name = name
        self.model_dir = model_dir
        self.dimension = int(meta["dimension"])
        self.max_tokens = int(meta["max_seq_length"])
        self.input_names = [str(n) for n in meta["input_names"]]
        self.lower = bool(meta.get("do_lower_case", False))
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._counter: TokenCounter | None = None
        self._lock = threading.Lock()
        self.precision = "fp32"
        self.device = "cpu"

    def load(self) -> None:
        """Load the tokenizer and the ONNX session now (0.1-0.3 s)."""
        with self._lock:
            if self._session is not None:
                return
            from tokenizers import Tokenizer

            ort = import_onnxruntime()

            tok = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
            tok.no_padding()
            tok.enable_truncation(self.max_tokens)
            opts = ort.SessionOptions()
            # The file is already optimised (`onnx_export`): loading skips that work.
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            opts.intra_op_num_threads = self.threads
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            self._tokenizer = tok
            self._session = ort.InferenceSession(str(self.state.onnx_path), opts,
                                                 providers=["CPUExecutionProvider"])
            log.info("loaded the ONNX export of %s (%s)", self.name, self.state.folder)

    def embed(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.load()
        encs = self._tokenizer.encode_batch([t.lower() if self.lower else t for t in texts])
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for i, e in enumerate(encs):
            n = len(e.ids)
            ids[i, :n], mask[i, :n], types[i, :n] = e.ids, e.attention_mask, e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        out = self._session.run(None, {n: feeds[n] for n in self.input_names})[0]
        vecs = np.asarray(out, dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        unit: Vectors = (vecs / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        return unit

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if self._counter is None:
            self._counter = load_token_counter(self.model_dir)
        return self._counter(texts)

    @property
    def tokens_add_up(self) -> bool:
        self.count_tokens([])
        return adds_up(self._counter)
