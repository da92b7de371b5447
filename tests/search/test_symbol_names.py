"""Symbol search from the distinct names in memory (`search.symbol_names`) answers exactly
as the SQLite scan does: the same items, in the same order, and the same total."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.indexer.models import Symbol
from ctxd.indexer.store.sqlite.store import Store
from ctxd.search.symbol_names import SymbolIndex, load_symbol_names
from ctxd.search.symbols import find_symbols
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder
from tests.search.conftest import IndexBuilder

PARTS = ["get", "set", "parse", "header", "retry", "Token", "Stream", "http", "URL", "cache",
         "encoding", "from", "Console", "print", "x", "ab"]
ODD = ["xa_b_a",  # holds `ab` in order, which the word-start jump alone would miss
       "Äpfel", "äpfel", "naïve_cache", "RETRY", "Retry", "retry", "get_encoding_from_headers",
       "a%b", "a_b", "tok\\str"]
QUERIES = ["retry", "Retry", "ab", "cch", "tokstr", "get_encoding_from", "parse_header",
           "Console.print", "äpfel", "a%b", "a_b", "tok\\str", "zzz", "x", "URL", "hdr"]


def _symbols(rng: random.Random, n: int) -> list[Symbol]:
    out = []
    for line in range(1, n + 1):
        if rng.random() < 0.15:
            name = rng.choice(ODD)
        else:
            parts = rng.choices(PARTS, k=rng.randint(1, 3))
            name = (rng.choice(["_", ""])).join(parts)
        container = rng.choice([None, "Console", "Session", "HTTPAdapter"])
        out.append(Symbol(name, rng.choice(["function", "method", "class"]), line, line + 2,
                          container))
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    rng = random.Random(3)
    builder = IndexBuilder(tmp_path_factory.mktemp("symnames"))
    for repo in ("shop", "notes"):
        files = {f"src/m{i}.py": "pass\n" * 5 for i in range(25)}
        builder.add_repo(repo, files, symbols={p: _symbols(rng, 12) for p in files})
    yield builder.store
    builder.close()


@pytest.mark.parametrize("limit", [None, 1, 3, 10, 50])
def test_the_names_in_memory_answer_as_the_scan_does(store: Store, limit: int | None) -> None:
    names = load_symbol_names(store)
    assert len(names.names) < store.query("SELECT count(*) FROM symbols")[0][0]
    for query in QUERIES:
        assert find_symbols(store, query, limit=limit, names=names) == \
            find_symbols(store, query, limit=limit), query
    assert find_symbols(store, "retry", limit=3)[1] > 3  # pages are cut, totals are not


@pytest.mark.parametrize("filters", [{"kinds": ["method"]}, {"repositories": ["notes"]},
                                     {"kinds": ["class"], "repositories": ["shop"]}])
def test_filters_answer_as_the_scan_does(store: Store, filters: dict[str, list[str]]) -> None:
    names = load_symbol_names(store)
    for query in QUERIES:
        for limit in (None, 5):
            assert find_symbols(store, query, limit=limit, names=names, **filters) == \
                find_symbols(store, query, limit=limit, **filters), (query, filters)  # type: ignore[arg-type]


def test_odd_names_are_matched_like_sqlite_like(store: Store) -> None:
    names = load_symbol_names(store)
    found = {names.names[i] for i in names.matching("äpfel")}
    assert found == {"äpfel"}  # LIKE folds ASCII letters only
    assert "xa_b_a" in {names.names[i] for i in names.matching("ab")}
    assert "xa_b_a" in {i.name for i in find_symbols(store, "ab", names=names)[0]}


def test_the_service_pages_symbols_the_same_from_memory(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    for i in range(30):
        (root / f"m{i}.py").write_text(
            f"def retry_{i}():\n    pass\n\nclass Retry{i % 4}:\n    def parse_header(self):\n"
            "        pass\n")
    settings = load_settings({"home": str(tmp_path / "home")})
    plain = Service(settings, embedder=FakeEmbedder())
    held = Service(settings, embedder=FakeEmbedder(), long_lived=True)
    held.symbol_index = SymbolIndex(above=0)
    try:
        plain.index(root)
        assert held.symbol_names(held.store()) is None  # built in the background
        held.symbol_index.wait()
        assert held.symbol_names(held.store()) is not None
        for query in ("retry", "Retry", "ph", "Retry1.parse_header"):
            a = plain.symbols(query, max_items=7)
            b = held.symbols(query, max_items=7)
            assert (a.items, a.total, a.has_more) == (b.items, b.total, b.has_more), query
            assert a.total > 0
            if a.pagination_id:
                a2 = plain.symbols(query, pagination_id=a.pagination_id)
                b2 = held.symbols(query, pagination_id=b.pagination_id)
                assert (a2.items, a2.total) == (b2.items, b2.total)
    finally:
        plain.close()
        held.close()


def test_matching_is_the_ascii_folded_subsequence_test_by_either_route():
    """`matching` takes the per-name route when few names hold the query's letters and
    one expression over all names otherwise; both find exactly what LIKE would."""
    import random
    import string

    from ctxd.search.symbol_names import snapshot_of

    rng = random.Random(7)
    names = sorted({"".join(rng.choices(string.ascii_letters + "_9", k=rng.randint(1, 14)))
                    for _ in range(5_000)} | {"Zq_x", "zqX", "a\nb", "Äpfel", "naïve"})
    snap = snapshot_of(1, names, [1] * len(names))

    def holds(name: str, query: str) -> bool:
        pos = 0
        for ch in query.lower():
            pos = name.translate(str.maketrans(string.ascii_uppercase,
                                               string.ascii_lowercase)).find(ch, pos) + 1
            if not pos:
                return False
        return True

    for query in ("a", "ab", "zq", "ZQX", "e_9", "xyzzy", "q", "pfel", "äpfel", "b"):
        got = {snap.names[i] for i in snap.matching(query)}
        assert got == {n for n in names if holds(n.replace("\n", " "), query)}, query
