"""The store seam (`indexer.store.protocol.IndexStore`) holds for both engines: the SQLite
file and a PostgreSQL database (the session's real server, a fresh schema per test).

Each test runs once per engine (the `engine` fixture) and writes and reads only through
the protocol: repositories, a file's rows written and removed together, transactions that
roll back whole, ids never reused, the text generation, pending work and coverage, BM25
keyword scores and postings, nearest vectors, the dialect's predicates in the search layer's
own SQL, read snapshots, removing a repository, and the search layer's lookups (symbols by
line, file and name; repository and language lists)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.sqlite.store import FileRecord, Summary, serialize_vector
from ctxd.indexer.store.text_formula import AllOf, AnyOf, Lit

NOW = "2026-11-26T00:00:00Z"


@pytest.fixture
def store(tmp_path: Path, store_url: str) -> Iterator[IndexStore]:
    with open_store(tmp_path / "index.db", StoreOptions(url=store_url)) as st:
        yield st


def write(store: IndexStore, repo_id: int, path: str, chunks: list[tuple[str, str, str | None]],
          symbols: tuple[Symbol, ...] = (), summary: Summary | None = None) -> int:
    """Write a file whose checkpoints are (text, hash, symbol), one line each."""
    text = "\n".join(t for t, _h, _s in chunks) + "\n"
    record = FileRecord(path, len(text), 1, f"h-{path}-{len(text)}", "python", len(chunks))
    rows = [(Chunk(n, n, t, symbol=s, symbol_kind="function" if s else None), h)
            for n, (t, h, s) in enumerate(chunks, start=1)]
    return store.replace_file(repo_id, record, text, rows, symbols, NOW,
                              summary or Summary("", ""))


def test_repositories_are_named_after_their_folder_and_found_by_root_and_name(store):
    a = store.upsert_repo("/src/app", {"x": 1}, NOW)
    b = store.upsert_repo("/other/app", {}, NOW)
    assert (a.name, b.name) == ("app", "app-2")
    assert store.upsert_repo("/src/app", {"x": 2}, NOW).id == a.id
    assert store.repo_by_root("/src/app").options == {"x": 2}
    assert store.repo_by_name("app-2").root == "/other/app"
    store.mark_indexed(a.id, NOW)
    done = store.repo_by_name("app")
    assert done.indexed_at == NOW and done.index_started_at is None
    assert [r.name for r in store.repos()] == ["app", "app-2"]


def test_a_file_is_written_and_removed_whole_and_the_text_generation_moves(store):
    repo = store.upsert_repo("/src/app", {}, NOW)
    before = store.text_generation()
    fid = write(store, repo.id, "a.py", [("def alpha(): pass", "h1", "alpha")],
                (Symbol("alpha", "function", 1, 1),))
    assert store.text_generation() > before
    assert store.file_texts([fid]) == {fid: "def alpha(): pass\n"}
    assert set(store.stored_files(repo.id)) == {"a.py"}
    assert store.stored_paths(repo.id, ["a.py", "missing.py"]) == {"a.py"}
    assert store.stored_paths(repo.id, [f"f{i}.py" for i in range(40_000)]) == set()
    assert store.repo_counts(repo.id)["symbols"] == 1
    moved = store.text_generation()
    assert store.delete_files(repo.id, ["a.py", "missing.py"]) == 1
    assert store.text_generation() > moved
    assert store.stored_files(repo.id) == {}
    assert store.file_texts([fid]) == {}
    assert store.query("SELECT count(*) FROM checkpoints")[0][0] == 0
    assert store.query("SELECT count(*) FROM symbols")[0][0] == 0


def test_a_failed_transaction_leaves_nothing_behind(store):
    repo = store.upsert_repo("/src/app", {}, NOW)
    with pytest.raises(RuntimeError), store.transaction():
        write(store, repo.id, "a.py", [("one", "h1", None)])
        write(store, repo.id, "b.py", [("two", "h2", None)])
        raise RuntimeError("crash mid-batch")
    assert store.stored_files(repo.id) == {}
    with store.transaction():  # a nested failure undoes only its own file
        write(store, repo.id, "a.py", [("one", "h1", None)])
        with pytest.raises(RuntimeError), store.transaction():
            write(store, repo.id, "b.py", [("two", "h2", None)])
            raise RuntimeError("one bad file")
    assert set(store.stored_files(repo.id)) == {"a.py"}


def test_a_batch_without_savepoints_is_dropped_whole_and_nests_again_afterwards(store):
    """`transaction(savepoints=False)`: the transactions nested in it join it (phase 1's
    batches), so one failed file drops the batch; the next transaction nests as before."""
    repo = store.upsert_repo("/src/app", {}, NOW)
    with pytest.raises(RuntimeError), store.transaction(savepoints=False):
        write(store, repo.id, "a.py", [("one", "h1", None)])
        with store.transaction():
            write(store, repo.id, "b.py", [("two", "h2", None)])
            raise RuntimeError("one bad file")
    assert store.stored_files(repo.id) == {}
    with store.transaction(savepoints=False):
        write(store, repo.id, "a.py", [("one", "h1", None)])
        write(store, repo.id, "b.py", [("two", "h2", None)])
    assert set(store.stored_files(repo.id)) == {"a.py", "b.py"}
    with store.transaction():  # savepoints again
        write(store, repo.id, "c.py", [("three", "h3", None)])
        with pytest.raises(RuntimeError), store.transaction():
            write(store, repo.id, "d.py", [("four", "h4", None)])
            raise RuntimeError("one bad file")
    assert set(store.stored_files(repo.id)) == {"a.py", "b.py", "c.py"}


def test_checkpoint_ids_are_never_reused(store):
    repo = store.upsert_repo("/src/app", {}, NOW)
    write(store, repo.id, "a.py", [("one", "h1", None), ("two", "h2", None)])
    first = {int(r[0]) for r in store.query("SELECT id FROM checkpoints")}
    write(store, repo.id, "a.py", [("one again", "h3", None)])
    second = {int(r[0]) for r in store.query("SELECT id FROM checkpoints")}
    assert min(second) > max(first)


def test_pending_work_embeddings_and_coverage(store):
    repo = store.upsert_repo("/src/app", {}, NOW)
    write(store, repo.id, "a.py", [("one", "h1", None), ("same", "h2", None)],
          summary=Summary("a.py: one", "s1"))
    write(store, repo.id, "b.py", [("same", "h2", None)])
    assert sorted(p.hash for p in store.pending_chunks(repo.id)) == ["h1", "h2"]
    assert store.pending_summaries() == [("s1", "a.py: one")]
    assert store.count_pending(repo.id) == 3
    store.ensure_model("m", 3)
    store.add_embeddings([("h1", serialize_vector([1.0, 0.0, 0.0]))],
                         [("s1", serialize_vector([0.0, 1.0, 0.0]))])
    assert [p.hash for p in store.pending_chunks()] == ["h2"]
    assert store.count_pending() == 1
    assert store.embedding_coverage() == [("app", 3, 1)]
    assert not store.every_checkpoint_embedded()
    # every repository (totals less the checkpoints without a vector) and a few (probed
    # one by one) agree: a shared text embedded once, a repository with no checkpoint
    lib = store.upsert_repo("/src/lib", {}, NOW)
    store.upsert_repo("/src/empty", {}, NOW)
    write(store, lib.id, "c.py", [("one", "h1", None)])
    assert store.embedding_coverage() == [("app", 3, 1), ("empty", 0, 0), ("lib", 1, 1)]
    assert store.embedding_coverage(("lib", "app", "empty")) == store.embedding_coverage()
    assert store.embedding_coverage(("lib",)) == [("lib", 1, 1)]
    assert store.unembedded_spans(["a.py", "b.py"]) == {("app", "a.py", 2, 2),
                                                       ("app", "b.py", 1, 1)}
    assert store.repo_counts(repo.id) == {"files": 2, "checkpoints": 3, "symbols": 0,
                                          "embedded": 1, "bytes": 14}
    store.add_embeddings([("h2", serialize_vector([0.0, 0.0, 1.0]))])
    assert store.every_checkpoint_embedded()
    assert store.embedding_coverage() == [("app", 3, 3), ("empty", 0, 0), ("lib", 1, 1)]


def test_keyword_scores_rank_by_bm25_with_path_and_symbol_above_body(store):
    repo = store.upsert_repo("/src/app", {}, NOW)
    write(store, repo.id, "net/retry.py", [("def backoff(): wait between attempts", "h1",
                                             "backoff")])
    write(store, repo.id, "docs/notes.md", [("the retry loop retries", "h2", None)])
    write(store, repo.id, "misc/other.py", [("nothing relevant here", "h3", None)])
    scores = store.keyword_scores(["retry"])
    ids = {int(i): str(p) for i, p in store.query("SELECT id, path FROM checkpoints")}
    assert [ids[i] for i, _s in scores] == ["net/retry.py", "docs/notes.md"]
    assert scores[0][1] > scores[1][1] > 0
    assert store.keyword_count("retry") == 2 and store.keyword_count("absent") == 0
    # an identifier splits into words (a phrase), camelCase humps too
    assert [ids[i] for i, _ in store.keyword_scores(["wait_between"])] == ["net/retry.py"]
    only_docs = store.keyword_scores(["retry"], where="AND c.path LIKE ?", params=["docs/%"])
    assert [ids[i] for i, _ in only_docs] == ["docs/notes.md"]
    assert len(store.keyword_scores(["retry"], limit=1)) == 1
    top = max(ids)
    assert store.keyword_scores(["retry"], above=top) == []
    assert "retr" in store.explain_keywords(["retry"])


def test_index_terms_and_the_common_terms_postings(store):
    """A word's index terms are the engine's stems; the postings count each common
    term's checkpoints as `keyword_count` does."""
    repo = store.upsert_repo("/src/app", {}, NOW)
    write(store, repo.id, "a.py", [("the retry loop retries", "h1", None)])
    write(store, repo.id, "b.py", [("retry once", "h2", None)])
    write(store, repo.id, "c.py", [("nothing here", "h3", None)])
    assert store.index_terms("retries") == ("retri",)
    assert store.index_terms("is_exhausted")[1:] == ("exhaust",)  # a phrase of two
    found = store.keyword_postings(2)
    assert found is not None and found.generation == store.text_generation()
    assert found.rows == 3
    assert set(found.postings) == {"py", "retri"}  # the terms of at least 2 checkpoints
    docs, freq = found.postings["retri"]
    assert len(docs) == store.keyword_count("retry") == 2
    assert sorted(freq.tolist()) == [1, 2]


