"""The index pipeline: incremental, idempotent, deduplicated, crash-safe."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from ctxd.indexer.checkpoints import embedding_input
from ctxd.indexer.errors import ModelMismatch, ValidationError
from ctxd.indexer.models import Chunk, Progress
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions
from tests.conftest import FakeEmbedder

ROOT = Path(__file__).resolve().parents[2]

PY_FILE = '''"""Shopping cart."""


class Cart:
    """Holds items."""

    def __init__(self):
        self.items = []

    def add(self, item, qty=1):
        """Add an item."""
        self.items.append((item, qty))

    def total(self, prices):
        return sum(prices[i] * q for i, q in self.items)


def checkout(cart, card):
    """Charge the card for the cart total."""
    return card.charge(cart.total({}))
'''


def counts(store: Store) -> dict[str, int]:
    tables = ["files", "checkpoints", "symbols", "file_text", "embeddings"]
    if store.has_vectors():
        tables.append("vec_embeddings")
    return {t: int(store.query(f"SELECT count(*) FROM {t}")[0][0]) for t in tables}


def distinct_texts(store: Store) -> int:
    """Distinct checkpoint texts: what `embeddings` should hold after gc (file summaries
    keep their vectors in their own rows)."""
    return int(store.query("SELECT count(DISTINCT hash) FROM checkpoints")[0][0])


@pytest.fixture
def store(isolated_env: Path):
    s = Store.open(isolated_env / "index.db")
    yield s
    s.close()


def small_repo(repo):
    repo.write("src/cart.py", PY_FILE)
    repo.write("README.md", "# Shop\n\nA tiny shop.\n\n## Usage\n\nRun the shop.\n")
    repo.write("notes.txt", "remember the milk\n")
    return repo


def test_index_writes_files_checkpoints_symbols_text_and_vectors(repo, store, fake_embedder):
    small_repo(repo)
    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    assert stats.files_indexed == 3
    assert stats.files_updated == 3
    assert stats.files_unchanged == 0
    c = counts(store)
    assert c["files"] == c["file_text"] == 3
    assert c["checkpoints"] == stats.checkpoints > 0
    assert c["embeddings"] == c["vec_embeddings"] > 0
    names = {r[0] for r in store.query("SELECT name FROM symbols")}
    assert {"Cart", "add", "total", "checkout"} <= names
    assert store.repo_counts(1)["embedded"] == c["checkpoints"]
    assert store.model() == ("fake-hash-64", 64)
    assert stats.indexed_at.endswith("Z")


def test_reindex_is_idempotent_and_reads_nothing(repo, store, fake_embedder):
    small_repo(repo)
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    before = counts(store)
    embedded = len(fake_embedder.embedded_texts)
    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    assert stats.files_indexed == 3
    assert stats.files_unchanged == 3
    assert stats.files_updated == 0
    assert stats.chunks_embedded == 0
    assert counts(store) == before
    assert len(fake_embedder.embedded_texts) == embedded


def test_changed_file_replaces_its_checkpoints(repo, store, fake_embedder):
    small_repo(repo)
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    repo.write("notes.txt", "remember the eggs\nand the bread\n")
    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    assert stats.files_updated == 1
    assert stats.files_unchanged == 2
    texts = [r[0] for r in store.query("SELECT text FROM checkpoints WHERE path = 'notes.txt'")]
    assert texts == ["remember the eggs\nand the bread"]
    assert "milk" not in "".join(texts)
    assert fake_embedder.embedded_texts[-1].startswith("notes.txt")
    # the old text's vector is an orphan (invisible to search), collected by gc
    distinct = distinct_texts(store)
    assert counts(store)["embeddings"] == distinct + 1
    assert store.gc_embeddings() == 1
    assert counts(store)["embeddings"] == counts(store)["vec_embeddings"] == distinct


def test_touched_but_identical_file_is_not_rewritten(repo, store, fake_embedder):
    small_repo(repo)
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    p = repo.root / "notes.txt"
    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 10_000_000_000))
    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    assert stats.files_updated == 0 and stats.files_unchanged == 3
    row = store.query("SELECT mtime_ns FROM files WHERE path = 'notes.txt'")[0]
    assert row[0] == p.stat().st_mtime_ns


def test_deleted_and_newly_excluded_files_leave_the_index(repo, store, fake_embedder):
    small_repo(repo)
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    repo.remove("notes.txt")
    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions(exclude_patterns=("*.md",)))
    assert stats.files_removed == 2
    assert [r[0] for r in store.query("SELECT path FROM files")] == ["src/cart.py"]
    assert counts(store)["file_text"] == 1
    assert not store.query("SELECT 1 FROM checkpoints WHERE path != 'src/cart.py'")
    assert not store.query("SELECT 1 FROM symbols WHERE path != 'src/cart.py'")


def test_identical_text_is_embedded_once_across_repositories(tmp_path, store, fake_embedder):
    from tests.conftest import RepoBuilder

    a, b = RepoBuilder(tmp_path / "a" / "app"), RepoBuilder(tmp_path / "b" / "app")
    for r in (a, b):
        r.write("src/cart.py", PY_FILE)
    Indexer(store, fake_embedder).index(a.root, WalkOptions())
    first = len(fake_embedder.embedded_texts)
    stats = Indexer(store, fake_embedder).index(b.root, WalkOptions())
    assert stats.chunks_embedded == 0
    assert len(fake_embedder.embedded_texts) == first
    names = sorted(r.name for r in store.repos())
    assert names == ["app", "app-2"]
    # each repository's checkpoints are searchable through the shared vectors
    assert store.repo_counts(2)["embedded"] == store.repo_counts(2)["checkpoints"]


def test_model_mismatch_is_an_error_with_a_hint(repo, store, fake_embedder):
    small_repo(repo)
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())

    class Other(FakeEmbedder):
        name = "other-model"

    with pytest.raises(ModelMismatch) as e:
        Indexer(store, Other()).index(repo.root, WalkOptions())
    assert "fake-hash-64" in e.value.message and "other-model" in e.value.message
    assert e.value.hint and "re-index" in e.value.hint


def test_dry_run_writes_nothing_and_reports_the_work(repo, store, fake_embedder):
    small_repo(repo)
    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions(), dry_run=True)
    assert stats.dry_run and stats.files_indexed == 3
    assert stats.chunks_to_embed > 0 and stats.tokens_to_embed > 0
    assert counts(store)["files"] == 0
    assert store.repos() == []
    assert fake_embedder.embedded_texts == []


def test_invalid_options_fail_before_any_work(repo, store, fake_embedder):
    small_repo(repo)
    with pytest.raises(ValidationError) as e:
        Indexer(store, fake_embedder).index(repo.root, WalkOptions(include_patterns=("[bad",)))
    assert e.value.details["field"] == "include_patterns"
    with pytest.raises(ValidationError) as e:
        Indexer(store, fake_embedder).index(repo.root, WalkOptions(max_file_size=20 * 2**20))
    assert e.value.details == {"field": "max_file_size", "max_allowed": 10485760,
                               "provided": 20971520}
    with pytest.raises(ValidationError):
        Indexer(store, fake_embedder).index(repo.root / "missing", WalkOptions())
    assert store.repos() == []


def test_bad_files_are_skipped_with_reasons_and_the_run_goes_on(repo, store, fake_embedder):
    small_repo(repo)
    repo.write_bytes("logo.png", b"\x89PNG\x00\x00binary")
    repo.write_size("big.txt", 2000)
    repo.write(".env", "TOKEN=abc\n")
    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions(max_file_size=1000))
    assert stats.files_indexed == 3
    assert stats.files_skipped["binary"] == 1
    assert stats.files_skipped["too_large"] == 1
    assert stats.files_skipped["sensitive"] == 1


def test_thousand_file_repository(repo, store, fake_embedder):
    for i in range(1000):
        repo.write(f"pkg{i % 10}/file{i}.txt", f"content number {i}\n")
    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    assert stats.files_indexed == 1000
    assert counts(store)["files"] == 1000
    assert counts(store)["checkpoints"] == 1000


def test_oversized_embedding_inputs_are_resplit_not_truncated(repo, store):
    class Tiny(FakeEmbedder):
        max_tokens = 40

    emb = Tiny()
    repo.write("long.txt", "\n".join(f"word{i} " * 12 for i in range(30)) + "\n")
    Indexer(store, emb).index(repo.root, WalkOptions())
    assert all(n <= 38 for n in emb.count_tokens(emb.embedded_texts))
    text = "".join(r[0] + "\n" for r in store.query(
        "SELECT text FROM checkpoints ORDER BY start_line"))
    for i in range(30):
        assert f"word{i} " in text


CRASH_SCRIPT = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from tests.conftest import FakeEmbedder
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.store.sqlite.store import Store
    from ctxd.indexer.walk.walker import WalkOptions

    phase = sys.argv[3]

    class Stalling(FakeEmbedder):
        def embed(self, texts):
            out = super().embed(texts)
            if phase == "embed" and len(self.calls) == 2:
                print("STALLED", flush=True)
                threading.Event().wait()
            return out

    done = [0]
    def progress(p):
        if phase in ("walk", "chunk") and p.phase == phase and p.done >= 50:
            print("STALLED", flush=True)
            threading.Event().wait()

    store = Store.open(sys.argv[1])
    Indexer(store, Stalling(), embed_commit_every=8).index(
        Path(sys.argv[2]), WalkOptions(), progress=progress)
    """
)


