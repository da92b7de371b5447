"""Hybrid search through the service: the lexical leg (Zoekt from recorded real responses,
a stalled or dead Zoekt, a live zoekt-webserver when installed), engine names, and what
the answer says while embeddings are incomplete (issue 9 items 8, 17, 28)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ctxd.indexer import coverage_claim
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search import legs
from ctxd.search.keyword import keyword_search
from ctxd.search.vectors import Int8Matrix
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.search.zoekt.test_zoekt_client import ALIASES, FIXTURES, LiveZoekt
from tests.search.zoekt.test_zoekt_client import live_zoekt as live_zoekt  # the fixture
from tests.search.zoekt.zoekt_fixture_server import (
    FixtureServer,
    StallingServer,
    closed_port,
    load_exchanges,
)

LOCAL = {
    "billing/tax.py": "def compute_vat(amount):\n    \"\"\"Value added tax.\"\"\"\n"
                      "    return amount * 0.2\n",
    "billing/invoice.py": "class Invoice:\n    def render(self):\n        return 'invoice'\n",
}


def local_repo(tmp_path: Path) -> Path:
    b = RepoBuilder(tmp_path / "billing-repo")
    for rel, text in LOCAL.items():
        b.write(rel, text)
    return b.root


def service_for(tmp_path: Path, **search: object) -> Service:
    flags = {"home": str(tmp_path / "home"), **{f"search.{k}": v for k, v in search.items()}}
    return Service(load_settings(flags), embedder=FakeEmbedder())


@pytest.fixture
def recorded_zoekt():
    if not (FIXTURES / "responses").is_dir():
        pytest.skip(f"Zoekt fixtures not found at {FIXTURES}")
    server = FixtureServer(load_exchanges(FIXTURES / "responses"), aliases=ALIASES)
    with server:
        yield server
    assert not server.problems, "requests a real Zoekt would have answered differently"


def test_hybrid_fuses_zoekt_hits_and_shows_zoekt_only_repositories(tmp_path, recorded_zoekt):
    service = service_for(tmp_path, zoekt_url=recorded_zoekt.url)
    try:
        service.index(local_repo(tmp_path))
        page = service.search("calculate_tax", mode="hybrid", limit=20)
    finally:
        service.close()
    zoekt_hits = [h for h in page.results if "zoekt" in h.sources]
    # The recording answers from the `shop` repository, which only Zoekt indexes.
    assert zoekt_hits, [(h.repository, h.path, h.sources) for h in page.results]
    shop = zoekt_hits[0]
    assert shop.repository == "shop" and shop.path.endswith(".py") and shop.start_line >= 1
    on_disk = (FIXTURES / "repos" / "shop" / shop.path).read_text(encoding="utf-8")
    assert "calculate_tax" in on_disk.split("\n")[shop.start_line - 1]
    assert [s.value for s in shop.sources] == ["zoekt"]
    assert not page.notes
    # The local legs still answer beside it.
    assert {h.repository for h in page.results} >= {"shop", "billing-repo"}


def test_a_stalled_zoekt_costs_its_timeout_and_a_note_never_the_answer(tmp_path):
    stall = StallingServer()
    with stall:
        service = service_for(tmp_path, zoekt_url=stall.url, hybrid_lexical_timeout_ms=300)
        try:
            service.index(local_repo(tmp_path))
            page = service.search("compute_vat", mode="hybrid")
            # Zoekt holds the request until released below (or 30 s): the note that it did
            # not answer within 300 ms says the leg's timeout ended the wait, not Zoekt.
            # With a Zoekt server, questions without identifiers are sent to it too.
            question = service.search("how much tax is added to an amount", mode="hybrid")
        finally:
            stall.release.set()
            service.close()
    assert page.results[0].path == "billing/tax.py"
    assert any("Zoekt did not answer within 300 ms" in n for n in page.notes), page.notes
    assert question.results and any("Zoekt did not answer" in n for n in question.notes)


def test_the_lexical_leg_query_takes_identifiers_or_with_zoekt_content_words():
    from ctxd.search.filters import SearchFilters
    from ctxd.search.legs import hybrid_lexical_query

    none = SearchFilters()
    assert hybrid_lexical_query("does Retry.increment raise MaxRetryError?", none) == (
        "Retry\\.increment or MaxRetryError")
    assert hybrid_lexical_query("how are retries counted", none) is None
    assert hybrid_lexical_query("how are retries counted", none, questions=True) == (
        "retries or counted")
    scoped = hybrid_lexical_query("MAX_RETRIES", SearchFilters(("shop",), None, "python"))
    assert scoped == '( MAX_RETRIES ) repo:"^shop$" lang:"python"'


def test_a_dead_zoekt_is_a_note_in_hybrid_search(tmp_path):
    with closed_port() as port:
        service = service_for(tmp_path, zoekt_url=f"http://127.0.0.1:{port}")
        try:
            service.index(local_repo(tmp_path))
            page = service.search("compute_vat", mode="hybrid")
        finally:
            service.close()
    assert page.results[0].path == "billing/tax.py"
    assert any(n.startswith("Zoekt failed") for n in page.notes), page.notes


def test_engine_names_without_zoekt_are_semantic_keyword_lexical(tmp_path):
    service = service_for(tmp_path)
    try:
        service.index(local_repo(tmp_path))
        hybrid = service.search("compute_vat amount", mode="hybrid")
        keyword = service.search("compute_vat", mode="keyword")
        lexical = service.search("compute_vat", mode="lexical")
    finally:
        service.close()
    top = hybrid.results[0]
    assert top.path == "billing/tax.py"
    assert [s.value for s in top.sources] == ["semantic", "keyword", "lexical"]
    assert {s.value for h in keyword.results for s in h.sources} == {"keyword"}
    assert {s.value for h in lexical.results for s in h.sources} == {"lexical"}


def test_large_indexes_leave_out_the_embedded_lexical_leg(tmp_path, monkeypatch):
    """Above `EMBEDDED_LEXICAL_MAX_CHECKPOINTS` (issue 18) an identifier query's hybrid
    answer comes from the semantic and keyword legs; `--explain` says so."""
    service = service_for(tmp_path)
    try:
        service.index(local_repo(tmp_path))
        small, _ms, _notes = service.hybrid_legs("compute_vat", depth=10)
        assert small["lexical"]
        monkeypatch.setattr(legs, "EMBEDDED_LEXICAL_MAX_CHECKPOINTS", 1)
        large, _ms, notes = service.hybrid_legs("compute_vat", depth=10)
        explained = service.explain("compute_vat", "hybrid")
    finally:
        service.close()
    assert "lexical" not in large and not notes
    assert large["keyword"][0].path == "billing/tax.py"
    assert "leg: left out above" in explained


def test_a_natural_language_question_skips_the_lexical_leg(tmp_path):
    service = service_for(tmp_path)
    try:
        service.index(local_repo(tmp_path))
        legs, _ms, notes = service.hybrid_legs("how much tax is added to an amount", depth=10)
    finally:
        service.close()
    assert "lexical" not in legs and not notes
    assert legs["keyword"] and legs["semantic"]


def test_the_keyword_leg_runs_beside_the_semantic_leg_on_its_own_connection(tmp_path):
    """Issue 18: the keyword leg runs in a worker (with its own connection to the index)
    while the calling thread embeds the query and ranks by vector; its hits are those of
    a keyword search in the calling thread."""
    service = service_for(tmp_path)
    try:
        service.index(local_repo(tmp_path))
        question = "how much tax is added to an amount"
        legs, ms, _notes = service.hybrid_legs(question, depth=10)
        caller = service.store()
        with service.resources._stores_lock:
            workers = [s for s in service.resources._stores if s is not caller]
        direct = keyword_search(caller, question, limit=10, with_matches=False)
    finally:
        service.close()
    assert workers, "the keyword leg opened no connection of its own"
    assert legs["keyword"] == direct and direct
    assert ms["keyword"] > 0


def test_quantized_above_picks_the_daemons_vector_index(tmp_path):
    """`search.quantized_above` (issue 18): the long-lived matrix takes the int8 coarse
    pass above N vectors (200,000 by default); 0 keeps the exact product at any size."""
    home = {"home": str(tmp_path / "home")}
    default = Service(load_settings(home), embedder=FakeEmbedder(), long_lived=True)
    exact = Service(load_settings({**home, "search.quantized_above": 0}),
                    embedder=FakeEmbedder(), long_lived=True)
    try:
        assert isinstance(default.matrix, Int8Matrix)
        assert default.matrix.exact_below == 200_001
        assert isinstance(exact.matrix, Int8Matrix)
        assert exact.matrix.exact_below > 10**12
    finally:
        exact.close()
        default.close()


def partly_embedded(tmp_path: Path, embed_first: bool) -> Service:
    """A repository whose first file is embedded (or not) and whose second file is
    written and searchable by keyword but not embedded yet."""
    service = service_for(tmp_path)
    repo = local_repo(tmp_path)
    store = Store.open(service.settings.db_path)
    try:
        indexer = Indexer(store, service.embedder)
        indexer.index(repo, WalkOptions(), embed=embed_first)
        (repo / "billing" / "refund.py").write_text(
            "def issue_refund(order):\n    return order.total\n", encoding="utf-8")
        indexer.index(repo, WalkOptions(), embed=False)
    finally:
        store.close()
    return service


def test_while_a_repository_embeds_its_keyword_hits_reach_hybrid_and_coverage_is_said(tmp_path):
    service = partly_embedded(tmp_path, embed_first=True)
    try:
        page = service.search("issue_refund order", mode="hybrid")
    finally:
        service.close()
    assert page.results[0].path == "billing/refund.py"
    assert "semantic" not in page.results[0].sources
    (note,) = page.notes
    assert "still embedding" in note and "semantic coverage is partial" in note
    assert "67% (2 of 3 checkpoints)" in note, note


def test_coverage_is_counted_once_for_every_connection_and_again_after_embedding(tmp_path):
    """The per-repository coverage (a count over every checkpoint) is shared by threads,
    connections and request settings while the index is unchanged, and counted again
    once more vectors are in."""
    service = partly_embedded(tmp_path, embed_first=True)
    other = service.view(service.settings)
    counted: list[str] = []

    def count(sql: str) -> None:
        if "FROM repos r LEFT JOIN" in sql:  # the count, in either form
            counted.append(sql)

    def search_in_a_thread() -> None:  # its own connection, through another view
        other.store().db.set_trace_callback(count)
        other.search("issue_refund order", mode="hybrid")

    try:
        service.store().db.set_trace_callback(count)
        first = service.search("issue_refund order", mode="hybrid")
        worker = threading.Thread(target=search_in_a_thread)
        worker.start()
        worker.join()
        assert len(counted) == 1 and "67%" in first.notes[0]
        store = Store.open(service.settings.db_path)
        try:
            Indexer(store, service.embedder).embed_pending()
        finally:
            store.close()
        after = service.search("issue_refund order", mode="hybrid")
        assert len(counted) == 2 and not after.notes
    finally:
        service.close()


def test_warm_caches_counts_the_coverage_before_the_first_query(tmp_path):
    """The daemon's warm-up counts the coverage, so its first hybrid query does not."""
    service = partly_embedded(tmp_path, embed_first=True)
    counted: list[str] = []
    try:
        service.warm_caches(service.store())
        service.store().db.set_trace_callback(
            lambda sql: counted.append(sql) if "FROM repos r LEFT JOIN" in sql
            else None)
        page = service.search("issue_refund order", mode="hybrid")
    finally:
        service.close()
    assert not counted and "67%" in page.notes[0]