def test_nearest_vectors_and_the_filtered_scan(store):
    repo = store.upsert_repo("/src/app", {}, NOW)
    vectors = {f"h{i}": np.eye(8, dtype=np.float32)[i] for i in range(8)}
    write(store, repo.id, "a.py", [(f"text {i}", f"h{i}", None) for i in range(4)])
    write(store, repo.id, "b.md", [(f"text {i}", f"h{i}", None) for i in range(4, 8)])
    store.ensure_model("m", 8)
    store.add_embeddings([(h, serialize_vector(v.tolist())) for h, v in vectors.items()])
    query = (np.eye(8, dtype=np.float32)[2] * 0.9 + np.eye(8, dtype=np.float32)[5] * 0.1)
    ids, rows = store.nearest(query.tolist(), 3)
    assert len(ids) == 3 and rows.shape == (3, 8) and rows.dtype == np.float32
    by_hash = {int(i): str(h) for i, h in store.query("SELECT id, hash FROM embeddings")}
    found = {by_hash[int(i)] for i in ids}
    assert {"h2", "h5"} <= found
    assert np.allclose(rows[list(ids).index(next(i for i in ids if by_hash[int(i)] == "h2"))],
                       vectors["h2"])
    scan = store.scan_nearest(query.tolist(), "AND c.path = ?", ["b.md"])
    assert by_hash[scan[0][0]] == "h5" and len(scan) == 4
    assert scan == sorted(scan, key=lambda x: (x[1], x[0]))
    assert store.explain_nearest()