@pytest.mark.parametrize("phase", ["walk", "chunk", "embed"])
def test_kill_during_indexing_leaves_a_consistent_index_and_the_next_run_completes(
    repo, tmp_path, phase, fake_embedder
):
    for i in range(120):
        repo.write(f"d{i % 7}/f{i}.py", f"def f{i}(x):\n    return x + {i}\n")
    db = tmp_path / "crash.db"
    script = tmp_path / "crash.py"
    script.write_text(CRASH_SCRIPT.format(root=str(ROOT)), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(script), str(db), str(repo.root), phase],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline()  # blocks until the child reaches the stall point
        assert line.strip() == "STALLED", proc.stderr.read()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    with Store.open(db) as store:
        assert store.query("PRAGMA integrity_check")[0][0] == "ok"
        files = int(store.query("SELECT count(*) FROM files")[0][0])
        assert 0 < files <= 120
        assert files == int(store.query("SELECT count(*) FROM file_text")[0][0])
        # every stored file is whole (it has its checkpoints), or its text was written
        # ahead of its checkpoints (text first) and its row says it is unfinished
        unfinished = int(store.query("SELECT count(*) FROM files WHERE hash = ''")[0][0])
        assert not store.query(
            "SELECT f.path FROM files f WHERE f.hash != '' AND NOT EXISTS "
            "(SELECT 1 FROM checkpoints c WHERE c.file_id = f.id)"
        )
        if phase == "chunk":
            assert 0 < unfinished < files  # stopped half-way through chunking
        elif phase == "embed":
            assert unfinished == 0
        stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions())
        assert stats.files_indexed == 120
        assert stats.files_unchanged == files - unfinished
        assert not store.query(
            "SELECT f.path FROM files f WHERE f.hash = '' OR NOT EXISTS "
            "(SELECT 1 FROM checkpoints c WHERE c.file_id = f.id)"
        )
        assert store.count_pending() == 0
        store.gc_embeddings()
        c = counts(store)
        assert c["embeddings"] == distinct_texts(store)