def test_a_scope_naming_every_repository_is_counted_as_the_whole_index(tmp_path):
    """The CLI's default scope (the repository you are in) is most often the whole index:
    its coverage is the whole index's anti-join, not a probe per checkpoint, and says the
    same."""
    service = partly_embedded(tmp_path, embed_first=True)
    counted: list[str] = []
    try:
        service.store().db.set_trace_callback(
            lambda sql: counted.append(sql) if "FROM repos r LEFT JOIN" in sql else None)
        scoped = service.search("issue_refund order", mode="hybrid",
                                repositories=["billing-repo"])
    finally:
        service.close()
    (count,) = counted
    assert "coalesce(t.n, 0)" in count and "WHERE r.name IN" not in count
    assert "67% (2 of 3 checkpoints)" in scoped.notes[0]


def test_after_a_full_embedding_searches_do_not_count_the_coverage(tmp_path):
    """The writer records that every checkpoint had a vector at the index's state
    (`indexer.coverage_claim`): a search at that state says nothing and counts nothing; a
    write moves the state, and the count (and its note) come back until the next
    embedding records again."""
    service = partly_embedded(tmp_path, embed_first=True)  # complete, then a file more
    counted: list[str] = []
    try:
        service.store().db.set_trace_callback(
            lambda sql: counted.append(sql) if "FROM repos r LEFT JOIN" in sql else None)
        partial = service.search("issue_refund order", mode="hybrid")
        assert len(counted) == 1 and "67%" in partial.notes[0]
        store = Store.open(service.settings.db_path)
        try:
            Indexer(store, service.embedder).index(tmp_path / "billing-repo", WalkOptions())
            assert store.get_meta(coverage_claim.KEY) == coverage_claim.current(store)
        finally:
            store.close()
        complete = service.search("issue_refund order", mode="hybrid")
        scoped = service.search("issue_refund order", mode="semantic",
                                repositories=["billing-repo"])
    finally:
        service.close()
    assert len(counted) == 1 and not complete.notes and not scoped.notes