def test_the_dialect_predicates_read_the_same_rows_in_portable_sql(store):
    repo = store.upsert_repo("/src/app", {}, NOW)
    write(store, repo.id, "src/Parser.py", [("def parse_header(raw): return raw", "h1",
                                              "parse_header")],
          (Symbol("parse_header", "function", 1, 1), Symbol("Parser", "class", 1, 1)))
    write(store, repo.id, "docs/guide.md", [("How to parse a header line", "h2", None)])
    d = store.dialect

    def paths(cond: tuple[str, list[object]]) -> list[str]:
        sql, params = cond
        return [str(r[0]) for r in store.query(
            f"SELECT f.path FROM files f WHERE {sql} ORDER BY f.path", params)]

    assert paths(d.contains("f.path", "Parser", fold=False)) == ["src/Parser.py"]
    assert paths(d.contains("f.path", "parser", fold=True)) == ["src/Parser.py"]
    assert paths(d.contains("f.path", "parser", fold=False)) == []
    assert paths(d.in_values("f.path", ["docs/guide.md", "nope"])) == ["docs/guide.md"]
    assert paths(d.like_nocase("f.path", "SRC/%")) == ["src/Parser.py"]
    assert paths(d.text_match(Lit("parse"), "f.id")) == ["docs/guide.md", "src/Parser.py"]
    assert paths(d.text_match(AllOf((Lit("header"), Lit("raw"))), "f.id")) == ["src/Parser.py"]
    assert paths(d.text_match(AllOf((Lit("header"), Lit("guide"))), "f.id")) == []
    assert paths(d.text_match(AnyOf((Lit("how to"), Lit("return raw"))), "f.id")) == [
        "docs/guide.md", "src/Parser.py"]
    sql, params = d.in_nocase("s.name", ["PARSER", "Parse_Header"])
    names = sorted(str(r[0]) for r in store.query(f"SELECT s.name FROM symbols s WHERE {sql}",
                                                  params))
    assert names == ["Parser", "parse_header"]
    assert d.describe_text_match(Lit("parse"))


