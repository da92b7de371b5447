"""The search layer's reads of the index (`indexer.store.protocol.Lookups`): repository,
language and kind lists, a file's id, symbol rows (by file, line, name or a condition),
checkpoint rows by id or by vector, summary vectors, and the lexical engine's candidate
files. Where the search layer narrows a read it passes a condition built with the store's
`dialect` (as it does for `keyword_scores` and `scan_nearest`); the statements are here.

Written once for every engine: each statement is in the portable SQL that `query()`
runs on both (`?` placeholders; engine-specific predicates from `dialect`), so
`indexer.store.sqlite.store.Store` and `indexer.store.pg.store.PgStore` both compose this
class instead of keeping two copies that could drift. Reads only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import cast

from ctxd.indexer.store.protocol import Connection, Row

CANDIDATES_SQL = (
    "SELECT f.id, f.repo_id, r.name, f.path, f.language, f.size, f.role "
    "FROM files f JOIN repos r ON r.id = f.repo_id WHERE {where} ORDER BY r.name, f.path"
)
"""The lexical engine's candidate files (`Lookups.candidate_files`); `{where}` is a rendered
condition on `files f` (`search.lexical.sql.render_cond`)."""

SYMBOL_COLUMNS = ("SELECT s.name, s.kind, r.name, s.path, s.line, s.container, s.language, "
                  "s.end_line FROM symbols s JOIN repos r ON r.id = s.repo_id WHERE ")
"""The symbol search's rows (`Lookups.symbol_rows`), followed by its condition."""

CHECKPOINT_COLUMNS = "r.name, c.path, c.language, c.start_line, c.end_line, c.symbol, c.text, c.id"

ENCLOSING_AT_ONCE = 200
"""Places whose enclosing definition one statement reads (`Lookups.enclosing_symbols`)."""

LINE_BITS = 32
"""A (file, line) pair as one integer: `(file_id << LINE_BITS) + line`."""