def test_a_file_that_breaks_chunking_is_reported_and_the_run_goes_on(repo, store, caplog):
    class PickyTokenizer(FakeEmbedder):
        """A tokenizer that fails on one file's text (the embedder seam)."""

        def count_tokens(self, texts):
            if any("POISON" in t for t in texts):
                raise UnicodeError("tokenizer cannot handle this text")
            return super().count_tokens(texts)

    small_repo(repo)
    repo.write("bad.txt", "POISON\n")
    stats = Indexer(store, PickyTokenizer()).index(repo.root, WalkOptions())
    assert stats.files_indexed == 3
    assert [(f.file, f.error) for f in stats.files_failed] == [
        ("bad.txt", "could not be chunked: UnicodeError: tokenizer cannot handle this text")]
    assert "chunking bad.txt failed" in caplog.text


def test_should_stop_ends_the_run_consistently_and_the_next_run_completes(repo, store):
    for i in range(60):
        repo.write(f"f{i:02d}.txt", f"file number {i}\n")
    emb = FakeEmbedder()
    polls = iter(range(100))  # polled before each file: stop before the 21st
    stats = Indexer(store, emb).index(
        repo.root, WalkOptions(), should_stop=lambda: next(polls) >= 20)
    assert stats.stopped
    assert counts(store)["files"] == 20 and emb.embedded_texts == []
    assert store.repos()[0].indexed_at is None  # not marked as a complete index
    stats = Indexer(store, emb).index(repo.root, WalkOptions())
    # text first: the 20 files the walk wrote before the stop were unfinished (text only),
    # so the next run rewrites them
    assert not stats.stopped and stats.files_indexed == 60 and stats.files_unchanged == 0
    assert store.count_pending() == 0
    assert not store.query("SELECT path FROM files WHERE hash = ''")


