"""The index: one SQLite file (WAL) with sqlite-vec, FTS5 trigram text and a symbol table.

`Store.open(path)` is the only `connect()` in ctxd. It loads sqlite-vec through
sqlean-py (the stdlib `sqlite3` here cannot load extensions), applies the numbered
migrations of `indexer.store.schema`, and exposes small, named operations for the pipeline
(writes) and a read-only `query()` for the search layer, which builds its own SQL with
bound parameters. The row records (`RepoRow`, `StoredFile`, `FileRecord`,
`PendingChunk`) are what those operations take and return.

Called by `indexer.pipeline` (writes), `search/` (reads) and `server/` (opens one per
thread). Calls `indexer.store.schema`, `sqlean` and `sqlite_vec`.

Invariants:
- All rows of one file (files, file_text, checkpoints, symbols, its summary) change in
  one transaction (`replace_file`, `delete_files`): a crash never leaves half a file.
- Embeddings are keyed by the hash of the text that was embedded, shared by every
  checkpoint with that hash across files and repositories; `embeddings.id` is the
  rowid of `vec_embeddings`. Orphans are collected by `gc_embeddings`. A file's
  summary keeps its vector in its own row (`summaries.vector`), reused whenever a
  summary with the same text already has one (a changed file whose summary did not
  change, the same file in another repository).
- The index records the embedding model and dimension in `meta`; opening it for
  another model raises `ModelMismatch`.
- A connection belongs to one thread: open one `Store` per thread.
"""

from __future__ import annotations

import json
import os
import struct
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlean as sqlite3
import sqlite_vec

from ctxd.indexer.errors import ModelMismatch
from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.private import create_private, private_home
from ctxd.indexer.store.schema import MIGRATIONS, chunk_fts_row

if TYPE_CHECKING:  # numpy only where vectors are read: settings and help stay light
    import numpy as np
    import numpy.typing as npt

SQLiteError = sqlite3.Error
"""What SQLite raises (for code that classifies errors without talking to SQLite)."""

WAL_SIZE_LIMIT = 4 << 20
"""Bytes the WAL file is truncated back to after a checkpoint (`journal_size_limit`)."""

Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class RepoRow:
    """A repository in the index."""

    id: int
    name: str
    root: str
    options: dict[str, Any]
    created_at: str
    indexed_at: str | None
    index_started_at: str | None


@dataclass(frozen=True, slots=True)
class StoredFile:
    """What the store remembers of a file, to decide whether it changed."""

    id: int
    size: int
    mtime_ns: int
    hash: str
    role: str = ""