def test_read_snapshot_sees_one_state(store):
    repo = store.upsert_repo("/src/app", {}, NOW)
    write(store, repo.id, "a.py", [("one", "h1", None)])
    other = store.reopen()
    try:
        with store.read_snapshot():
            first = store.query("SELECT count(*) FROM files")[0][0]
            write(other, repo.id, "b.py", [("two", "h2", None)])
            assert store.query("SELECT count(*) FROM files")[0][0] == first
        assert store.query("SELECT count(*) FROM files")[0][0] == first + 1
    finally:
        other.close()


def test_a_new_store_counts_text_generations_from_a_random_start(tmp_path, store_url):
    """What a process keeps from the text is keyed by (location, text generation): a store
    made again at the same location must not count the generations the old one counted."""
    starts = []
    for _ in range(1 if store_url else 2):  # PostgreSQL: one fresh schema per test
        (tmp_path / "index.db").unlink(missing_ok=True)
        with open_store(tmp_path / "index.db", StoreOptions(url=store_url)) as st:
            starts.append(st.text_generation())
            repo = st.upsert_repo("/src/app", {}, NOW)
            write(st, repo.id, "a.py", [("one", "h1", None)])
            assert st.text_generation() > starts[-1]
    assert min(starts) > 0 and len(set(starts)) == len(starts)