def test_only_paths_touches_just_those_paths_with_the_walk_policy(repo, store, fake_embedder):
    small_repo(repo)
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    repo.write("notes.txt", "changed\n")
    repo.write("new.txt", "not in the batch\n")
    repo.write(".env", "SECRET=1\n")
    repo.remove("README.md")
    stats = Indexer(store, fake_embedder).index(
        repo.root, WalkOptions(), only_paths=["notes.txt", "README.md", ".env"])
    assert (stats.files_updated, stats.files_removed) == (1, 1)
    assert stats.files_skipped == {"sensitive": 1} and stats.files_failed == []
    assert sorted(r[0] for r in store.query("SELECT path FROM files")) == [
        "notes.txt", "src/cart.py"]


def test_files_commit_in_batches_that_other_connections_see_whole(
    repo, store, isolated_env, fake_embedder, monkeypatch
):
    """Phase 1 commits batches of 1, 2, 4, then `files_per_commit` files: a second
    connection, polled before each file, sees the committed count step by whole batches,
    first of texts (the walk, whose batches commit on their own thread: a probe sees the
    batches committed by then, never part of one, never one not yet handed over), then of
    finished files (chunking)."""
    monkeypatch.setattr("ctxd.indexer.pipeline.COMMIT_EVERY_S", 3600.0)
    for i in range(10):
        repo.write(f"f{i}.py", f"def f{i}(x):\n    return x + {i}\n")
    seen: list[int] = []
    with Store.open(isolated_env / "index.db", readonly=True) as reader:

        def probe() -> bool:
            seen.append(int(reader.query("SELECT count(*) FROM files")[0][0]))
            finished.append(int(reader.query(
                "SELECT count(*) FROM files WHERE hash != ''")[0][0]))
            return False

        finished: list[int] = []
        stats = Indexer(store, fake_embedder, files_per_commit=4).index(
            repo.root, WalkOptions(), embed=False, should_stop=probe)
        handed_over = [0, 1, 1, 3, 3, 3, 3, 7, 7, 7]
        assert seen[10:] == [10] * 10  # the walk's thread is done before chunking
        assert seen[:10] == sorted(seen[:10])
        assert all(n in (0, 1, 3, 7) and n <= m for n, m in zip(seen, handed_over,
                                                                 strict=False))
        assert finished == [0] * 10 + [0, 1, 1, 3, 3, 3, 3, 7, 7, 7]
        assert stats.files_indexed == 10
        assert int(reader.query("SELECT count(*) FROM files")[0][0]) == 10


