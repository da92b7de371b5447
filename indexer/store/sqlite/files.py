"""The indexed text: a file's rows (`files`, its full text in `file_text`, its
checkpoints with their FTS5 row in `chunk_fts`, its `symbols`, its summary in
`summaries`, its code graph in `graph` and `graph_links`), written and removed together.

The pipeline writes through it; the search layer reads `file_texts` (the lexical engine,
references) and the other tables with its own SQL (`Store.query`).

Invariants:
- All rows of one file (files, file_text, checkpoints, symbols, its summary) change in
  one transaction (`replace_file`, `delete_files`): a crash never leaves half a file.
  The one exception is phase 1's text-first write (`put_file_text`, then `replace_file`
  with `content=None`): between the two the file's row says it is unfinished
  (`UNFINISHED_HASH`, mtime -1) and its text is new while its checkpoints are not; a
  crash there makes the next run rewrite the file.
- Every change to the text bumps `text_generation` in that transaction.
- Checkpoint ids only grow, never reused (`checkpoint_high_water` in `meta`): rows past
  an id a reader saw were written after it.
- A file's summary keeps its vector in its own row (`summaries.vector`), reused whenever a
  summary with the same text already has one (a changed file whose summary did not
  change, the same file in another repository).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.records import (
    NO_GRAPH,
    NO_SUMMARY,
    FileRecord,
    GraphRow,
    StoredFile,
    Summary,
    with_symbols,
)
from ctxd.indexer.store.sqlite.connection import Connection
from ctxd.indexer.store.words import chunk_fts_row

UNFINISHED_HASH = ""
"""`files.hash` of a file whose text is written and whose checkpoints are not yet
(`put_file_text`): no content hash equals it, so the next run rewrites the file."""

TEXT_AUTOMERGE = 4
"""FTS5's `automerge` for `file_text` outside `bulk_text` (FTS5's default)."""

TEXT_MERGE_META = "text_merge"
"""Meta key: `unfinished` from the start of a `compact_text` until it has merged everything
(`done`)."""

COMPACT_STEP_PAGES = 1000
"""Pages (`pgsz`, ~4 kB each) that one step of `compact_text` writes: FTS5's own work unit
for `optimize`; a step is then ~0.1 s (docs/BENCHMARKS.md, robustness fixes)."""


class FileRows(Connection):
    """Files with their text, checkpoints, symbols and summaries."""

    def stored_files(self, repo_id: int) -> dict[str, StoredFile]:
        """Every file of a repository, by path: what incremental indexing compares against."""
        rows = self.db.execute(
            "SELECT path, id, size, mtime_ns, hash, role FROM files WHERE repo_id = ?",
            (repo_id,),
        )
        return {r[0]: StoredFile(r[1], r[2], r[3], r[4], r[5]) for r in rows}

    def stored_paths(self, repo_id: int, paths: Sequence[str]) -> set[str]:
        """Which of `paths` the repository holds (any number of them)."""
        rows = self.db.execute(
            "SELECT path FROM files WHERE repo_id = ? "
            "AND path IN (SELECT value FROM json_each(?))", (repo_id, json.dumps(list(paths))))
        return {str(r[0]) for r in rows}

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        """Record a new stat for a file whose content hash did not change."""
        self.db.execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, file_id)
        )

    def put_file_text(self, repo_id: int, record: FileRecord, content: str, now: str) -> int:
        """Write a file's row and full text ahead of its checkpoints (phase 1 makes every
        file greppable before it chunks any: `indexer.pipeline`), in one transaction. A
        file already indexed keeps its id, checkpoints, symbols and summary until
        `replace_file(..., content=None)` replaces them. The row is marked unfinished
        (`UNFINISHED_HASH`, mtime -1), so a run that stops before that re-reads the file.

        Returns:
            The file's id.
        """
        with self.transaction():
            row = self.db.execute(
                "SELECT id FROM files WHERE repo_id = ? AND path = ?", (repo_id, record.path)
            ).fetchone()
            values = (record.size, -1, UNFINISHED_HASH, record.language, record.lines, now,
                      record.role)
            if row is None:
                cur = self.db.execute(
                    "INSERT INTO files(repo_id, path, size, mtime_ns, hash, language, lines, "
                    "indexed_at, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (repo_id, record.path, *values))
                file_id = int(cur.lastrowid or 0)
            else:
                file_id = int(row[0])
                self._update_file_row(file_id, values)
                self.db.execute("DELETE FROM file_text WHERE rowid = ?", (file_id,))
            self.db.execute(
                "INSERT INTO file_text(rowid, content) VALUES (?, ?)", (file_id, content))
            self._text_changed()
        return file_id

    @contextmanager
    def bulk_text(self) -> Iterator[None]:
        """FTS5 settings for phase 1's walk, which writes many texts in a row: `file_text`'s
        `automerge` is off, so each commit's new segment is left as it is instead of being
        merged into the older ones at once (FTS5 still merges a level that reaches
        `crisismerge`, 16 segments); the trigram inserts take 11-28% less CPU
        (docs/BENCHMARKS.md, issue 30 item 2, continued). Leaving the block restores
        `TEXT_AUTOMERGE`; an exception leaves it off until the next run's (search is the
        same either way). The segments left are merged by `compact_text`."""
        self._text_config("automerge", 0)
        yield
        self._text_config("automerge", TEXT_AUTOMERGE)

    def compact_text(self, should_stop: Callable[[], bool] = lambda: False) -> bool:
        """Merge `file_text`'s segments into one, as FTS5 `optimize` does, but in steps of
        `COMPACT_STEP_PAGES` pages, a transaction each, asking `should_stop` before each
        (`optimize` is one transaction that no stop request could end: ~10 s at 50k
        files). A literal is then looked up in one b-tree instead of one per segment.
        Phase 1 runs it after a walk that wrote many texts
        (`indexer.pipeline.COMPACT_AFTER_TEXTS`).

        FTS5's `merge` with a negative page count first puts every segment on one level
        (the same start as `optimize`); later steps, positive, carry that merge on; a step
        that changes fewer than two rows found nothing to merge, and a negative one that
        finds nothing leaves one segment. A stop (or a crash)
        leaves the merge part-way: every committed step is whole and search answers the
        same; the meta key `TEXT_MERGE_META` says so until a later full run finishes it
        (`text_merge_unfinished`).

        Returns:
            Whether it merged everything (False: `should_stop` said stop first).
        """
        if not self.text_merge_unfinished():  # due from now on, even if stopped at once
            with self.transaction():
                self.set_meta(TEXT_MERGE_META, "unfinished")
            pages = -COMPACT_STEP_PAGES
        else:  # carry on the merge a stopped run began (a negative step would restart it)
            pages = COMPACT_STEP_PAGES
        while not should_stop():
            with self.transaction():
                before = self.db.total_changes
                self.db.execute("INSERT INTO file_text(file_text, rank) VALUES ('merge', ?)",
                                (pages,))
                merged = self.db.total_changes - before >= 2
            if merged:
                pages = COMPACT_STEP_PAGES
            elif pages > 0:  # no merge under way: a negative step merges what is left, if any
                pages = -COMPACT_STEP_PAGES
            else:  # one segment
                with self.transaction():
                    self.set_meta(TEXT_MERGE_META, "done")
                return True
        return False

    def text_merge_unfinished(self) -> bool:
        """Whether a `compact_text` was stopped (or killed) part-way."""
        return self.get_meta(TEXT_MERGE_META) == "unfinished"

    def _text_config(self, key: str, value: int) -> None:
        with self.transaction():
            self.db.execute("INSERT INTO file_text(file_text, rank) VALUES (?, ?)", (key, value))

    def _update_file_row(self, file_id: int, values: tuple[object, ...]) -> None:
        self.db.execute(
            "UPDATE files SET size = ?, mtime_ns = ?, hash = ?, language = ?, lines = ?, "
            "indexed_at = ?, role = ? WHERE id = ?", (*values, file_id))

    def replace_file(
        self,
        repo_id: int,
        record: FileRecord,
        content: str | None,
        chunks: Iterable[tuple[Chunk, str]],
        symbols: Iterable[Symbol],
        now: str,
        summary: Summary = NO_SUMMARY,
        graph: GraphRow = NO_GRAPH,
    ) -> int:
        """Write one file's rows (file, full text, checkpoints, symbols, summary, code
        graph) in one transaction.

        Args:
            content: the file's text; None when `put_file_text` wrote it (the file keeps
                its id and text, the rest of its rows are replaced).
            chunks: (chunk, hash of its embedding input) pairs.
            summary: the file's summary (`NO_SUMMARY` when it has none).
            graph: the file's code graph (`NO_GRAPH` when it has none).

        Returns:
            The file's id.

        Raises:
            ValueError: `content` is None for a file without a row.
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
            values = (record.size, record.mtime_ns, record.hash, record.language,
                      record.lines, now, record.role)
            if content is None:
                if row is None:
                    raise ValueError(f"{record.path}: no text written for this file")
                file_id = int(row[0])
                self._delete_chunk_rows(file_id)
                self._update_file_row(file_id, values)
            else:
                if row is not None:
                    self._delete_file_rows(int(row[0]))
                cur = self.db.execute(
                    "INSERT INTO files(repo_id, path, size, mtime_ns, hash, language, lines, "
                    "indexed_at, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (repo_id, record.path, *values),
                )
                file_id = int(cur.lastrowid or 0)
                self.db.execute(
                    "INSERT INTO file_text(rowid, content) VALUES (?, ?)", (file_id, content)
                )
            chunk_list = list(chunks)
            # Checkpoint ids are never reused, not even those of the rows just deleted:
            # a reader holding rows up to some id (the keyword postings in memory) knows
            # every row past it, and only those, is new.
            first = self.db.execute(
                "SELECT max(coalesce((SELECT max(id) FROM checkpoints), 0), coalesce((SELECT "
                "CAST(value AS INTEGER) FROM meta WHERE key = 'checkpoint_high_water'), 0)) + 1")
            next_id = int(first.fetchone()[0])
            if chunk_list:
                self.set_meta("checkpoint_high_water", str(next_id + len(chunk_list) - 1))
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
            if graph.data:
                self._put_graph(file_id, repo_id, graph)
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
        return with_symbols(files, self.db.execute(
            "SELECT file_id, name, kind, line, end_line, container FROM symbols s "
            "WHERE repo_id = ? AND NOT EXISTS (SELECT 1 FROM summaries m "
            "WHERE m.file_id = s.file_id) ORDER BY file_id, line", (repo_id,)))

    def put_graphs(self, repo_id: int, items: Sequence[tuple[int, GraphRow]]) -> None:
        """Store (file id, code graph) rows in one transaction (the backfill of files
        indexed before the graph existed, or by an older extractor); a query's cached
        graphs are stale after it, so it moves the text generation."""
        with self.transaction():
            for file_id, graph in items:  # (an older extractor's keys go with its blob)
                self.db.execute("DELETE FROM graph_links WHERE file_id = ?", (file_id,))
                self._put_graph(file_id, repo_id, graph)
            if items:
                self._text_changed()

    def _put_graph(self, file_id: int, repo_id: int, graph: GraphRow) -> None:
        self.db.execute("INSERT OR REPLACE INTO graph(file_id, repo_id, data) VALUES (?, ?, ?)",
                        (file_id, repo_id, graph.data))
        self.db.executemany("INSERT OR IGNORE INTO graph_links(key, file_id) VALUES (?, ?)",
                            [(k, file_id) for k in graph.keys])

    def put_summaries(self, repo_id: int, items: Sequence[tuple[int, str, Summary]]) -> None:
        """Store (file id, path, summary) rows in one transaction (the backfill)."""
        with self.transaction():
            for file_id, path, summary in items:
                self._put_summary(file_id, repo_id, path, summary)

    def _delete_file_rows(self, file_id: int) -> None:
        self.db.execute("DELETE FROM file_text WHERE rowid = ?", (file_id,))
        self._delete_chunk_rows(file_id)
        self.db.execute("DELETE FROM summaries WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def _delete_chunk_rows(self, file_id: int) -> None:
        """A file's checkpoints (with their `chunk_fts` rows), symbols and code graph."""
        self.db.execute(
            "DELETE FROM chunk_fts WHERE rowid IN (SELECT id FROM checkpoints WHERE file_id = ?)",
            (file_id,),
        )
        self.db.execute("DELETE FROM checkpoints WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM symbols WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM graph WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM graph_links WHERE file_id = ?", (file_id,))

    def file_texts(self, file_ids: Sequence[int]) -> dict[int, str]:
        """The full text of the files with these ids (those that exist)."""
        out: dict[int, str] = {}
        ids = list(file_ids)
        for i in range(0, len(ids), 5_000):
            part = ids[i:i + 5_000]
            marks = ",".join("?" * len(part))
            out.update((int(r[0]), str(r[1])) for r in self.db.execute(
                f"SELECT rowid, content FROM file_text WHERE rowid IN ({marks})", part))
        return out

    def stored_text(self, repo_id: int, path: str) -> str | None:
        """The indexed text of the file at `path` of a repository (None: no such file)."""
        row = self.db.execute("SELECT id FROM files WHERE repo_id = ? AND path = ?",
                              (repo_id, path)).fetchone()
        return self.file_texts([int(row[0])]).get(int(row[0])) if row else None

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
