"""Makes the ONNX export of a sentence-transformers model once (`indexer.onnx_encoder`).

`export(model_dir, cache)` loads the model in fp32 with torch (the caller has torch loaded
already: an index run that embeds, or a search on a model not exported yet), traces its
whole module chain (transformer, pooling, normalisation) with torch's TorchScript
exporter (about 3 s for all-MiniLM-L6-v2; the dynamo exporter, 13 s, is the fallback and
needs `onnxscript`), optimises the graph with ONNX Runtime's hardware-neutral passes
(level EXTENDED) and saves that, so that each later load skips the optimisation; then
checks it (`verify`): the export's vectors of fixed probe texts (short, long past the
model's limit, padded batches, whitespace, non-ASCII) must have cosine >= 0.99999 to the
sentence-transformers model's. A model that fails any step gets a folder with `ok: false`
and the reason, and keeps the torch encoder.

Concurrency: the folder is written under a temporary name in the cache and renamed into
place (`os.rename` of a folder onto an existing, non-empty one fails), so readers see a
whole export or none, and of two racing processes the first rename wins; the loser
removes its copy.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ctxd.indexer.onnx_encoder import (
    EXPORT_FORMAT,
    ExportState,
    OnnxEncoder,
    content_hash,
    encoder_cache,
    find_export,
    import_onnxruntime,
    read_meta,
    source_key,
)

log = logging.getLogger(__name__)

MIN_COSINE = 0.99999
"""The export's vectors of the probe texts against sentence-transformers' in fp32."""

PROBES = (
    "how does the daemon start its socket before the model loads",
    "x",
    "  leading and trailing whitespace \n",
    "def parse(query: str) -> Query:\n    return Query(query.strip())\n",
    "naïve café: 日本語のテキスト, emoji 🚀 and Ünïcödé",
    "where is the write lock taken " * 60,  # past the model's limit: truncated
    "",
)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def export(model_dir: Path, cache: Path | None = None) -> ExportState:
    """The export of the model in `model_dir`: the existing one, or made now. Never
    raises for a model that cannot be exported: returns the failed state."""
    cache = cache or encoder_cache()
    found = find_export(model_dir, cache)
    if found is not None:
        return found
    started = time.perf_counter()
    _remove_abandoned(cache)
    digest = content_hash(model_dir)
    final = cache / digest
    meta = read_meta(final)
    if meta is not None:  # the same files elsewhere (a reinstall): add this source
        meta["sources"] = [*meta.get("sources", []), source_key(model_dir)]
        _write_json(final / "meta.json", meta)
        return ExportState(final, bool(meta.get("ok")), str(meta.get("reason", "")), meta)
    cache.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=cache))
    try:
        meta = {"format": EXPORT_FORMAT, "sources": [source_key(model_dir)], "hash": digest}
        try:
            meta.update(_export_into(model_dir, tmp))
            meta["ok"] = True
        except Exception as exc:  # any failure keeps the torch path, said in status
            log.warning("cannot export %s to ONNX: %s: %s", model_dir, type(exc).__name__, exc)
            with contextlib.suppress(OSError):
                (tmp / "model.onnx").unlink()
            meta.update(ok=False, reason=f"{type(exc).__name__}: {exc}"[:500])
        meta["seconds"] = round(time.perf_counter() - started, 2)
        _write_json(tmp / "meta.json", meta)
        try:
            os.rename(tmp, final)
        except OSError:  # another process was first: use its export
            shutil.rmtree(tmp, ignore_errors=True)
            won = read_meta(final)
            if won is not None:
                meta = won
        else:
            log.info("exported %s to ONNX in %.1f s (%s)", model_dir, meta["seconds"], final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return ExportState(final, bool(meta.get("ok")), str(meta.get("reason", "")), meta)


ABANDONED_S = 3600
"""A temporary export folder this old was left by a process that died exporting."""


def _remove_abandoned(cache: Path) -> None:
    """Remove the temporary folders of exports that never finished (a process killed
    mid-export, a daemon that exited while its background export ran)."""
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(cache):
            if entry.name.startswith(".export-") and now - entry.stat().st_mtime > ABANDONED_S:
                shutil.rmtree(entry.path, ignore_errors=True)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """Write a JSON file whole (temporary file, then rename), private to the user."""
    fd, tmp = tempfile.mkstemp(prefix=".meta-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def _export_into(model_dir: Path, folder: Path) -> dict[str, Any]:
    """Export, optimise and verify into `folder`; returns the meta facts. Raises on any
    failure (the caller records it)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    model.eval()
    if getattr(model, "default_prompt_name", None):
        raise ValueError(f"the model adds the prompt {model.default_prompt_name!r} to every "
                         "text, which the ONNX encoder does not")
    names = [n for n in getattr(model.tokenizer, "model_input_names", INPUTS) if n in INPUTS]
    if "input_ids" not in names or "attention_mask" not in names:
        raise ValueError(f"the model's inputs {names} are not input_ids and attention_mask")
    dim = int(getattr(model, "get_embedding_dimension", model.get_sentence_embedding_dimension)()
              or 0)
    facts: dict[str, Any] = {
        "dimension": dim, "max_seq_length": int(model.max_seq_length or 256),
        "input_names": names, "do_lower_case": bool(getattr(model[0], "do_lower_case", False)),
        "torch": torch.__version__,
    }

    class Whole(torch.nn.Module):
        """token ids -> the model's sentence embedding (all of its modules)."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            out = self.model(dict(zip(names, inputs, strict=True)))
            emb: torch.Tensor = out["sentence_embedding"]
            return emb

    sample = tuple(torch.ones(2, 8, dtype=torch.long) for _ in names)
    raw = folder / "raw.onnx"
    axes = {n: {0: "batch", 1: "tokens"} for n in names}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(Whole().eval(), sample, str(raw), input_names=names,
                              output_names=["sentence_embedding"],
                              dynamic_axes={**axes, "sentence_embedding": {0: "batch"}},
                              opset_version=17, dynamo=False)
            facts["exporter"] = "torchscript"
        except Exception:
            log.info("the TorchScript exporter failed; trying dynamo", exc_info=True)
            with contextlib.suppress(OSError):
                raw.unlink()
            dims = {0: torch.export.Dim("batch", min=1, max=4096),
                    1: torch.export.Dim("tokens", min=1, max=facts["max_seq_length"])}
            torch.onnx.export(Whole().eval(), sample, str(raw), input_names=names,
                              output_names=["sentence_embedding"],
                              dynamic_shapes=tuple(dims for _ in names), dynamo=True,
                              external_data=False)
            facts["exporter"] = "dynamo"
    _optimise(raw, folder / "model.onnx")
    raw.unlink()
    for p in folder.iterdir():  # the home's rule: ctxd's files are the user's only
        p.chmod(0o600)
    facts["min_cosine"] = verify(model, folder, facts, model_dir)
    return facts


def _optimise(src: Path, dst: Path) -> None:
    """Save the graph as ONNX Runtime optimises it at level EXTENDED (fusions that do not
    depend on the CPU), so loading it later can skip optimisation."""
    ort = import_onnxruntime()

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = str(dst)
    opts.log_severity_level = 3
    ort.InferenceSession(str(src), opts, providers=["CPUExecutionProvider"])


def verify(model: Any, folder: Path, facts: dict[str, Any], model_dir: Path) -> float:
    """The lowest cosine between the export's and sentence-transformers' vectors of
    `PROBES`, one at a time and as one padded batch; raises below `MIN_COSINE`."""
    state = ExportState(folder, True, "", {"format": EXPORT_FORMAT, **facts})
    encoder = OnnxEncoder(state, model_dir, "verify", threads=1)
    texts = list(PROBES)
    want = np.asarray(model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                   show_progress_bar=False), dtype=np.float32)
    batch = encoder.embed(texts)
    single = np.concatenate([encoder.embed([t]) for t in texts])
    low = float(min((batch * want).sum(axis=1).min(), (single * want).sum(axis=1).min()))
    if not low >= MIN_COSINE:
        raise ValueError(f"the export's vectors differ from the model's (cosine {low:.6f} < "
                         f"{MIN_COSINE})")
    return round(low, 7)