def test_a_generation_read_during_a_write_moves_when_the_write_commits(store):
    """A reader that keys what it reads on `generation()` read while another connection's
    write is open (PostgreSQL's sequences move before the commit) sees it move again once
    the write commits: it never keeps the old rows under the new generation."""
    repo = store.upsert_repo("/src/app", {}, NOW)
    write(store, repo.id, "a.py", [("one", "h1", None), ("two", "h2", None)])
    store.ensure_model("m", 2)
    other = store.reopen()
    try:
        with store.transaction():
            store.add_embeddings([("h1", serialize_vector([1.0, 0.0]))])
            during = other.generation()
        assert other.generation() != during
        with store.transaction():
            write(store, repo.id, "b.py", [("three", "h3", None)])
            during = other.generation()
        assert other.generation() != during
    finally:
        other.close()


def test_removing_a_repository_removes_every_row_and_its_orphan_vectors(store):
    keep = store.upsert_repo("/src/keep", {}, NOW)
    gone = store.upsert_repo("/src/gone", {}, NOW)
    write(store, keep.id, "a.py", [("shared", "h1", None)])
    write(store, gone.id, "a.py", [("shared", "h1", None), ("own", "h2", None)],
          (Symbol("own", "function", 2, 2),), Summary("a.py", "s1"))
    store.ensure_model("m", 2)
    store.add_embeddings([("h1", serialize_vector([1.0, 0.0])),
                          ("h2", serialize_vector([0.0, 1.0]))])
    generation = store.text_generation()
    store.remove_repo(gone.id)
    assert [r.name for r in store.repos()] == ["keep"]
    assert store.text_generation() > generation
    for table in ("files", "checkpoints", "symbols", "summaries"):  # the kept file's rows
        assert store.query(f"SELECT count(*) FROM {table}")[0][0] == (
            0 if table == "symbols" else 1), table
    assert sorted(str(r[0]) for r in store.query("SELECT hash FROM embeddings")) == ["h1"]
    assert store.vector_state()[2] == 1


def test_a_files_stored_text_and_the_last_vector_id(store):
    """The two reads the service layer asked in SQL before (issue 28): a file's indexed
    text by repository and path, and the largest vector id (0 without vectors)."""
    repo = store.upsert_repo("/src/app", {}, NOW)
    write(store, repo.id, "a.py", [("one", "h1", None), ("two", "h2", None)])
    assert store.stored_text(repo.id, "a.py") == "one\ntwo\n"
    assert store.stored_text(repo.id, "missing.py") is None
    assert store.stored_text(repo.id + 1, "a.py") is None
    store.ensure_model("m", 3)
    assert store.last_vector_id() == 0
    store.add_embeddings([("h1", serialize_vector([1.0, 0.0, 0.0])),
                          ("h2", serialize_vector([0.0, 1.0, 0.0]))])
    assert store.last_vector_id() == store.vector_state()[1] > 0


def two_repos_with_symbols(store: IndexStore) -> tuple[int, int, int]:
    """Repositories `app` (a.py: class Cart lines 1-4 holding method total 2-3; b.md) and
    `lib` (a.py: function total line 1); returns (app's a.py id, b.md id, lib's a.py id)."""
    app = store.upsert_repo("/src/app", {}, NOW)
    lib = store.upsert_repo("/src/lib", {}, NOW)
    cart = write(store, app.id, "a.py", [("class Cart:", "h1", "Cart"),
                                         ("    def total(self):", "h2", "Cart.total"),
                                         ("        return 1", "h3", None),
                                         ("# end", "h4", None)],
                 (Symbol("Cart", "class", 1, 4), Symbol("total", "method", 2, 3, "Cart")))
    doc = store.replace_file(app.id, FileRecord("b.md", 6, 1, "h-b", "markdown", 1), "# Doc\n",
                             [(Chunk(1, 1, "# Doc"), "h5")], (), NOW, Summary("", ""))
    other = write(store, lib.id, "a.py", [("def total(): pass", "h6", "total")],
                  (Symbol("total", "function", 1, 1),))
    return cart, doc, other