def test_a_claim_names_one_state_and_a_vector_deleted_moves_it(tmp_path):
    service = partly_embedded(tmp_path, embed_first=True)
    service.close()
    store = Store.open(service.settings.db_path)
    try:
        assert not coverage_claim.record(store)  # refund.py has no vector
        assert store.get_meta(coverage_claim.KEY) != coverage_claim.current(store)
        Indexer(store, service.embedder).embed_pending()
        assert coverage_claim.record(store)
        claimed = coverage_claim.current(store)
        assert coverage_claim.holds(store, claimed)
        (tmp_path / "billing-repo" / "billing" / "refund.py").unlink()
        Indexer(store, service.embedder).index(tmp_path / "billing-repo", WalkOptions(),
                                               embed=False)
        store.gc_embeddings()  # refund.py's vector goes: the deletion generation moves
        assert not coverage_claim.holds(store, coverage_claim.current(store))
        assert coverage_claim.record(store)  # and it holds again, at the new state
    finally:
        store.close()


def test_semantic_search_on_an_unembedded_index_says_so_and_how_far_along(tmp_path):
    service = partly_embedded(tmp_path, embed_first=False)
    try:
        page = service.search("refund an order", mode="semantic")
        hybrid = service.search("refund an order", mode="hybrid")
    finally:
        service.close()
    assert page.results == []
    assert page.notes[0].startswith("No semantic results: embeddings are not built yet")
    assert "has no embeddings yet" in page.notes[1] and "0% (0 of 3 checkpoints)" in page.notes[1]
    assert hybrid.results and hybrid.results[0].path == "billing/refund.py"
    assert "keyword and lexical matches only" in hybrid.notes[0]


