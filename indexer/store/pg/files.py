"""The indexed text in the PostgreSQL store (`PgFileRows`), as `indexer.store.sqlite.files`
does it for SQLite: a file's row, its full text (`file_text`), its checkpoints with their words, its
symbols and summary, written and removed together.

A checkpoint's words are the same three texts FTS5 indexes
(`indexer.store.words.chunk_fts_row`: path, symbol, text with camelCase humps split), cut at
every character that is not a letter or digit (as FTS5's `unicode61` does) and stored as one
`tsvector` of the `ctxd_words` configuration with weights A (path), B (symbol) and D (text),
plus their token count (`words_len`, FTS5's document length). `keyword_stats` keeps each
repository's checkpoint and token counts, and `keyword_df` its document frequency of every
lexeme, in the same transaction; `terms` / `freqs` hold each lexeme's column-weighted
frequency (`ctxd_terms`, `ctxd_freqs`).

Invariants (as SQLite's): all rows of one file change in one transaction; every change
to the text bumps the text generation; checkpoint ids come from a sequence and are never
reused; a summary with the same text reuses the vector another file's summary has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.pg.connection import PgConnection
from ctxd.indexer.store.pg.schema import TEXT_CONFIG
from ctxd.indexer.store.records import (
    NO_GRAPH,
    NO_SUMMARY,
    FileRecord,
    GraphRow,
    StoredFile,
    Summary,
    with_symbols,
)
from ctxd.indexer.store.words import chunk_fts_row

_SEPARATORS = re.compile(r"[\W_]+")
"""What FTS5's `unicode61` tokenizer cuts words at: anything but letters and digits."""
_TOKEN = re.compile(r"[^\W_]+")


def words_of(text: str) -> tuple[str, int]:
    """(`text` with every separator run as one space, its token count)."""
    spaced = _SEPARATORS.sub(" ", text)
    return spaced, len(_TOKEN.findall(spaced))


WORDS_SQL = (f"setweight(to_tsvector('{TEXT_CONFIG}', %s), 'A') || "
             f"setweight(to_tsvector('{TEXT_CONFIG}', %s), 'B') || "
             f"setweight(to_tsvector('{TEXT_CONFIG}', %s), 'D')")
"""A checkpoint's `words` from its path, symbol and text words."""