def test_repo_names_and_ids(store):
    assert store.repo_names() == [] and store.repo_ids() == {}
    two_repos_with_symbols(store)
    ids = {r.name: r.id for r in store.repos()}
    assert sorted(store.repo_names()) == ["app", "lib"]
    assert store.repo_ids() == ids


def test_file_languages_are_the_distinct_stored_ones(store):
    assert store.file_languages() == []
    two_repos_with_symbols(store)
    assert sorted(store.file_languages()) == ["markdown", "python"]


def test_file_id_by_repository_name_and_path(store):
    cart, doc, other = two_repos_with_symbols(store)
    assert store.file_id("app", "a.py") == cart
    assert store.file_id("app", "b.md") == doc
    assert store.file_id("lib", "a.py") == other
    assert store.file_id("lib", "b.md") is None
    assert store.file_id("nope", "a.py") is None


def test_enclosing_symbol_is_the_innermost_definition_around_a_line(store):
    two_repos_with_symbols(store)
    assert tuple(store.enclosing_symbol("app", "a.py", 2)) == ("total", "Cart")
    assert tuple(store.enclosing_symbol("app", "a.py", 4)) == ("Cart", None)
    assert tuple(store.enclosing_symbol("lib", "a.py", 1)) == ("total", None)
    assert store.enclosing_symbol("app", "a.py", 5) is None
    assert store.enclosing_symbol("app", "b.md", 1) is None
    assert store.enclosing_symbol("nope", "a.py", 1) is None


def test_enclosing_symbols_of_a_page_equal_one_lookup_per_place(store, monkeypatch):
    """The batched lookup (one statement per page) picks what `enclosing_symbol` picks for
    every place: nested definitions, two definitions over the same lines (the first made),
    lines outside every definition, files and repositories not indexed, a place asked
    twice, and more places than one statement takes."""
    from ctxd.indexer.store import lookups

    two_repos_with_symbols(store)
    app = store.repo_by_name("app").id
    write(store, app, "c.py", [(f"line {n}", f"c{n}", None) for n in range(1, 13)],
          (Symbol("outer", "function", 1, 10), Symbol("inner", "function", 3, 6, "outer"),
           Symbol("twin", "function", 3, 6, "outer"), Symbol("deep", "function", 4, 4, "inner"),
           Symbol("tail", "class", 8, 12)))
    places = [(repo, path, line) for repo in ("app", "lib", "nope")
              for path in ("a.py", "b.md", "c.py", "z.py") for line in range(14)]
    places += places[:5]
    one_by_one = [store.enclosing_symbol(*p) for p in places]
    assert [None if r is None else tuple(r) for r in one_by_one] == store.enclosing_symbols(
        places)
    assert store.enclosing_symbols([("app", "c.py", 5), ("app", "c.py", 4)]) == [
        ("inner", "outer"), ("deep", "inner")]
    assert store.enclosing_symbols([]) == []
    monkeypatch.setattr(lookups, "ENCLOSING_AT_ONCE", 7)
    assert [None if r is None else tuple(r) for r in one_by_one] == store.enclosing_symbols(
        places)


def test_symbol_name_counts(store):
    assert store.symbol_name_counts() == []
    two_repos_with_symbols(store)
    assert sorted(store.symbol_name_counts()) == [("Cart", 1), ("total", 2)]


def test_file_symbols(store):
    cart, doc, _other = two_repos_with_symbols(store)
    assert sorted(store.file_symbols(cart)) == [("Cart", "class", 1), ("total", "method", 2)]
    assert store.file_symbols(doc) == []


def test_symbols_on_lines_reads_only_the_given_lines_of_the_given_files(store):
    cart, doc, other = two_repos_with_symbols(store)
    rows = store.symbols_on_lines({cart: [2, 3], other: [1], doc: [1]})
    assert sorted(tuple(r) for r in rows) == [(cart, "total", "method", 2),
                                             (other, "total", "function", 1)]
    assert sorted(tuple(r) for r in store.symbols_on_lines({cart: [1, 2]})) == [
        (cart, "Cart", "class", 1), (cart, "total", "method", 2)]
    assert store.symbols_on_lines({cart: [4]}) == []


