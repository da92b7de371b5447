"""Fixtures for the lexical engine: real indexes built from real files, on both engines.

`IndexBuilder` writes a repository's files into a temp folder and stores them through
`IndexStore.upsert_repo` / `IndexStore.replace_file` (a SQLite file, or a fresh schema of
the session's PostgreSQL: the `index` and `zoekt_store` fixtures run each test on both),
one whole-file checkpoint per file, since the lexical engine reads `files`, `file_text`
and `symbols` only. Languages come from
`indexer.chunk.languages.detect_language`; symbols from `simple_symbols`, a small line-based
extractor (Python/Go/TypeScript definitions, Markdown headings) so these tests do not
depend on tree-sitter grammars. `zoekt_store` indexes the Zoekt fixture repositories
(../shared/zoekt-fixtures/repos: `shop` and `notes`) once per session.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from ctxd.indexer.chunk.languages import detect_language
from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.sqlite.store import FileRecord
from tests.conftest import ENGINES
from tests.pg import PgServer

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "zoekt-fixtures"
if not FIXTURES.is_dir():  # checkouts that keep `shared/` inside the repository
    FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "zoekt-fixtures"

NOW = "2026-11-22T00:00:00Z"

_RULES: dict[str, list[tuple[re.Pattern[str], str]]] = {
    "python": [
        (re.compile(r"^(?P<indent>\s*)class\s+(?P<name>[A-Za-z_]\w*)"), "class"),
        (re.compile(r"^(?P<indent>\s*)(?:async\s+)?def\s+(?P<name>[A-Za-z_]\w*)"), "function"),
    ],
    "go": [
        (re.compile(r"^func\s+\([^)]*\)\s*(?P<name>[A-Za-z_]\w*)"), "method"),
        (re.compile(r"^func\s+(?P<name>[A-Za-z_]\w*)"), "function"),
        (re.compile(r"^type\s+(?P<name>[A-Za-z_]\w*)\s+struct"), "struct"),
        (re.compile(r"^type\s+(?P<name>[A-Za-z_]\w*)\s+interface"), "interface"),
    ],
    "typescript": [
        (re.compile(r"^\s*(?:export\s+)?interface\s+(?P<name>\w+)"), "interface"),
        (re.compile(r"^\s*(?:export\s+)?class\s+(?P<name>\w+)"), "class"),
        (re.compile(r"^\s*(?:export\s+)?(?:async\s+)?function\s+(?P<name>\w+)"), "function"),
        (
            re.compile(r"^\s+(?:async\s+)?(?P<name>(?!if|for|while|switch)\w+)\([^)]*\)[^{;]*\{"),
            "method",
        ),
    ],
    "markdown": [(re.compile(r"^#+\s+(?P<name>.+?)\s*$"), "heading")],
}


def simple_symbols(language: str, text: str) -> list[Symbol]:
    """Definitions found line by line (one per line at most); methods are indented defs."""
    out: list[Symbol] = []
    for number, line in enumerate(text.split("\n"), start=1):
        for rx, kind in _RULES.get(language, []):
            m = rx.match(line)
            if m is None:
                continue
            indent = m.groupdict().get("indent") or ""
            real_kind = "method" if kind == "function" and indent else kind
            out.append(Symbol(name=m.group("name"), kind=real_kind, line=number, end_line=number))
            break
    return out


def line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


class IndexBuilder:
    """Builds an index under a temp folder, one repository at a time."""

    def __init__(self, base: Path, url: str = "") -> None:
        self.base = base
        self.store = open_store(base / "index.db", StoreOptions(url=url))

    def add_repo(
        self,
        name: str,
        files: Mapping[str, str],
        *,
        symbols: Mapping[str, list[Symbol]] | None = None,
        languages: Mapping[str, str] | None = None,
    ) -> Path:
        """Write `files` (path -> text) under a folder called `name` and index them."""
        root = self.base / "repos" / name
        for rel, text in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        self.index_dir(root, symbols=symbols, languages=languages)
        return root

    def index_dir(
        self,
        root: Path,
        *,
        symbols: Mapping[str, list[Symbol]] | None = None,
        languages: Mapping[str, str] | None = None,
    ) -> None:
        """Index every regular file under `root` as a repository named after the folder."""
        repo = self.store.upsert_repo(str(root), {}, NOW)
        for p in sorted(root.rglob("*")):
            if not p.is_file():
                continue
            rel = p.relative_to(root).as_posix()
            text = p.read_text(encoding="utf-8")
            lang = (languages or {}).get(rel) or detect_language(rel, text)
            syms = (symbols or {}).get(rel)
            if syms is None:
                syms = simple_symbols(lang, text)
            n = line_count(text)
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            record = FileRecord(rel, p.stat().st_size, p.stat().st_mtime_ns, digest, lang, n)
            chunks = [(Chunk(1, max(n, 1), text), digest)] if text else []
            self.store.replace_file(repo.id, record, text, chunks, syms, NOW)
        self.store.mark_indexed(repo.id, NOW)

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def index(tmp_path: Path, store_engine: str, request: pytest.FixtureRequest
          ) -> Iterator[IndexBuilder]:
    """An empty index in this test's temp folder (each engine in turn);
    `index.add_repo(name, files)` fills it."""
    url = str(request.getfixturevalue("pg_url")) if store_engine == "postgresql" else ""
    builder = IndexBuilder(tmp_path / "idx", url)
    yield builder
    builder.close()


@pytest.fixture
def sqlite_index(tmp_path: Path) -> Iterator[IndexBuilder]:
    """`index` on SQLite only (tests that watch SQLite's own statements)."""
    builder = IndexBuilder(tmp_path / "idx")
    yield builder
    builder.close()


@pytest.fixture(scope="session", params=ENGINES)
def zoekt_store(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
                ) -> Iterator[IndexStore]:
    """The Zoekt fixture repositories (`shop`, `notes`), indexed once per engine."""
    if not (FIXTURES / "repos").is_dir():
        pytest.skip(f"Zoekt fixtures not found at {FIXTURES} (they live in ../shared)")
    url = ""
    if request.param == "postgresql":
        server: PgServer = request.getfixturevalue("pg_server")
        url = server.fresh_url("zoekt")
    builder = IndexBuilder(tmp_path_factory.mktemp("zoekt-fixtures"), url)
    for name in ("notes", "shop"):
        builder.index_dir(FIXTURES / "repos" / name)
    yield builder.store
    builder.close()
