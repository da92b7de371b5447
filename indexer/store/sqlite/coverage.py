"""How each file is searchable, for status and for the notes beside search results:
files kept greppable but not embedded, by role (`lexical_only_files`, `file_roles`);
checkpoints whose text has no vector yet (`unembedded_spans`); one repository's counts
(`repo_counts`). The per-repository embedding coverage is with the vectors
(`indexer.store.sqlite.vectors`). Reads only.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxd.indexer.store.sqlite.connection import Connection


class Coverage(Connection):
    """Counts and roles of what is indexed."""

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

    def checkpoint_total(self) -> int:
        """How many checkpoints the index holds (all repositories)."""
        return int(self.db.execute("SELECT count(*) FROM checkpoints").fetchone()[0])