def test_symbols_where_filters_symbols_by_a_portable_condition(store):
    cart, _doc, other = two_repos_with_symbols(store)
    where, params = store.dialect.contains("s.name", "tot", fold=False)
    assert sorted(tuple(r) for r in store.symbols_where(where, params)) == [
        (cart, "total", "method", 2), (other, "total", "function", 1)]
    where, params = store.dialect.in_nocase("s.name", ["cart"])
    assert [tuple(r) for r in store.symbols_where(where, params)] == [(cart, "Cart", "class", 1)]


def test_symbol_kinds_are_distinct_lower_case_and_sorted(store):
    assert store.symbol_kinds() == []
    repo = store.upsert_repo("/src/app", {}, NOW)
    write(store, repo.id, "a.py", [("class A: pass", "h1", "A")],
          (Symbol("A", "Class", 1, 1), Symbol("B", "class", 1, 1), Symbol("f", "function", 1, 1)))
    assert store.symbol_kinds() == ["class", "function"]


def test_symbol_rows_join_the_repository_and_pass_the_condition(store):
    two_repos_with_symbols(store)
    like, params = store.dialect.like_nocase("s.name", "TOT%")
    rows = store.symbol_rows(like + " AND r.name IN (?)", [*params, "app"])
    assert [tuple(r) for r in rows] == [("total", "method", "app", "a.py", 2, "Cart", "python", 3)]
    named, params = store.dialect.in_nocase("s.name", ["cart", "total"])
    assert sorted((str(r[0]), str(r[2])) for r in store.symbol_rows(named, params)) == [
        ("Cart", "app"), ("total", "app"), ("total", "lib")]


def test_max_checkpoint_id_and_checkpoint_rows_by_id(store):
    assert store.max_checkpoint_id() == 0
    assert store.checkpoint_rows([]) == {}
    two_repos_with_symbols(store)
    ids = [int(r[0]) for r in store.query("SELECT id FROM checkpoints ORDER BY id")]
    assert store.max_checkpoint_id() == ids[-1]
    rows = store.checkpoint_rows([ids[1], ids[-1], ids[-1] + 100])
    assert {k: tuple(v) for k, v in rows.items()} == {
        ids[1]: ("app", "a.py", "python", 2, 2, "Cart.total", "    def total(self):", ids[1]),
        ids[-1]: ("lib", "a.py", "python", 1, 1, "total", "def total(): pass", ids[-1]),
    }


def test_vector_checkpoints_are_the_checkpoints_of_vector_ids_in_path_order(store):
    two_repos_with_symbols(store)
    store.ensure_model("m", 2)
    store.add_embeddings([("h2", serialize_vector([1.0, 0.0])),
                          ("h6", serialize_vector([0.0, 1.0]))])
    by_hash = {str(h): int(i) for i, h in store.query("SELECT id, hash FROM embeddings")}
    cids = {str(p) + str(r): int(c) for c, p, r in store.query(
        "SELECT c.id, c.path, r.name FROM checkpoints c JOIN repos r ON r.id = c.repo_id "
        "WHERE c.hash IN ('h2', 'h6')")}
    wanted = [by_hash["h6"], by_hash["h2"]]
    rows = [tuple(r) for r in store.vector_checkpoints(wanted, "", [])]
    assert rows == [
        (by_hash["h2"], "app", "a.py", "python", 2, 2, "Cart.total", "    def total(self):",
         cids["a.pyapp"]),
        (by_hash["h6"], "lib", "a.py", "python", 1, 1, "total", "def total(): pass",
         cids["a.pylib"]),
    ]
    assert [r[1] for r in store.vector_checkpoints(wanted, "AND r.name = ?", ["lib"])] == ["lib"]