def test_a_failed_file_write_inside_a_batch_undoes_only_that_file(store):
    """`Store.transaction` nests as a savepoint: the outer batch keeps its other files."""
    with store.transaction():
        store.set_meta("kept", "1")
        with pytest.raises(RuntimeError), store.transaction():
            store.set_meta("undone", "1")
            raise RuntimeError("one file failed")
        store.set_meta("after", "1")
    assert (store.get_meta("kept"), store.get_meta("undone"), store.get_meta("after")) == (
        "1", None, "1")


def test_batched_commits_store_the_same_rows_as_one_file_per_commit(
    repo, tmp_path, fake_embedder
):
    small_repo(repo)
    for i in range(12):
        repo.write(f"pkg/m{i}.py", PY_FILE.replace("Cart", f"Cart{i}"))

    def rows(files_per_commit: int, text_first: bool = True
             ) -> dict[str, list[tuple[object, ...]]]:
        with Store.open(tmp_path / f"fpc{files_per_commit}{text_first}.db") as s:
            Indexer(s, fake_embedder, files_per_commit=files_per_commit,
                    text_first=text_first).index(repo.root, WalkOptions(), embed=False)
            return {name: [tuple(r) for r in s.query(sql)] for name, sql in {
                "files": "SELECT path, size, hash, language, lines, role FROM files",
                "text": "SELECT f.path, t.content FROM files f JOIN file_text t "
                        "ON t.rowid = f.id ORDER BY f.path",
                "checkpoints": "SELECT path, start_line, end_line, symbol, symbol_kind, "
                               "container, text, hash FROM checkpoints ORDER BY id",
                "symbols": "SELECT path, name, kind, container, line, end_line FROM symbols "
                           "ORDER BY path, line, name",
                "words": "SELECT c.path, c.start_line FROM chunk_fts JOIN checkpoints c "
                         "ON c.id = chunk_fts.rowid WHERE chunk_fts MATCH 'cart3 OR total' "
                         "ORDER BY rank, c.id",
                "summaries": "SELECT path, text, hash FROM summaries ORDER BY path",
            }.items()}

    one, batched = rows(1), rows(64)
    assert one["checkpoints"] and one["words"] and one["symbols"]
    assert batched == one
    assert rows(64, text_first=False) == one  # chunking each file as it is read


def test_the_whole_tree_is_greppable_before_any_file_is_chunked(repo, store, fake_embedder):
    """Text first: when chunking starts, every file's text is committed and searchable
    (the trigram table), none has checkpoints yet; a file changed since keeps its id,
    text and checkpoints until its turn, and its summary's vector when that is unchanged."""
    for i in range(30):
        repo.write(f"pkg/m{i}.py", PY_FILE.replace("Cart", f"Cart{i}"))
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    ids = dict(store.query("SELECT path, id FROM files"))
    vectors = dict(store.query("SELECT path, vector FROM summaries"))
    repo.write("pkg/m3.py", PY_FILE.replace("Cart", "Cart3") + "\n# a comment at the end\n")
    for i in range(30, 40):
        repo.write(f"pkg/m{i}.py", PY_FILE.replace("Cart", f"Cart{i}"))
    at_chunking: list[tuple[object, ...]] = []

    def progress(p: Progress) -> None:
        if p.phase == "chunk" and not at_chunking:
            at_chunking.extend([
                store.query("SELECT count(*) FROM file_text WHERE file_text MATCH "
                            "'\"class cart3\"'")[0][0],
                store.query("SELECT count(*) FROM file_text WHERE file_text MATCH "
                            "'\"a comment at the end\"'")[0][0],
                store.query("SELECT count(*) FROM files f WHERE path GLOB 'pkg/m3?.py' AND "
                            "EXISTS (SELECT 1 FROM checkpoints c WHERE c.file_id = f.id)")[0][0],
                store.query("SELECT count(*) FROM checkpoints WHERE path = 'pkg/m3.py'")[0][0],
                p.total,
            ])

    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions(), progress=progress)
    # m3.py, m30.py .. m39.py; m3's new text is greppable, its old checkpoints still there
    assert at_chunking[:2] == [11, 1] and at_chunking[2] == 0 and at_chunking[3] > 0
    assert at_chunking[4] == 11 and stats.files_updated == 11
    assert dict(store.query("SELECT path, id FROM files"))["pkg/m3.py"] == ids["pkg/m3.py"]
    assert not store.query("SELECT path FROM files WHERE hash = '' OR mtime_ns = -1")
    summaries = dict(store.query("SELECT path, vector FROM summaries"))
    assert summaries["pkg/m3.py"] == vectors["pkg/m3.py"] is not None  # same summary


