"""The service with a Zoekt backend configured: symbols through `sym:`, whole-file content
and repository listing through Zoekt, served from the recorded real responses."""

from __future__ import annotations

import pytest

from ctxd.indexer.errors import FileRefused
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder
from tests.search.zoekt.test_zoekt_client import ALIASES, FIXTURES, REPOS
from tests.search.zoekt.zoekt_fixture_server import FixtureServer, load_exchanges


@pytest.fixture
def zoekt_service(tmp_path):
    if not (FIXTURES / "responses").is_dir():
        pytest.skip(f"Zoekt fixtures not found at {FIXTURES}")
    server = FixtureServer(load_exchanges(FIXTURES / "responses"), aliases=ALIASES)
    with server:
        settings = load_settings({"home": str(tmp_path / "home"), "search.zoekt_url": server.url,
                                  "search.context_lines": 0})
        service = Service(settings, embedder=FakeEmbedder())
        yield service
        service.close()
    assert not server.problems, "requests a real Zoekt would have answered differently"


def test_symbols_come_from_zoekt_sym_queries_with_kinds_filtered_here(zoekt_service):
    everything = zoekt_service.symbols("calc")
    kinds = {i.kind for i in everything.items}
    assert everything.items and all("calc" in i.name.lower() for i in everything.items)
    names = [i.name for i in everything.items]
    assert names == sorted(names, key=lambda n: (not n.lower().startswith("calc"), len(n)))
    one_kind = sorted(kinds)[0]
    filtered = zoekt_service.symbols("calc", kinds=[one_kind])
    assert filtered.items and {i.kind for i in filtered.items} == {one_kind}


def test_file_content_of_a_zoekt_repository_uses_the_whole_file_recipe(zoekt_service):
    fc = zoekt_service.file_content("shop", "src/shop/cart.py")
    on_disk = (REPOS / "shop" / "src" / "shop" / "cart.py").read_text(encoding="utf-8")
    assert fc.content == on_disk
    assert fc.language == "python" and fc.total_lines == on_disk.count("\n")


def test_list_repos_merges_zoekt_repositories(zoekt_service):
    listing = zoekt_service.list_repos()
    zoekt = {r["name"] for r in listing["repositories"] if r["source"] == "zoekt"}
    assert {"shop", "notes"} <= zoekt
    assert zoekt_service.list_repos("^sh")["total"] == 1


def test_file_content_of_a_zoekt_repository_refuses_likely_secrets(zoekt_service):
    # (source code named for credentials is served: test_walker/test_secrets cover it)
    for path in (".env", "deploy/.ssh/id_ed25519", "config/credentials.json",
                 "node_modules/pkg/.env"):
        with pytest.raises(FileRefused, match="looks like a secret"):
            zoekt_service.file_content("shop", path)


def test_file_content_of_a_zoekt_repository_ignores_the_local_include_patterns(tmp_path):
    if not (FIXTURES / "responses").is_dir():
        pytest.skip(f"Zoekt fixtures not found at {FIXTURES}")
    server = FixtureServer(load_exchanges(FIXTURES / "responses"), aliases=ALIASES)
    with server:
        settings = load_settings({"home": str(tmp_path / "home"), "search.zoekt_url": server.url,
                                  "walk.include_patterns": ["*.md"]})
        service = Service(settings, embedder=FakeEmbedder())
        try:
            fc = service.file_content("shop", "src/shop/cart.py")
        finally:
            service.close()
    assert fc.content == (REPOS / "shop" / "src" / "shop" / "cart.py").read_text(encoding="utf-8")


def test_lexical_pages_through_every_zoekt_file_with_cursors(zoekt_service):
    # Issue 9, item 3: page 2+ must carry the files after page 1, for the `search` tool
    # (`Service.lexical`) and for `ctxd search --mode lexical` (`Service.search`).
    seen, cursor = [], None
    while True:
        page = zoekt_service.lexical("case:yes Cart", limit=3, context_lines=0, cursor=cursor)
        assert not page.result.partial and page.result.file_count == 8
        seen += [(f.repository, f.path) for f in page.result.files]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 8
    hits, cursor = [], None
    while True:
        sp = zoekt_service.search("case:yes Cart", mode="lexical", limit=3, cursor=cursor)
        hits += [(h.repository, h.path) for h in sp.results]
        cursor = sp.next_cursor
        if cursor is None:
            break
    assert hits == seen
