"""The light query encoder (issue 41): the ONNX export agrees with the indexing encoder,
is made once per model (atomically, by whichever of racing processes is first), is found
by `stat`, and a model that cannot be exported keeps torch and says why.

The export is made once for this module into its own cache folder (`CTXD_ENCODER_CACHE`
for the subprocesses); the indexing encoder is the session's `real_embedder`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ctxd.indexer.embedder import (
    EmbedOptions,
    SentenceTransformerEmbedder,
    resolve_model_dir,
)
from ctxd.indexer.model_embedder import ModelEmbedder, encoder_state_of
from ctxd.indexer.onnx_encoder import CACHE_ENV, find_export
from ctxd.indexer.onnx_export import export
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import RepoBuilder

pytestmark = pytest.mark.model

QUERIES = (
    "how are pending embeddings committed",
    "where is the write lock taken",
    "parse a glob pattern into a regular expression",
    "x",
    "WriteThread",
    "what happens when the disk is full while indexing",
    "tree-sitter chunking of Python classes and methods",
    "def embed(self, texts: list[str]) -> Vectors",
    "Überprüfung der Konfiguration — naïve café",
    "how do I configure the daemon idle timeout? " * 30,  # past the model's limit
)
"""A fixed set: questions, an identifier, a one-letter query, code, non-ASCII, a long one."""

CHECKOUT = Path(__file__).resolve().parents[2]
SOURCES = ("indexer/write_thread.py", "indexer/walk/ignore.py", "indexer/store/open.py",
           "server/daemon/lifecycle.py", "indexer/embed_options.py", "docs/DAEMON.md")


@pytest.fixture(scope="module")
def model_dir() -> Path:
    found = resolve_model_dir("all-MiniLM-L6-v2")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Path:
    folder = tmp_path_factory.mktemp("encoders")
    state = export(model_dir, folder)
    assert state.ok, state.reason
    return folder


def test_the_export_agrees_with_the_indexing_encoder(cache, model_dir, real_embedder):
    onnx = ModelEmbedder(EmbedOptions(), cache=cache)
    got = onnx.embed(list(QUERIES))
    one_by_one = np.concatenate([onnx.embed([q]) for q in QUERIES])
    assert not onnx.torch_loaded, "a query never loads torch where an export exists"
    indexing = real_embedder.embed(list(QUERIES))  # bf16 where the CPU has it
    fp32 = SentenceTransformerEmbedder(EmbedOptions(precision="fp32")).embed(list(QUERIES))
    for ours in (got, one_by_one):
        assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
        assert (ours * fp32).sum(axis=1).min() >= 0.99999
        assert (ours * indexing).sum(axis=1).min() >= 0.9999
    assert find_export(model_dir, cache).meta["min_cosine"] >= 0.99999


def test_a_small_index_answers_the_same_top_10(cache, repo: RepoBuilder, real_embedder):
    """The same top 10 as the model's own fp32 query vectors, in order; against the bf16
    query vectors the indexing encoder makes on a CPU with bf16 (cosine 0.9999 to fp32),
    semantic hits trade places only where their cosines tie within 0.002."""
    for rel in SOURCES:
        repo.write(rel, (CHECKOUT / rel).read_text(encoding="utf-8"))
    settings = load_settings()
    indexing = Service(settings, embedder=real_embedder)
    assert indexing.index(repo.root).files_indexed == len(SOURCES)
    fp32 = Service(settings, embedder=SentenceTransformerEmbedder(EmbedOptions(precision="fp32")))
    light = Service(settings, embedder=ModelEmbedder(EmbedOptions(), cache=cache))
    try:
        for query in QUERIES:
            for mode in ("semantic", "hybrid"):
                got = light.search(query, mode=mode, limit=10).results
                want = fp32.search(query, mode=mode, limit=10).results
                assert [(h.path, h.start_line) for h in got] == [
                    (h.path, h.start_line) for h in want], (query, mode)
                if mode != "semantic":  # hybrid scores are normalised per answer
                    continue
                bf16 = indexing.search(query, mode=mode, limit=10).results
                for ours, theirs in zip(got, bf16, strict=True):
                    if (ours.path, ours.start_line) != (theirs.path, theirs.start_line):
                        assert abs(ours.score - theirs.score) < 0.002, (query, mode)
        assert not light.embedder.inner.torch_loaded
    finally:
        for service in (indexing, fp32, light):
            service.close()


def test_an_export_is_found_by_stat_and_shared_by_identical_files(cache, model_dir, tmp_path):
    copy = tmp_path / "model-copy"
    shutil.copytree(model_dir, copy)
    assert find_export(copy, cache) is None  # another folder: not this export's source yet
    state = export(copy, cache)  # the same files: the same export, one more source
    assert state.ok and state.folder == find_export(model_dir, cache).folder
    assert len(state.meta["sources"]) >= 2
    assert find_export(copy, cache) == state
    os.utime(copy / "config.json", ns=(1, 1))  # changed (by stat): not looked up blindly
    assert find_export(copy, cache) is None
    assert [p.name for p in cache.iterdir() if p.name.startswith(".")] == []


def test_a_model_that_cannot_be_exported_keeps_torch_and_says_why(model_dir, tmp_path):
    odd = tmp_path / "prompted-model"
    shutil.copytree(model_dir, odd)
    (odd / "config_sentence_transformers.json").write_text(json.dumps(
        {"prompts": {"query": "query: ", "document": ""}, "default_prompt_name": "query"}))
    cache = tmp_path / "encoders"
    state = export(odd, cache)
    assert not state.ok and "prompt" in state.reason
    assert export(odd, cache) == state  # tried once
    emb = ModelEmbedder(EmbedOptions(model=str(odd)), cache=cache)
    assert emb.onnx() is None
    line = emb.encoder_state()
    assert line["kind"] == "torch" and "cannot be exported" in line["reason"]
    assert encoder_state_of(EmbedOptions(model=str(odd)), cache) == line
    assert emb.embed(["where is the lock"]).shape == (1, 384)  # today's path


def test_an_index_run_embeds_with_onnx_and_a_run_with_nothing_new_loads_no_model(
        cache, repo: RepoBuilder):
    repo.write("shop/cart.py", "class Cart:\n    def total(self, prices):\n"
                               "        return sum(prices)\n")
    settings = load_settings()
    first = ModelEmbedder(EmbedOptions(), cache=cache)
    service = Service(settings, embedder=first)
    assert service.index(repo.root).chunks_embedded > 0
    service.close()
    assert first.onnx() is not None and not first.torch_loaded  # a small run: ONNX only
    again = ModelEmbedder(EmbedOptions(), cache=cache)
    service = Service(settings, embedder=again)
    assert service.index(repo.root).chunks_embedded == 0
    service.close()
    assert again._onnx is None and not again.torch_loaded  # nothing new: no model at all


def test_abandoned_temporary_exports_are_removed(cache, model_dir, tmp_path):
    stale = cache / ".export-stale"
    stale.mkdir()
    os.utime(stale, (1, 1))
    fresh = cache / ".export-running"
    fresh.mkdir()
    copy = tmp_path / "another-copy"
    shutil.copytree(model_dir, copy)
    os.utime(copy / "config.json", ns=(2, 2))
    (copy / "README.md").write_text("not part of the model")  # same hash: no new export
    assert export(copy, cache).ok
    assert not stale.exists() and fresh.exists()  # another process may be exporting there
    fresh.rmdir()


def test_a_damaged_export_falls_back_to_torch(cache, tmp_path):
    damaged = tmp_path / "encoders"
    shutil.copytree(cache, damaged)
    for onnx_file in damaged.glob("*/model.onnx"):
        onnx_file.write_bytes(b"not a model")
    emb = ModelEmbedder(EmbedOptions(), cache=damaged)
    vec = emb.embed(["where is the write lock taken"])
    assert vec.shape == (1, 384) and emb.torch_loaded and emb.onnx() is None
    assert "does not load" in emb.encoder_state()["reason"]


RACER = """
import json, sys
from pathlib import Path
from ctxd.indexer.embedder import resolve_model_dir
from ctxd.indexer.onnx_export import export
state = export(resolve_model_dir("all-MiniLM-L6-v2"), Path(sys.argv[1]))
print("STATE=" + json.dumps({"ok": state.ok, "folder": str(state.folder)}))
"""


def test_racing_exporters_leave_one_whole_export(tmp_path):
    cache = tmp_path / "encoders"
    procs = [subprocess.Popen([sys.executable, "-c", RACER, str(cache)], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    outs = [p.communicate(timeout=240) for p in procs]
    states = []
    for (out, err), p in zip(outs, procs, strict=True):
        assert p.returncode == 0, err
        states.append(json.loads(out.strip().splitlines()[-1].removeprefix("STATE=")))
    assert all(s["ok"] for s in states) and states[0]["folder"] == states[1]["folder"]
    assert [p.name for p in cache.iterdir()] == [Path(states[0]["folder"]).name]
    assert sorted(p.name for p in Path(states[0]["folder"]).iterdir()) == [
        "meta.json", "model.onnx"]


SEARCH_RUNNER = """
import json, sys
from ctxd.server.cli.main import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
heavy = ("torch", "transformers", "sentence_transformers")
print("\\nIMPORTED=" + json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def test_a_semantic_search_imports_no_model_library(cache, repo: RepoBuilder, real_embedder):
    repo.write("shop/cart.py", "class Cart:\n    def total(self, prices):\n"
                               "        return sum(prices)\n")
    service = Service(load_settings(), embedder=real_embedder)
    service.index(repo.root)
    service.close()
    env = {**os.environ, CACHE_ENV: str(cache), "CTXD_DAEMON_AUTOSTART": "false"}
    for mode in ("hybrid", "semantic"):
        r = subprocess.run([sys.executable, "-c", SEARCH_RUNNER, "--no-daemon", "search",
                            "--mode", mode, "add up the prices in the basket"],
                           capture_output=True, text=True, env=env, timeout=120, check=False)
        assert "cart.py" in r.stdout and "Traceback" not in r.stderr, r.stdout + r.stderr
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("IMPORTED=")]
        assert json.loads(line[-1].removeprefix("IMPORTED=")) == [], mode


def test_onnx_runtime_reports_nothing_and_writes_no_device_id(tmp_path):
    """ONNX Runtime 1.32's Linux wheel sends usage events to Microsoft and writes a device
    id under the user's cache unless ORT_DISABLE_TELEMETRY is set before it initialises:
    the light encoder's import sets it, so nothing lands in the cache folder."""
    cache_home = tmp_path / "xdg-cache"
    cache_home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env.update(XDG_CACHE_HOME=str(cache_home), HOME=str(tmp_path))
    code = ("from ctxd.indexer.onnx_encoder import import_onnxruntime\n"
            "ort = import_onnxruntime()\n"
            "ort.SessionOptions()\n")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    assert not any(cache_home.rglob("*")), sorted(cache_home.rglob("*"))