def test_dry_run_token_plan_equals_counting_what_a_run_would_embed(
    repo, tmp_path, real_embedder
):
    """The dry run sums the chunker's counts (header + lines) instead of counting every
    embedding input again; the total must equal counting those inputs."""
    stdlib = Path(textwrap.__file__).parent
    for name in ["argparse.py", "textwrap.py", "json/decoder.py"]:
        repo.write(f"lib/{name}", (stdlib / name).read_text(encoding="utf-8"))
    repo.write("docs/guide.md", "# Caf\u00e9\n\nna\u00efve \u4e2d\u6587 text\n\n## Use\n\nrun it\n")
    repo.write("data/one_line.txt", " ".join(f"token{i}" for i in range(2000)) + "\n")
    with Store.open(tmp_path / "dry.db") as s:
        dry = Indexer(s, real_embedder).index(repo.root, WalkOptions(), dry_run=True)
    with Store.open(tmp_path / "run.db") as s:
        Indexer(s, real_embedder).index(repo.root, WalkOptions(), embed=False)
        inputs = [embedding_input(p.path, Chunk(0, 0, p.text, symbol=p.symbol))
                  for p in s.pending_chunks()]
        inputs += [text for _h, text in s.pending_summaries()]
    assert real_embedder.tokens_add_up
    assert dry.chunks_to_embed == len(inputs) > 50
    assert dry.tokens_to_embed == sum(real_embedder.count_tokens(inputs))


def test_text_written_first_then_the_rest_of_the_file_keeps_one_id(store):
    """`put_file_text` then `replace_file(content=None)`: one file id, its text written
    once, the row unfinished in between; without a row there is no text to keep."""
    from ctxd.indexer.store.records import FileRecord

    repo_id = store.upsert_repo("/r", {}, "2026-11-27T00:00:00Z").id
    record = FileRecord("a.py", 10, 123, "h1", "python", 2)
    file_id = store.put_file_text(repo_id, record, "def alpha():\n    pass\n", "t")
    assert store.query("SELECT hash, mtime_ns FROM files")[0] == ("", -1)
    assert store.query("SELECT count(*) FROM checkpoints")[0][0] == 0
    chunk = Chunk(1, 2, "def alpha():\n    pass\n", symbol="alpha", symbol_kind="function")
    assert store.replace_file(repo_id, record, None, [(chunk, "ch1")], [], "t") == file_id
    assert store.query("SELECT id, hash, mtime_ns FROM files")[0] == (file_id, "h1", 123)
    assert store.file_texts([file_id]) == {file_id: "def alpha():\n    pass\n"}
    assert store.query("SELECT file_id, symbol FROM checkpoints") == [(file_id, "alpha")]
    with pytest.raises(ValueError, match=r"b\.py"):
        store.replace_file(repo_id, FileRecord("b.py", 1, 1, "h", "python", 1), None, [], [],
                           "t")