@dataclass(frozen=True, slots=True)
class FileRecord:
    """A file's facts as written by the pipeline."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    language: str
    lines: int
    role: str = ""
    """`indexer.walk.textclass.Role` value: '' = embedded code or prose."""


@dataclass(frozen=True, slots=True)
class PendingChunk:
    """A checkpoint whose text has no embedding yet (one per distinct hash)."""

    hash: str
    path: str
    symbol: str | None
    text: str


@dataclass(frozen=True, slots=True)
class Summary:
    """A file's summary text (`indexer.chunk.summary`) and the hash of that text; empty for a
    file without one (prose, data), so that every indexed file has a row."""

    text: str
    hash: str


NO_SUMMARY = Summary("", "")


def serialize_vector(vec: Sequence[float]) -> bytes:
    """Pack a vector as little-endian float32, the format vec0 expects."""
    return struct.pack(f"<{len(vec)}f", *vec)


class Store:
    """One connection to the index. Not thread-safe: open one per thread."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path
        self._owner = threading.get_ident()

    # -- lifecycle ---------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | str, *, readonly: bool = False) -> Store:
        """Open (creating if needed) the index at `path` and migrate it.

        Args:
            path: the SQLite file; its folder is created.
            readonly: open without write access (the file must exist).
        """
        path = Path(path)
        if readonly:
            db = sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, timeout=30.0, check_same_thread=False
            )
        else:
            # The index holds every indexed file's text: owner only.
            private_home(path.parent, names=(path.name,))
            create_private(path)  # before SQLite: its -wal and -shm take this file's mode
            # Used by one thread at a time; check_same_thread=False only lets the owner's
            # service close it from another thread at shutdown.
            db = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False)
        db.isolation_level = None  # explicit transactions only
        db.enable_load_extension(True)
        sqlite_vec.load(db)
        db.enable_load_extension(False)
        db.execute("PRAGMA busy_timeout = 30000")
        if not readonly:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            # After each checkpoint the WAL file shrinks back to this size (else it keeps
            # its largest size for good).
            db.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
        db.execute("PRAGMA foreign_keys = ON")
        store = cls(db, path)
        if not readonly:
            store._migrate()
        return store

    def close(self) -> None:
        self.db.close()

    # -- space -------------------------------------------------------------------------

    def file_bytes(self) -> int:
        """The index's size on disk: the database and its WAL."""
        return sum(os.path.getsize(p) for p in (self.path, Path(f"{self.path}-wal"))
                   if os.path.exists(p))

    def reclaimable_bytes(self) -> int:
        """Free pages inside the database file (given back by `compact`)."""
        pages = int(self.db.execute("PRAGMA freelist_count").fetchone()[0])
        return pages * int(self.db.execute("PRAGMA page_size").fetchone()[0])

    def checkpoint(self) -> None:
        """Copy the WAL into the database and truncate it (after large writes): readers
        that hold an old snapshot make this a partial checkpoint, never an error."""
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()

    def compact(self) -> tuple[int, int]:
        """Rewrite the database without its free pages (`VACUUM`) and truncate the WAL;
        returns its size on disk (database + WAL) before and after. Call with the write
        lock held: it writes the whole file."""
        before = self.file_bytes()
        self.db.execute("VACUUM")
        self.checkpoint()
        return before, self.file_bytes()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
        for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
            with self.transaction():
                migration(self.db)
                self.db.execute(f"PRAGMA user_version = {number}")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception.

        Inside an open transaction (phase 1 writes several files in one: fewer commits,
        fewer FTS5 segments to merge) it is a savepoint: an exception undoes just its own
        writes, and they commit with the outer transaction."""
        if self.db.in_transaction:
            self.db.execute("SAVEPOINT nested")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK TO nested")
                self.db.execute("RELEASE nested")
                raise
            self.db.execute("RELEASE nested")
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- reads for the search layer ------------------------------------------------------

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        """Run a read-only statement built by the search layer and return all rows."""
        return list(self.db.execute(sql, params))

    def text_generation(self) -> int:
        """Grows with every change to the indexed text (a file written or removed, a
        repository removed), as seen by every connection and process: answers computed
        from the text stay valid while it stays the same. Embedding commits leave it."""
        return int(self.get_meta("text_generation") or 0)

    def _text_changed(self) -> None:
        """Bump `text_generation` (inside the caller's write transaction)."""
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES ('text_generation', '1') ON CONFLICT(key) "
            "DO UPDATE SET value = CAST(value AS INTEGER) + 1")

    def generation(self) -> tuple[int, int]:
        """Changes whenever the index may have changed as seen by this connection: a commit
        by another connection (`PRAGMA data_version`) or a row changed through this one
        (`total_changes`). Lets readers keep answers while it stays the same."""
        version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
        return version, self.db.total_changes

    # -- model metadata ------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def model(self) -> tuple[str, int] | None:
        """The (model name, dimension) this index was built with, if any."""
        name, dim = self.get_meta("model"), self.get_meta("dimension")
        if name is None or dim is None:
            return None
        return name, int(dim)

    def check_model(self, name: str, dimension: int | None = None) -> None:
        """Raise `ModelMismatch` if the index was built with another model.

        Args:
            name: the configured model name (a name or a path).
            dimension: its output dimension, when known.
        """
        recorded = self.model()
        if recorded is None:
            return
        rname, rdim = recorded
        if rname != name or (dimension is not None and rdim != dimension):
            raise ModelMismatch(
                f"The index at {self.path} was built with model {rname!r} ({rdim} dimensions), "
                f"but the configured model is {name!r}"
                + (f" ({dimension} dimensions)." if dimension else "."),
                hint=(
                    f"Set `model = \"{rname}\"` (or CTXD_MODEL) to use this index, or remove "
                    f"{self.path} (or point CTXD_HOME elsewhere) and re-index with the new model."
                ),
                details={"field": "model", "index_model": rname, "configured_model": name},
            )

    def ensure_model(self, name: str, dimension: int) -> None:
        """Record the model on first use and create the vector table; check it afterwards."""
        self.check_model(name, dimension)
        if self.model() is None:
            with self.transaction():
                self.set_meta("model", name)
                self.set_meta("dimension", str(dimension))
                self.db.execute(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_embeddings "
                    f"USING vec0(embedding float[{int(dimension)}])"
                )

    def has_vectors(self) -> bool:
        return self.model() is not None

    # -- repositories --------------------------------------------------------------------

    def _repo(self, row: Row | None) -> RepoRow | None:
        if row is None:
            return None
        return RepoRow(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6])

    _REPO_COLS = "id, name, root, options, created_at, indexed_at, index_started_at"

    def repos(self) -> list[RepoRow]:
        rows = self.db.execute(f"SELECT {self._REPO_COLS} FROM repos ORDER BY name")
        return [r for r in (self._repo(row) for row in rows) if r is not None]

    def repo_by_root(self, root: str) -> RepoRow | None:
        row = self.db.execute(f"SELECT {self._REPO_COLS} FROM repos WHERE root = ?", (root,))
        return self._repo(row.fetchone())

    def repo_by_name(self, name: str) -> RepoRow | None:
        row = self.db.execute(f"SELECT {self._REPO_COLS} FROM repos WHERE name = ?", (name,))
        return self._repo(row.fetchone())

    def upsert_repo(self, root: str, options: dict[str, Any], now: str) -> RepoRow:
        """Create the repository row for `root` (named after its folder) or update its options.

        The name is the folder's basename; a second root with the same basename gets
        `-2`, `-3`, ... appended.
        """
        existing = self.repo_by_root(root)
        with self.transaction():
            if existing is None:
                base = os.path.basename(root.rstrip("/")) or "root"
                name, n = base, 1
                while self.db.execute("SELECT 1 FROM repos WHERE name = ?", (name,)).fetchone():
                    n += 1
                    name = f"{base}-{n}"
                self.db.execute(
                    "INSERT INTO repos(name, root, options, created_at, index_started_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (name, root, json.dumps(options), now, now),
                )
            else:
                self.db.execute(
                    "UPDATE repos SET options = ?, index_started_at = ? WHERE id = ?",
                    (json.dumps(options), now, existing.id),
                )
        repo = self.repo_by_root(root)
        assert repo is not None
        return repo

    def mark_indexed(self, repo_id: int, now: str | None) -> None:
        """End a run: `indexed_at` becomes `now` (None: stays as it was)."""
        self.db.execute(
            "UPDATE repos SET indexed_at = coalesce(?, indexed_at), index_started_at = NULL "
            "WHERE id = ?", (now, repo_id)
        )

    def remove_repo(self, repo_id: int) -> None:
        """Delete a repository and every row that belongs to it, in one transaction."""
        with self.transaction():
            self.db.execute(
                "DELETE FROM file_text WHERE rowid IN (SELECT id FROM files WHERE repo_id = ?)",
                (repo_id,),
            )
            self.db.execute(
                "DELETE FROM chunk_fts WHERE rowid IN "
                "(SELECT id FROM checkpoints WHERE repo_id = ?)",
                (repo_id,),
            )
            for table in ("checkpoints", "symbols", "summaries", "files"):
                self.db.execute(f"DELETE FROM {table} WHERE repo_id = ?", (repo_id,))
            self.db.execute("DELETE FROM repos WHERE id = ?", (repo_id,))
            self._text_changed()
        self.gc_embeddings()

    # -- files ---------------------------------------------------------------------------

    def stored_files(self, repo_id: int) -> dict[str, StoredFile]:
        """Every file of a repository, by path: what incremental indexing compares against."""
        rows = self.db.execute(
            "SELECT path, id, size, mtime_ns, hash, role FROM files WHERE repo_id = ?",
            (repo_id,),
        )
        return {r[0]: StoredFile(r[1], r[2], r[3], r[4], r[5]) for r in rows}

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        """Record a new stat for a file whose content hash did not change."""
        self.db.execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, file_id)
        )

    def replace_file(
        self,
        repo_id: int,
        record: FileRecord,
        content: str,
        chunks: Iterable[tuple[Chunk, str]],
        symbols: Iterable[Symbol],
        now: str,
        summary: Summary = NO_SUMMARY,
    ) -> int:
        """Write one file's rows (file, full text, checkpoints, symbols, summary) in one
        transaction.

        Args:
            chunks: (chunk, hash of its embedding input) pairs.
            summary: the file's summary (`NO_SUMMARY` when it has none).

        Returns:
            The file's id.
        """
        with self.transaction():
            row = self.db.execute(
                "SELECT id FROM files WHERE repo_id = ? AND path = ?", (repo_id, record.path)
            ).fetchone()
            vector: bytes | None = None
            if row is not None:
                old = self.db.execute("SELECT hash, vector FROM summaries WHERE file_id = ?",
                                      (int(row[0]),)).fetchone()
                if old is not None and old[0] == summary.hash and old[1] is not None:
                    vector = bytes(old[1])
                self._delete_file_rows(int(row[0]))
            cur = self.db.execute(
                "INSERT INTO files(repo_id, path, size, mtime_ns, hash, language, lines, "
                "indexed_at, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    repo_id,
                    record.path,
                    record.size,
                    record.mtime_ns,
                    record.hash,
                    record.language,
                    record.lines,
                    now,
                    record.role,
                ),
            )
            file_id = int(cur.lastrowid or 0)
            self.db.execute(
                "INSERT INTO file_text(rowid, content) VALUES (?, ?)", (file_id, content)
            )
            chunk_list = list(chunks)
            first = self.db.execute("SELECT coalesce(max(id), 0) + 1 FROM checkpoints")
            next_id = int(first.fetchone()[0])
            self.db.executemany(
                "INSERT INTO checkpoints(id, file_id, repo_id, path, language, start_line, "
                "end_line, symbol, symbol_kind, container, text, hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        next_id + n,
                        file_id,
                        repo_id,
                        record.path,
                        record.language,
                        c.start_line,
                        c.end_line,
                        c.symbol,
                        c.symbol_kind,
                        c.container,
                        c.text,
                        h,
                    )
                    for n, (c, h) in enumerate(chunk_list)
                ],
            )
            self.db.executemany(
                "INSERT INTO chunk_fts(rowid, path, symbol, text) VALUES (?, ?, ?, ?)",
                [
                    (next_id + n, *chunk_fts_row(record.path, c.symbol, c.text))
                    for n, (c, _h) in enumerate(chunk_list)
                ],
            )
            self.db.executemany(
                "INSERT INTO symbols(file_id, repo_id, path, language, name, kind, container, "
                "line, end_line) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        file_id,
                        repo_id,
                        record.path,
                        record.language,
                        s.name,
                        s.kind,
                        s.container,
                        s.line,
                        s.end_line,
                    )
                    for s in symbols
                ],
            )
            self._put_summary(file_id, repo_id, record.path, summary, vector)
            self._text_changed()
        return file_id

    def _put_summary(self, file_id: int, repo_id: int, path: str, summary: Summary,
                     vector: bytes | None = None) -> None:
        """Write a file's summary row; its vector is `vector`, else that of any summary
        with the same text (the same file in another repository), else NULL (pending)."""
        if vector is None and summary.text:
            same = self.db.execute("SELECT vector FROM summaries WHERE hash = ? AND "
                                   "vector IS NOT NULL LIMIT 1", (summary.hash,)).fetchone()
            vector = None if same is None else bytes(same[0])
        self.db.execute(
            "INSERT INTO summaries(file_id, repo_id, path, text, hash, vector) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(file_id) DO UPDATE SET "
            "text = excluded.text, hash = excluded.hash, vector = excluded.vector",
            (file_id, repo_id, path, summary.text, summary.hash, vector),
        )

    def files_without_summary(self, repo_id: int
                              ) -> list[tuple[int, str, str, str, list[Symbol]]]:
        """(file id, path, language, text, symbols) of the files that have no summary row
        (indexed before summaries existed): two statements for the whole repository."""
        files = self.db.execute(
            "SELECT f.id, f.path, f.language, t.content FROM files f "
            "JOIN file_text t ON t.rowid = f.id WHERE f.repo_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM summaries s WHERE s.file_id = f.id) ORDER BY f.path",
            (repo_id,),
        ).fetchall()
        if not files:
            return []
        symbols: dict[int, list[Symbol]] = {}
        for fid, n, k, a, b, c in self.db.execute(
                "SELECT file_id, name, kind, line, end_line, container FROM symbols s "
                "WHERE repo_id = ? AND NOT EXISTS (SELECT 1 FROM summaries m "
                "WHERE m.file_id = s.file_id) ORDER BY file_id, line", (repo_id,)):
            symbols.setdefault(int(fid), []).append(
                Symbol(str(n), str(k), int(a), int(b), None if c is None else str(c)))
        return [(int(i), str(p), str(lang), str(text), symbols.get(int(i), []))
                for i, p, lang, text in files]

    def put_summaries(self, repo_id: int, items: Sequence[tuple[int, str, Summary]]) -> None:
        """Store (file id, path, summary) rows in one transaction (the backfill)."""
        with self.transaction():
            for file_id, path, summary in items:
                self._put_summary(file_id, repo_id, path, summary)

    def _delete_file_rows(self, file_id: int) -> None:
        self.db.execute("DELETE FROM file_text WHERE rowid = ?", (file_id,))
        self.db.execute(
            "DELETE FROM chunk_fts WHERE rowid IN (SELECT id FROM checkpoints WHERE file_id = ?)",
            (file_id,),
        )
        self.db.execute("DELETE FROM checkpoints WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM symbols WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM summaries WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def delete_files(self, repo_id: int, paths: Iterable[str]) -> int:
        """Remove files (and all their rows) from a repository, one transaction per batch."""
        count = 0
        with self.transaction():
            for path in paths:
                row = self.db.execute(
                    "SELECT id FROM files WHERE repo_id = ? AND path = ?", (repo_id, path)
                ).fetchone()
                if row is not None:
                    self._delete_file_rows(int(row[0]))
                    count += 1
            if count:
                self._text_changed()
        return count

    # -- embeddings ----------------------------------------------------------------------

    def pending_chunks(self, repo_id: int | None = None) -> list[PendingChunk]:
        """Every distinct checkpoint text (of one repository, or all) with no embedding yet."""
        where = "AND c.repo_id = ?" if repo_id is not None else ""
        params: tuple[Any, ...] = (repo_id,) if repo_id is not None else ()
        rows = self.db.execute(
            "SELECT c.hash, c.path, c.symbol, c.text FROM checkpoints c "
            "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash) "
            f"{where} GROUP BY c.hash",
            params,
        )
        return [PendingChunk(r[0], r[1], r[2], r[3]) for r in rows]

    _PENDING_SUMMARY = "text != '' AND vector IS NULL"

    def pending_summaries(self, repo_id: int | None = None) -> list[tuple[str, str]]:
        """(hash, text) of every distinct file summary (of one repository, or all) with no
        vector yet."""
        scope = "AND repo_id = ?" if repo_id is not None else ""
        params: tuple[Any, ...] = (repo_id,) if repo_id is not None else ()
        rows = self.db.execute(
            f"SELECT hash, text FROM summaries WHERE {self._PENDING_SUMMARY} {scope} "
            "GROUP BY hash", params)
        return [(str(h), str(t)) for h, t in rows]

    def count_pending(self, repo_id: int | None = None) -> int:
        """Texts waiting for a vector: distinct checkpoint texts and file summaries."""
        scope = "AND repo_id = ?" if repo_id is not None else ""
        params: tuple[Any, ...] = (repo_id,) if repo_id is not None else ()
        chunks = self.db.execute(
            "SELECT count(DISTINCT c.hash) FROM checkpoints c "
            f"WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash) {scope}",
            params,
        ).fetchone()
        summaries = self.db.execute(
            f"SELECT count(DISTINCT hash) FROM summaries WHERE {self._PENDING_SUMMARY} {scope}",
            params).fetchone()
        return int(chunks[0]) + int(summaries[0])

    def add_embeddings(self, items: Sequence[tuple[str, bytes]],
                       summaries: Sequence[tuple[str, bytes]] = ()) -> None:
        """Store (hash, float32 vector blob) pairs of checkpoint texts, and of file
        summaries (every summary with that hash), in one transaction; known checkpoint
        hashes are kept."""
        with self.transaction():
            self.db.executemany("UPDATE summaries SET vector = ? WHERE hash = ?",
                                [(blob, h) for h, blob in summaries])
            for h, blob in items:
                cur = self.db.execute(
                    "INSERT INTO embeddings(hash) VALUES (?) ON CONFLICT(hash) DO NOTHING", (h,)
                )
                if cur.rowcount:
                    self.db.execute(
                        "INSERT INTO vec_embeddings(rowid, embedding) VALUES (?, ?)",
                        (cur.lastrowid, blob),
                    )

    def vector_state(self) -> tuple[int, int, int]:
        """(count, largest rowid, deletion generation) of the vectors: a cache key.

        The generation grows whenever vectors are deleted, so a reader holding vectors in
        memory knows whether appending the rows past its largest rowid is enough.
        """
        # Two subqueries: each is a fast path (btree count, last rowid); together in one
        # SELECT they became a scan of every row (3 ms per 100k vectors, every query).
        row = self.db.execute("SELECT (SELECT count(*) FROM embeddings), "
                              "(SELECT coalesce(max(id), 0) FROM embeddings)")
        count, top = row.fetchone()
        return int(count), int(top), int(self.get_meta("vec_generation") or 0)

    def vector_batches(
        self, rowid: int, batch: int = 16384
    ) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
        """(rowids, float32 rows) of every vector with a larger rowid, in rowid order, a
        batch at a time, so that a reader loading a million vectors never holds them
        twice (as blobs and as a matrix)."""
        import numpy as np

        if not self.has_vectors():
            return
        cur = self.db.execute(
            "SELECT rowid, embedding FROM vec_embeddings WHERE rowid > ? ORDER BY rowid", (rowid,))
        while rows := cur.fetchmany(batch):
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            yield ids, mat.reshape(len(rows), -1)

    def gc_embeddings(self, min_orphans: int = 0) -> int:
        """Delete embeddings no checkpoint refers to; returns how many went.

        Args:
            min_orphans: do nothing while fewer vectors than this are orphaned. Orphans are
                invisible to search (no checkpoint carries their hash) and are reused if
                the same text comes back, so collecting them lazily keeps readers'
                in-memory vector copies valid across small edits.
        """
        if not self.has_vectors():
            return 0
        orphan_sql = (
            "SELECT e.id FROM embeddings e "
            "WHERE NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.hash = e.hash)"
        )
        if min_orphans > 0:
            n = int(self.db.execute(f"SELECT count(*) FROM ({orphan_sql})").fetchone()[0])
            if n < min_orphans:
                return 0
        with self.transaction():
            orphans = [int(r[0]) for r in self.db.execute(orphan_sql)]
            for i in orphans:
                self.db.execute("DELETE FROM vec_embeddings WHERE rowid = ?", (i,))
                self.db.execute("DELETE FROM embeddings WHERE id = ?", (i,))
            if orphans:
                generation = int(self.get_meta("vec_generation") or 0) + 1
                self.set_meta("vec_generation", str(generation))
        return len(orphans)

    # -- counts --------------------------------------------------------------------------

    def embedding_coverage(self, names: Sequence[str] = ()) -> list[tuple[str, int, int]]:
        """(repository, checkpoints, embedded checkpoints) per repository, or for `names`.

        One grouped query; an embedded checkpoint is one whose text has a vector.
        """
        where = ""
        params: list[object] = []
        if names:
            where = f"WHERE r.name IN ({','.join('?' * len(names))})"
            params = list(names)
        rows = self.db.execute(
            "SELECT r.name, count(c.id), coalesce(sum(EXISTS (SELECT 1 FROM embeddings e "
            "WHERE e.hash = c.hash)), 0) FROM repos r LEFT JOIN checkpoints c "
            f"ON c.repo_id = r.id {where} GROUP BY r.name ORDER BY r.name",
            params,
        )
        return [(str(n), int(t), int(e)) for n, t, e in rows]

    def lexical_only_files(
        self, repo_id: int, sample: int
    ) -> tuple[dict[str, int], list[tuple[str, str]]]:
        """A repository's files kept greppable but not embedded: counts by role, and the
        first `sample` (path, role) pairs by path."""
        where = "repo_id = ? AND role != '' AND role != 'generated'"
        counts = {str(r): int(n) for r, n in self.db.execute(
            f"SELECT role, count(*) FROM files WHERE {where} GROUP BY role ORDER BY role",
            (repo_id,))}
        rows = self.db.execute(
            f"SELECT path, role FROM files WHERE {where} ORDER BY path LIMIT ?",
            (repo_id, sample)).fetchall()
        return counts, [(str(p), str(r)) for p, r in rows]

    def file_roles(self, paths: Sequence[str]) -> dict[tuple[str, str], str]:
        """(repository, path) -> role (`indexer.walk.textclass.Role`) of the files at `paths`
        (in any repository) whose role is not '' (embedded code or prose)."""
        if not paths:
            return {}
        rows = self.db.execute(
            "SELECT r.name, f.path, f.role FROM files f JOIN repos r ON r.id = f.repo_id "
            f"WHERE f.path IN ({','.join('?' * len(paths))}) AND f.role != ''",
            list(paths),
        )
        return {(str(a), str(b)): str(c) for a, b, c in rows}

    def unembedded_spans(self, paths: Sequence[str]) -> set[tuple[str, str, int, int]]:
        """(repository, path, start line, end line) of the checkpoints of `paths` whose
        text has no vector yet."""
        if not paths:
            return set()
        rows = self.db.execute(
            "SELECT r.name, c.path, c.start_line, c.end_line FROM checkpoints c "
            "JOIN repos r ON r.id = c.repo_id "
            f"WHERE c.path IN ({','.join('?' * len(paths))}) AND NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.hash = c.hash)",
            list(paths),
        )
        return {(str(a), str(b), int(c), int(d)) for a, b, c, d in rows}

    def repo_counts(self, repo_id: int) -> dict[str, int]:
        """files, checkpoints, symbols, embedded checkpoints for one repository."""

        def one(sql: str) -> int:
            return int(self.db.execute(sql, (repo_id,)).fetchone()[0])

        return {
            "files": one("SELECT count(*) FROM files WHERE repo_id = ?"),
            "checkpoints": one("SELECT count(*) FROM checkpoints WHERE repo_id = ?"),
            "symbols": one("SELECT count(*) FROM symbols WHERE repo_id = ?"),
            "embedded": one(
                "SELECT count(*) FROM checkpoints c WHERE c.repo_id = ? "
                "AND EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash)"
            ),
            "bytes": one("SELECT coalesce(sum(size), 0) FROM files WHERE repo_id = ?"),
        }