class Lookups:
    """The reads behind search's symbol, reference and lexical lookups (any engine)."""

    def repo_names(self: Connection) -> list[str]:
        """Every repository's name."""
        return [str(r[0]) for r in self.query("SELECT name FROM repos")]

    def repo_ids(self: Connection) -> dict[str, int]:
        """Repository name -> id, for every repository."""
        return {str(name): int(rid) for rid, name in self.query("SELECT id, name FROM repos")}

    def file_languages(self: Connection) -> list[str]:
        """The distinct languages of the indexed files (as stored)."""
        return [str(r[0]) for r in self.query("SELECT DISTINCT language FROM files")]

    def file_id(self: Connection, repository: str, path: str) -> int | None:
        """The id of the file at `path` in the repository named `repository`, if indexed."""
        rows = self.query(
            "SELECT f.id FROM files f JOIN repos r ON r.id = f.repo_id "
            "WHERE r.name = ? AND f.path = ?",
            (repository, path),
        )
        return int(rows[0][0]) if rows else None

    def enclosing_symbol(self: Connection, repository: str, path: str, line: int) -> Row | None:
        """(name, container) of the innermost definition of the file whose lines (from its
        name's line to its end) hold `line`; None where no definition does."""
        rows = self.query(
            "SELECT s.name, s.container FROM repos r JOIN files f ON f.repo_id = r.id "
            "JOIN symbols s ON s.file_id = f.id "
            "WHERE r.name = ? AND f.path = ? AND s.line <= ? AND s.end_line >= ? "
            "ORDER BY s.end_line - s.line, s.line DESC, s.id LIMIT 1",
            (repository, path, line, line),
        )
        return rows[0] if rows else None

    def enclosing_symbols(
        self: Connection, places: Sequence[tuple[str, str, int]]
    ) -> list[tuple[str, str | None] | None]:
        """`enclosing_symbol` of each (repository, path, line), in order, in one statement
        per `ENCLOSING_AT_ONCE` places: the definitions around every place are read at once
        and the innermost is picked as `enclosing_symbol`'s ORDER BY picks it."""
        out: list[tuple[str, str | None] | None] = []
        for i in range(0, len(places), ENCLOSING_AT_ONCE):
            part = places[i:i + ENCLOSING_AT_ONCE]
            wanted = sorted(set(part))
            values = ", ".join(["(?, ?, ?, ?)"] * len(wanted))
            rows = self.query(
                "SELECT w.column4, s.line, s.end_line, s.id, s.name, "
                f"s.container FROM (VALUES {values}) w JOIN repos r ON r.name = w.column1 "
                "JOIN files f ON f.repo_id = r.id AND f.path = w.column2 "
                "JOIN symbols s ON s.file_id = f.id "
                "WHERE s.line <= w.column3 AND s.end_line >= w.column3",
                [v for k, place in enumerate(wanted) for v in (*place, k)]) if wanted else []
            around: dict[int, list[Row]] = {}
            for row in rows:
                around.setdefault(int(row[0]), []).append(row)
            at = {place: k for k, place in enumerate(wanted)}
            for place in part:  # innermost: the shortest, then the last to start, first made
                best = min(around.get(at[place], ()), key=lambda r: (r[2] - r[1], -r[1], r[3]),
                           default=None)
                out.append(None if best is None else (str(best[4]), best[5]))
        return out

    def symbol_name_counts(self: Connection) -> list[tuple[str, int]]:
        """(name, how many definitions bear it) of every distinct symbol name."""
        return [(str(n), int(c))
                for n, c in self.query("SELECT name, count(*) FROM symbols GROUP BY name")]

    def file_symbols(self: Connection, file_id: int) -> list[tuple[str, str, int]]:
        """(name, kind, line) of every definition in the file `file_id`."""
        rows = self.query("SELECT name, kind, line FROM symbols WHERE file_id = ?", (file_id,))
        return [(str(n), str(k), int(ln)) for n, k, ln in rows]

    def symbols_on_lines(self: Connection, lines: Mapping[int, Iterable[int]]) -> list[Row]:
        """(file id, name, kind, line) of the definitions on the given lines of a batch of
        files, in one statement: `lines` maps a file id to line numbers."""
        keys = [(file_id << LINE_BITS) + n for file_id, ns in lines.items() for n in ns]
        files, file_params = self.dialect.in_values("file_id", list(lines))
        on_lines, line_params = self.dialect.in_values(f"(file_id << {LINE_BITS}) + line", keys)
        return self.query(
            f"SELECT file_id, name, kind, line FROM symbols WHERE {files} AND {on_lines}",
            [*file_params, *line_params])

    def symbols_where(self: Connection, where: str, params: Sequence[object]) -> list[Row]:
        """(file id, name, kind, line) of the definitions `symbols s` that pass `where` (a
        condition on `s`, in `query()`'s portable SQL, with its `params`)."""
        return self.query(
            f"SELECT s.file_id, s.name, s.kind, s.line FROM symbols s WHERE {where}", params
        )

    def symbol_kinds(self: Connection) -> list[str]:
        """The distinct (lower-case) kinds of the symbols in the index, sorted."""
        return [str(r[0]) for r in self.query(
            "SELECT DISTINCT lower(kind) FROM symbols WHERE kind IS NOT NULL ORDER BY 1", ())]

    def symbol_rows(self: Connection, where: str, params: Sequence[object]) -> list[Row]:
        """(name, kind, repository, path, line, container, language, end line) of the
        definitions `symbols s` (joined with `repos r`) that pass `where`."""
        return self.query(SYMBOL_COLUMNS + where, params)

    def max_checkpoint_id(self: Connection) -> int:
        """The largest checkpoint id (0 without checkpoints): about how many the index has
        held, read from the id index."""
        return int(self.query("SELECT max(id) FROM checkpoints")[0][0] or 0)

    def checkpoint_rows(self: Connection, ids: Sequence[int]) -> dict[int, Row]:
        """Checkpoint id -> (repository, path, language, start, end, symbol, text, id) of
        the checkpoints `ids` that exist."""
        if not ids:
            return {}
        return {int(r[-1]): r for r in self.query(
            f"SELECT {CHECKPOINT_COLUMNS} FROM checkpoints c JOIN repos r ON r.id = c.repo_id "
            f"WHERE c.id IN ({','.join('?' * len(ids))})", list(ids))}

    def vector_checkpoints(self: Connection, vector_ids: Sequence[int], where: str,
                           params: Sequence[object]) -> list[Row]:
        """(vector id, repository, path, language, start, end, symbol, text, checkpoint id)
        of the checkpoints whose text has one of `vector_ids` and that pass `where` (an
        `AND ...` fragment on `checkpoints c` joined with `repos r`), by repository, path and
        line."""
        marks = ",".join("?" * len(vector_ids))
        # From the few vectors asked, outwards: CROSS JOIN keeps SQLite's planner from starting
        # at a filtered repository's every checkpoint (50 ms for 5,000 of them, per page).
        return self.query(
            "SELECT e.id, r.name, c.path, c.language, c.start_line, c.end_line, c.symbol, c.text, "
            "c.id "
            "FROM embeddings e CROSS JOIN checkpoints c CROSS JOIN repos r "
            f"WHERE c.hash = e.hash AND r.id = c.repo_id AND e.id IN ({marks}) {where} "
            "ORDER BY r.name, c.path, c.start_line",
            [*vector_ids, *params],
        )

    def summary_vectors(self: Connection, paths: Sequence[str]) -> list[Row]:
        """(repository, path, language, vector bytes) of the embedded file summaries at
        `paths` (in any repository)."""
        return self.query(
            "SELECT r.name, s.path, f.language, s.vector FROM summaries s "
            "JOIN repos r ON r.id = s.repo_id JOIN files f ON f.id = s.file_id "
            f"WHERE s.vector IS NOT NULL AND s.path IN ({','.join('?' * len(paths))})",
            list(paths),
        )

    def candidate_files(self: Connection, where: str, params: Sequence[object]) -> list[Row]:
        """(id, repository id, repository, path, language, size) of the files `files f`
        (joined with `repos r`) that pass `where`, by repository and path (`CANDIDATES_SQL`)."""
        return self.query(CANDIDATES_SQL.format(where=where), params)

    def repo_ids_named(self: Connection, names: Sequence[str]) -> list[int]:
        """The ids of the repositories named `names` (those indexed)."""
        return [int(r[0]) for r in self.query(
            f"SELECT id FROM repos WHERE name IN ({','.join('?' * len(names))})", list(names))]

    def checkpoints_in_repos(self: Connection, names: Sequence[str]) -> int:
        """How many checkpoints the repositories named `names` hold."""
        row = self.query(
            "SELECT count(*) FROM checkpoints WHERE repo_id IN (SELECT id FROM "
            f"repos WHERE name IN ({','.join('?' * len(names))}))", list(names))
        return int(row[0][0])

    def vector_ids_where(self: Connection, where: str, params: Sequence[object]) -> list[int]:
        """The ids of the vectors of the checkpoints (`checkpoints c` joined with `repos r`)
        that pass `where` (an `AND ...` fragment)."""
        return [int(r[0]) for r in self.query(
            "SELECT e.id FROM embeddings e WHERE e.hash IN (SELECT c.hash FROM "
            f"checkpoints c JOIN repos r ON r.id = c.repo_id WHERE TRUE {where})", params)]

    def checkpoints_where(self: Connection, where: str, params: Sequence[object],
                          cap: int) -> int:
        """How many checkpoints (`checkpoints c` joined with `repos r`) pass `where`,
        counted up to `cap`: at most `cap` rows are read."""
        row = self.query(
            "SELECT count(*) FROM (SELECT 1 FROM checkpoints c JOIN repos r ON "
            f"r.id = c.repo_id WHERE TRUE {where} LIMIT ?) s", [*params, cap])
        return int(row[0][0])

    def file_paths_in(self: Connection, names: Sequence[str], *, after: int = 0,
                      limit: int | None = None) -> list[tuple[int, str]]:
        """(id, path) of every file of the repositories named `names` (all when empty);
        with `limit`, at most that many, those with the smallest ids above `after`, by id
        (a page: the next one starts after the last id)."""
        where = f"AND r.name IN ({','.join('?' * len(names))})" if names else ""
        page = "AND f.id > ? ORDER BY f.id LIMIT ?" if limit is not None else ""
        return cast(list[tuple[int, str]], self.query(  # (an INTEGER and a TEXT column:
            "SELECT f.id, f.path FROM files f JOIN repos r ON "  # no copy of 80,000 rows)
            f"r.id = f.repo_id WHERE TRUE {where} {page}",
            [*names, *((after, limit) if limit is not None else ())]))

    def graph_data(self: Connection, file_ids: Sequence[int]) -> dict[int, bytes]:
        """File id -> its encoded code graph, for the files of `file_ids` that have one."""
        out: dict[int, bytes] = {}
        ids = list(dict.fromkeys(file_ids))
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            out.update((int(fid), bytes(data)) for fid, data in self.query(
                f"SELECT file_id, data FROM graph WHERE file_id IN ({','.join('?' * len(part))})",
                part))
        return out

    def files_without_graph(self: Connection, repo_id: int, languages: Sequence[str], *,
                            every: bool = False) -> list[tuple[int, str, str]]:
        """(id, path, language) of a repository's embedded files in `languages` that have
        no graph row (`every`: all of them), by path."""
        if not languages:
            return []
        missing = "" if every else (
            "AND NOT EXISTS (SELECT 1 FROM graph g WHERE g.file_id = f.id) ")
        return [(int(i), str(p), str(lang)) for i, p, lang in self.query(
            "SELECT f.id, f.path, f.language FROM files f WHERE f.repo_id = ? AND f.role = '' "
            f"AND f.language IN ({','.join('?' * len(languages))}) {missing}ORDER BY f.path",
            [repo_id, *languages])]

    def graph_linked(self: Connection, repo_id: int, keys: Sequence[str]) -> list[int]:
        """The ids of the files of a repository found under any of `keys` (the last parts
        of the modules they import), by id."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return []
        return [int(r[0]) for r in self.query(
            "SELECT DISTINCT l.file_id FROM graph_links l JOIN files f ON f.id = l.file_id "
            f"WHERE l.key IN ({','.join('?' * len(wanted))}) AND f.repo_id = ? "
            "ORDER BY l.file_id", [*wanted, repo_id])]

    def graph_links(self: Connection, repo_id: int | None, keys: Sequence[str] | None
                    ) -> list[tuple[str, int]]:
        """(key, file id) of the files of a repository found under each of `keys` (None:
        under every key), by key and id; `repo_id` None: of every repository."""
        if repo_id is None:
            wanted = list(dict.fromkeys(keys)) if keys is not None else None
            if wanted == []:
                return []
            where = f"WHERE key IN ({','.join('?' * len(wanted))}) " if wanted else ""
            return [(str(k), int(i)) for k, i in self.query(
                f"SELECT key, file_id FROM graph_links {where}ORDER BY key, file_id",
                wanted or [])]
        if keys is None:
            return [(str(k), int(i)) for k, i in self.query(
                "SELECT l.key, l.file_id FROM files f JOIN graph_links l ON l.file_id = f.id "
                "WHERE f.repo_id = ? ORDER BY l.key, l.file_id", [repo_id])]
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return []
        return [(str(k), int(i)) for k, i in self.query(
            "SELECT l.key, l.file_id FROM graph_links l JOIN files f ON f.id = l.file_id "
            f"WHERE l.key IN ({','.join('?' * len(wanted))}) AND f.repo_id = ? "
            "ORDER BY l.key, l.file_id", [*wanted, repo_id])]