def test_the_write_thread_commits_batches_in_order_and_raises_a_failed_write_in_the_caller(
    store,
):
    """`WriteThread`: each batch one transaction, in the order given; a write that fails
    undoes its own batch, stops the writes after it and is raised in the caller's thread
    (here by `close`, or by the next `submit` once the thread got to it)."""
    from ctxd.indexer.store.records import FileRecord
    from ctxd.indexer.write_thread import WriteThread

    repo_id = store.upsert_repo("/r", {}, "2026-11-27T00:00:00Z").id

    def put(name: str) -> Callable[[], object]:
        record = FileRecord(name, 1, 1, "h", "python", 1)
        return lambda: store.put_file_text(repo_id, record, f"text of {name}\n", "t")

    def fail() -> None:
        raise OSError(28, "No space left on device")

    interval = sys.getswitchinterval()
    writer = WriteThread(store)
    assert sys.getswitchinterval() == min(interval, 0.0005)  # the GIL handed over sooner
    writer.submit([put("a.py"), put("b.py")])
    writer.submit([put("c.py"), fail, put("d.py")])
    with pytest.raises(OSError, match="No space left"):
        try:
            writer.submit([put("e.py")])  # never written, whether it raises or not
        finally:
            writer.close()
    assert [r[0] for r in store.query("SELECT path FROM files ORDER BY id")] == ["a.py", "b.py"]
    assert store.query("SELECT count(*) FROM file_text WHERE file_text MATCH 'text of'")[0][0] == 2
    assert sys.getswitchinterval() == interval
    writer = WriteThread(store)  # the caller's own error: what was not started is dropped
    writer.close(drop=True)
    assert not store.db.in_transaction and sys.getswitchinterval() == interval


def test_a_batch_of_texts_is_written_as_one_trigram_segment(store):
    """Phase 1's batch joins one transaction without a savepoint per file: FTS5 writes a
    segment at every savepoint (one per file: ~30% more trigram-insert CPU), and once per
    batch without."""
    from ctxd.indexer.store.records import FileRecord
    from ctxd.indexer.write_thread import WriteThread

    repo_id = store.upsert_repo("/r", {}, "2026-11-27T00:00:00Z").id
    writes = [partial(store.put_file_text, repo_id, FileRecord(f"m{i}.py", 1, 1, "h", "python",
                                                               1), f"def f{i}(): pass\n", "t")
              for i in range(10)]
    with store.bulk_text():
        writer = WriteThread(store)
        writer.submit(writes)
        writer.close()
    assert store.query("SELECT count(DISTINCT segid) FROM file_text_idx")[0][0] == 1
    assert store.query("SELECT count(*) FROM file_text WHERE file_text MATCH "
                       "'\"def f7\"'")[0][0] == 1


def test_a_full_run_leaves_the_trigram_index_merged_and_its_settings_as_before(
    repo, store, fake_embedder, monkeypatch
):
    """The walk writes texts with FTS5's automerge off (`bulk_text`) and a run that wrote
    most of the index merges it into one segment after phase 1 (`compact_text`); a later
    run that changes a few files does not, and both leave automerge at its default."""
    import ctxd.indexer.pipeline as pipeline

    monkeypatch.setattr(pipeline, "COMPACT_AFTER_TEXTS", 20)
    for i in range(40):
        repo.write(f"pkg/m{i}.py", PY_FILE.replace("Cart", f"Cart{i}"))

    def state() -> tuple[int, object]:
        return (store.query("SELECT count(DISTINCT segid) FROM file_text_idx")[0][0],
                store.query("SELECT v FROM file_text_config WHERE k = 'automerge'")[0][0])

    Indexer(store, fake_embedder).index(repo.root, WalkOptions(), embed=False)
    assert state() == (1, 4)
    assert store.query("SELECT count(*) FROM file_text WHERE file_text MATCH "
                       "'\"class cart17:\"'")[0][0] == 1
    for i in range(3):
        repo.write(f"pkg/m{i}.py", PY_FILE.replace("Cart", f"Basket{i}"))
    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions(), embed=False)
    assert stats.files_updated == 3
    assert state()[0] > 1 and state()[1] == 4  # not merged again for 3 files
    assert store.query("SELECT count(*) FROM file_text WHERE file_text MATCH "
                       "'\"class basket1:\"' OR file_text MATCH '\"class cart1:\"'"
                       )[0][0] == 1