def test_hybrid_against_a_live_zoekt_webserver(tmp_path, live_zoekt: LiveZoekt):
    """Runs only where zoekt-index and zoekt-webserver are installed (the fixture skips)."""
    service = service_for(tmp_path, zoekt_url=live_zoekt.url)
    try:
        service.index(local_repo(tmp_path))
        page = service.search("calculate_tax", mode="hybrid", limit=20)
    finally:
        service.close()
    shop = [h for h in page.results if h.repository == "shop"]
    assert shop and all("zoekt" in [s.value for s in h.sources] for h in shop)
    text = (live_zoekt.repos / "shop" / shop[0].path).read_text(encoding="utf-8")
    assert "calculate_tax" in text.split("\n")[shop[0].start_line - 1]
    assert not page.notes


def test_engine_names_are_the_same_in_mcp_text_json_and_the_cli(indexed, sample_repo,
                                                                 tmp_path):
    """Issue 9 item 17: `keyword` is the BM25 leg, `lexical` the embedded engine."""
    import json

    from click.testing import CliRunner

    from ctxd.server.cli.main import main
    from tests.server.conftest import text

    query = "backoff_delays retry attempts"
    result = indexed.call("semantic_search", {"query": query})
    top = (result.structured_content or {})["results"][0]
    assert top["path"] == "net/retry.py"
    assert top["sources"] == ["semantic", "keyword", "lexical"]
    assert "Found by: semantic, keyword, lexical |" in text(result)

    cli, home = CliRunner(), ["--home", str(tmp_path / "cli-home")]  # the real model
    assert cli.invoke(main, [*home, "index", str(sample_repo.root)]).exit_code == 0
    out = json.loads(cli.invoke(main, [*home, "search", query, "--json"]).output)
    assert out["results"][0]["sources"] == ["semantic", "keyword", "lexical"]
    plain = cli.invoke(main, [*home, "search", query]).output
    assert "semantic+keyword+lexical" not in plain  # people see engines with -v only
    verbose = cli.invoke(main, [*home, "search", query, "-v"]).output
    assert "semantic+keyword+lexical" in verbose


def test_mcp_semantic_search_on_an_unembedded_index_says_so(env, sample_repo):
    """Issue 9 item 28, as an agent reads it."""
    from tests.server.conftest import text

    store = Store.open(env.service.settings.db_path)
    try:
        Indexer(store, env.service.embedder).index(sample_repo.root, WalkOptions(), embed=False)
    finally:
        store.close()
    result = env.call("semantic_search", {"query": "exponential backoff", "mode": "semantic"})
    body = text(result)
    assert not result.is_error
    assert "No results." in body
    assert "> Note: No semantic results: embeddings are not built yet" in body
    assert "semantic coverage 0% (0 of" in body
    notes = (result.structured_content or {})["notes"]
    assert any("has no embeddings yet" in n for n in notes)