def test_summary_vectors_of_embedded_summaries_at_paths(store):
    repo = store.upsert_repo("/src/app", {}, NOW)
    write(store, repo.id, "a.py", [("one", "h1", None)], summary=Summary("about a", "s1"))
    write(store, repo.id, "b.py", [("two", "h2", None)], summary=Summary("about b", "s2"))
    assert store.summary_vectors(["a.py", "b.py"]) == []  # no vector yet
    store.ensure_model("m", 2)
    store.add_embeddings([], summaries=[("s1", serialize_vector([1.0, 0.0]))])
    rows = store.summary_vectors(["a.py", "b.py", "c.py"])
    assert [(str(r[0]), str(r[1]), str(r[2])) for r in rows] == [("app", "a.py", "python")]
    assert bytes(rows[0][3]) == serialize_vector([1.0, 0.0])
    assert store.summary_vectors(["b.py"]) == []


def test_candidate_files_pass_the_condition_in_repository_and_path_order(store):
    cart, doc, other = two_repos_with_symbols(store)
    rows = [tuple(r) for r in store.candidate_files("1 = 1", [])]
    assert [(r[0], r[2], r[3], r[4]) for r in rows] == [
        (cart, "app", "a.py", "python"), (doc, "app", "b.md", "markdown"),
        (other, "lib", "a.py", "python")]
    assert rows[1][5] == 6 and rows[0][1] != rows[2][1]
    where, params = store.dialect.in_values("r.name", ["lib"])
    assert [r[0] for r in store.candidate_files(where, params)] == [other]


def test_scoped_search_reads_repository_ids_counts_vector_ids_and_paths(store):
    """The reads behind a scoped vector search (`search.scoped`): repository ids by name,
    a repository's share of the checkpoints, the vector ids inside a condition, and the
    files a path glob is matched against."""
    assert store.repo_ids_named(["app"]) == [] and store.checkpoints_in_repos(["app"]) == 0
    two_repos_with_symbols(store)
    ids = {r.name: r.id for r in store.repos()}
    assert sorted(store.repo_ids_named(["lib", "app", "nope"])) == sorted(ids.values())
    assert store.checkpoints_in_repos(["app"]) == 5
    assert store.checkpoints_in_repos(["lib"]) == 1
    assert store.checkpoints_in_repos(["app", "lib"]) == 6
    store.ensure_model("m", 2)
    store.add_embeddings([("h2", serialize_vector([1.0, 0.0])),
                          ("h6", serialize_vector([0.0, 1.0]))])
    by_hash = {str(h): int(i) for i, h in store.query("SELECT id, hash FROM embeddings")}
    assert sorted(store.vector_ids_where("", [])) == sorted(by_hash.values())
    assert store.vector_ids_where("AND c.repo_id IN (?)", [ids["lib"]]) == [by_hash["h6"]]
    assert store.vector_ids_where("AND lower(c.language) = lower(?)", ["Markdown"]) == []
    paths = {p: f for f, p in store.file_paths_in(["app"])}
    assert sorted(paths) == ["a.py", "b.md"]
    assert sorted(p for _f, p in store.file_paths_in([])) == ["a.py", "a.py", "b.md"]
    every = sorted(store.file_paths_in([]))  # a page at a time, by id
    assert store.file_paths_in([], limit=2) == every[:2]
    assert store.file_paths_in([], after=every[1][0], limit=2) == every[2:]
    assert store.file_paths_in(["app"], after=every[-1][0], limit=2) == []
    # counted up to a cap (an engine choosing its plan by the count reads no more)
    assert store.checkpoints_where("AND c.repo_id IN (?)", [ids["app"]], 100) == 5
    assert store.checkpoints_where("AND c.repo_id IN (?)", [ids["app"]], 3) == 3
    assert store.checkpoints_where("AND lower(c.language) = lower(?)", ["Python"], 100) == 5
    assert store.checkpoints_where("AND c.repo_id IN (?)", [-1], 100) == 0
    assert store.exact_rows_max() >= 0