def _segments(store: Store) -> int:
    return int(store.query("SELECT count(DISTINCT segid) FROM file_text_idx")[0][0])


def _text_intact(store: Store) -> None:
    store.db.execute("INSERT INTO file_text(file_text) VALUES ('integrity-check')")
    assert not store.db.in_transaction


def test_the_merge_in_steps_ends_where_optimize_does(repo, isolated_env, fake_embedder,
                                                     monkeypatch):
    """`compact_text` merges in `merge` steps (here one page each, so many) and leaves the
    same index as FTS5's `optimize` in one transaction (60d0164): one segment, the same
    answers."""
    import ctxd.indexer.pipeline as pipeline
    import ctxd.indexer.store.sqlite.files as files

    monkeypatch.setattr(pipeline, "COMPACT_AFTER_TEXTS", 10**9)  # the walk's segments stay
    monkeypatch.setattr(files, "COMPACT_STEP_PAGES", 1)
    for i in range(40):
        repo.write(f"pkg/m{i}.py", PY_FILE.replace("Cart", f"Cart{i}"))
    stores = [Store.open(isolated_env / f"{way}.db") for way in ("optimize", "steps")]
    try:
        for store in stores:
            Indexer(store, fake_embedder, files_per_commit=4).index(repo.root, WalkOptions(),
                                                                   embed=False)
            assert _segments(store) >= 10
        with stores[0].transaction():
            stores[0].db.execute("INSERT INTO file_text(file_text) VALUES ('optimize')")
        asked: list[int] = []

        def never() -> bool:
            asked.append(1)
            return False

        assert stores[1].compact_text(never)
        assert len(asked) > 3  # asked before each step
        probes = ['"class cart17:"', '"def total(self"', '"qty"', '"cart3"']
        answers = [[s.query("SELECT rowid FROM file_text WHERE file_text MATCH ? "
                            "ORDER BY rowid", [p]) for p in probes] for s in stores]
        assert answers[0] == answers[1] and all(answers[1])
        for store in stores:
            assert _segments(store) == 1
            _text_intact(store)
        assert not stores[1].text_merge_unfinished()
    finally:
        for store in stores:
            store.close()


def test_a_stop_request_during_the_text_merge_ends_it_and_the_next_full_run_finishes_it(
    repo, store, fake_embedder, monkeypatch
):
    """The merge after a big walk was one `optimize` transaction that no stop request could
    end (~10 s at 50k files). A stop asked for once the walk and chunking are done now ends
    it before its next step: the run stops (embeddings pending), the text index answers
    the same part-merged, and the next full run, though it writes nothing, finishes it."""
    import ctxd.indexer.pipeline as pipeline
    import ctxd.indexer.store.sqlite.files as files

    monkeypatch.setattr(pipeline, "COMPACT_AFTER_TEXTS", 20)
    monkeypatch.setattr(files, "COMPACT_STEP_PAGES", 1)
    for i in range(40):
        repo.write(f"pkg/m{i}.py", PY_FILE.replace("Cart", f"Cart{i}"))
    stop: list[Progress] = []

    def progress(p: Progress) -> None:
        if p.phase == "chunk" and p.total is not None and p.done == p.total:
            stop.append(p)  # chunking is over: the merge comes next

    stats = Indexer(store, fake_embedder, files_per_commit=4).index(
        repo.root, WalkOptions(), progress=progress, should_stop=lambda: bool(stop))
    assert stop and stats.stopped and stats.stopped_in == "embed"
    assert stats.files_indexed == 40 and store.count_pending() > 0
    assert _segments(store) > 1 and store.text_merge_unfinished()
    _text_intact(store)
    assert store.query("SELECT count(*) FROM file_text WHERE file_text MATCH "
                       "'\"class cart17:\"'")[0][0] == 1
    again = Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    assert not again.stopped and again.files_updated == 0
    assert _segments(store) == 1 and not store.text_merge_unfinished()
    assert store.count_pending() == 0
    _text_intact(store)