class PgFileRows(PgConnection):
    """Files with their text, checkpoints, symbols and summaries."""

    def stored_files(self, repo_id: int) -> dict[str, StoredFile]:
        rows = self._rows("SELECT path, id, size, mtime_ns, hash, role FROM files "
                          "WHERE repo_id = %s", (repo_id,))
        return {str(r[0]): StoredFile(int(r[1]), int(r[2]), int(r[3]), str(r[4]), str(r[5]))
                for r in rows}

    def stored_paths(self, repo_id: int, paths: Sequence[str]) -> set[str]:
        rows = self._rows("SELECT path FROM files WHERE repo_id = %s AND path = ANY(%s)",
                          (repo_id, list(paths)))
        return {str(r[0]) for r in rows}

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        self._rows("UPDATE files SET size = %s, mtime_ns = %s WHERE id = %s",
                   (size, mtime_ns, file_id))

    def replace_file(
        self,
        repo_id: int,
        record: FileRecord,
        content: str,
        chunks: Iterable[tuple[Chunk, str]],
        symbols: Iterable[Symbol],
        now: str,
        summary: Summary = NO_SUMMARY,
        graph: GraphRow = NO_GRAPH,
    ) -> int:
        """Write one file's rows (its code graph too) in one transaction; returns the
        file's id."""
        chunk_list = list(chunks)
        with self.transaction():
            row = self._one("SELECT id FROM files WHERE repo_id = %s AND path = %s",
                            (repo_id, record.path))
            vector: bytes | None = None
            if row is not None:
                old = self._one("SELECT hash, vector FROM summaries WHERE file_id = %s",
                                (row[0],))
                if old is not None and old[0] == summary.hash and old[1] is not None:
                    vector = bytes(old[1])
                self._delete_file_rows(int(row[0]), repo_id)
            made = self._one(
                "INSERT INTO files(repo_id, path, size, mtime_ns, hash, language, lines, "
                "indexed_at, role) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (repo_id, record.path, record.size, record.mtime_ns, record.hash,
                 record.language, record.lines, now, record.role))
            assert made is not None
            file_id = int(made[0])
            self._rows("INSERT INTO file_text(file_id, content) VALUES (%s, %s)",
                       (file_id, content))
            rows, tokens = [], 0
            for c, h in chunk_list:
                (pw, pn), (sw, sn), (tw, tn) = (words_of(t) for t in chunk_fts_row(
                    record.path, c.symbol, c.text))
                tokens += pn + sn + tn
                rows.append((file_id, repo_id, record.path, record.language, c.start_line,
                             c.end_line, c.symbol, c.symbol_kind, c.container, c.text, h,
                             pw, sw, tw, pn + sn + tn))
            self._many(
                "INSERT INTO checkpoints(file_id, repo_id, path, language, start_line, "
                "end_line, symbol, symbol_kind, container, text, hash, words, words_len, "
                "terms, freqs) SELECT v.*, ctxd_terms(v.words), ctxd_freqs(v.words) FROM "
                "(SELECT %s::bigint, %s::bigint, %s, %s, %s::int, %s::int, %s, %s, %s, %s, "
                f"%s, {WORDS_SQL} AS words, %s::int) v", rows)
            self._many(
                "INSERT INTO symbols(file_id, repo_id, path, language, name, kind, container, "
                "line, end_line) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [(file_id, repo_id, record.path, record.language, s.name, s.kind, s.container,
                  s.line, s.end_line) for s in symbols])
            self._put_summary(file_id, repo_id, record.path, summary, vector)
            if graph.data:
                self._put_graph(file_id, repo_id, graph)
            if rows:
                self._rows(
                    "INSERT INTO keyword_stats(repo_id, rows, tokens) VALUES (%s, %s, %s) "
                    "ON CONFLICT (repo_id) DO UPDATE SET rows = keyword_stats.rows + "
                    "excluded.rows, tokens = keyword_stats.tokens + excluded.tokens",
                    (repo_id, len(rows), tokens))
                self._rows(
                    "INSERT INTO keyword_df(repo_id, lexeme, df) SELECT %s, lx, count(*) "
                    "FROM checkpoints c CROSS JOIN LATERAL unnest(tsvector_to_array(c.words)) "
                    "lx WHERE c.file_id = %s GROUP BY lx ON CONFLICT (lexeme, repo_id) DO "
                    "UPDATE SET df = keyword_df.df + excluded.df", (repo_id, file_id))
            self._text_changed()
        return file_id

    def _put_summary(self, file_id: int, repo_id: int, path: str, summary: Summary,
                     vector: bytes | None = None) -> None:
        """Write a file's summary row; its vector is `vector`, else that of any summary
        with the same text, else NULL (pending)."""
        if vector is None and summary.text:
            same = self._one("SELECT vector FROM summaries WHERE hash = %s AND vector IS NOT "
                             "NULL LIMIT 1", (summary.hash,))
            vector = None if same is None else bytes(same[0])
        self._rows(
            "INSERT INTO summaries(file_id, repo_id, path, text, hash, vector) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (file_id) DO UPDATE SET "
            "text = excluded.text, hash = excluded.hash, vector = excluded.vector",
            (file_id, repo_id, path, summary.text, summary.hash, vector))

    def files_without_summary(self, repo_id: int
                              ) -> list[tuple[int, str, str, str, list[Symbol]]]:
        """(file id, path, language, text, symbols) of the files that have no summary row."""
        files = self._rows(
            "SELECT f.id, f.path, f.language, t.content FROM files f "
            "JOIN file_text t ON t.file_id = f.id WHERE f.repo_id = %s AND NOT EXISTS "
            "(SELECT 1 FROM summaries s WHERE s.file_id = f.id) ORDER BY f.path", (repo_id,))
        if not files:
            return []
        return with_symbols(files, self._rows(
            "SELECT file_id, name, kind, line, end_line, container FROM symbols s "
            "WHERE repo_id = %s AND NOT EXISTS (SELECT 1 FROM summaries m "
            "WHERE m.file_id = s.file_id) ORDER BY file_id, line", (repo_id,)))

    def put_graphs(self, repo_id: int, items: Sequence[tuple[int, GraphRow]]) -> None:
        """Store (file id, code graph) rows in one transaction (the backfill); a query's
        cached graphs are stale after it, so it moves the text generation."""
        with self.transaction():
            for file_id, graph in items:  # (an older extractor's keys go with its blob)
                self._rows("DELETE FROM graph_links WHERE file_id = %s", (file_id,))
                self._put_graph(file_id, repo_id, graph)
            if items:
                self._text_changed()

    def _put_graph(self, file_id: int, repo_id: int, graph: GraphRow) -> None:
        self._rows("INSERT INTO graph(file_id, repo_id, data) VALUES (%s, %s, %s) "
                   "ON CONFLICT (file_id) DO UPDATE SET data = excluded.data",
                   (file_id, repo_id, graph.data))
        self._many("INSERT INTO graph_links(key, file_id) VALUES (%s, %s) "
                   "ON CONFLICT DO NOTHING", [(k, file_id) for k in graph.keys])

    def put_summaries(self, repo_id: int, items: Sequence[tuple[int, str, Summary]]) -> None:
        """Store (file id, path, summary) rows in one transaction (the backfill)."""
        with self.transaction():
            for file_id, path, summary in items:
                self._put_summary(file_id, repo_id, path, summary)

    def file_texts(self, file_ids: Sequence[int]) -> dict[int, str]:
        """The full text of the files with these ids (those that exist)."""
        if not file_ids:
            return {}
        return {int(i): str(t) for i, t in self._rows(
            "SELECT file_id, content FROM file_text WHERE file_id = ANY(%s)",
            (list(file_ids),))}

    def stored_text(self, repo_id: int, path: str) -> str | None:
        """The indexed text of the file at `path` of a repository (None: no such file)."""
        row = self._one("SELECT id FROM files WHERE repo_id = %s AND path = %s", (repo_id, path))
        return self.file_texts([int(row[0])]).get(int(row[0])) if row else None

    def _delete_file_rows(self, file_id: int, repo_id: int) -> None:
        """Delete a file's rows (inside the caller's transaction), its checkpoints' counts
        taken off the repository's keyword statistics."""
        self._rows(
            "WITH gone AS (SELECT lx, count(*) AS n FROM checkpoints c CROSS JOIN LATERAL "
            "unnest(tsvector_to_array(c.words)) lx WHERE c.file_id = %s GROUP BY lx) "
            "UPDATE keyword_df k SET df = k.df - gone.n FROM gone "
            "WHERE k.repo_id = %s AND k.lexeme = gone.lx", (file_id, repo_id))
        self._rows(
            "WITH gone AS (DELETE FROM checkpoints WHERE file_id = %s RETURNING words_len) "
            "UPDATE keyword_stats SET rows = rows - (SELECT count(*) FROM gone), "
            "tokens = tokens - (SELECT coalesce(sum(words_len), 0) FROM gone) "
            "WHERE repo_id = %s", (file_id, repo_id))
        self._rows("DELETE FROM files WHERE id = %s", (file_id,))

    def delete_files(self, repo_id: int, paths: Iterable[str]) -> int:
        """Remove files (and all their rows) from a repository, in one transaction."""
        count = 0
        with self.transaction():
            wanted = list(paths)
            found = self._rows("SELECT id FROM files WHERE repo_id = %s AND path = ANY(%s)",
                               (repo_id, wanted)) if wanted else []
            for (file_id,) in found:
                self._delete_file_rows(int(file_id), repo_id)
                count += 1
            if count:
                self._text_changed()
        return count
