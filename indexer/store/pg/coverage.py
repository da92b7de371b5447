"""Counts and roles in the PostgreSQL store (`PgCoverage`), as
`indexer.store.sqlite.coverage`: files kept greppable only, roles of result files,
checkpoints without a vector, one repository's counts. Reads only."""

from __future__ import annotations

from collections.abc import Sequence

from ctxd.indexer.store.pg.connection import PgConnection


class PgCoverage(PgConnection):
    """Counts and roles of what is indexed."""

    def lexical_only_files(
        self, repo_id: int, sample: int
    ) -> tuple[dict[str, int], list[tuple[str, str]]]:
        where = "repo_id = %s AND role <> '' AND role <> 'generated'"
        counts = {str(r): int(n) for r, n in self._rows(
            f"SELECT role, count(*) FROM files WHERE {where} GROUP BY role ORDER BY role",
            (repo_id,))}
        rows = self._rows(f"SELECT path, role FROM files WHERE {where} ORDER BY path LIMIT %s",
                          (repo_id, sample))
        return counts, [(str(p), str(r)) for p, r in rows]

    def file_roles(self, paths: Sequence[str]) -> dict[tuple[str, str], str]:
        if not paths:
            return {}
        rows = self._rows(
            "SELECT r.name, f.path, f.role FROM files f JOIN repos r ON r.id = f.repo_id "
            "WHERE f.path = ANY(%s) AND f.role <> ''", (list(paths),))
        return {(str(a), str(b)): str(c) for a, b, c in rows}

    def unembedded_spans(self, paths: Sequence[str]) -> set[tuple[str, str, int, int]]:
        if not paths:
            return set()
        rows = self._rows(
            "SELECT r.name, c.path, c.start_line, c.end_line FROM checkpoints c "
            "JOIN repos r ON r.id = c.repo_id WHERE c.path = ANY(%s) AND NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.hash = c.hash)", (list(paths),))
        return {(str(a), str(b), int(c), int(d)) for a, b, c, d in rows}

    def repo_counts(self, repo_id: int) -> dict[str, int]:
        """files, checkpoints, symbols, embedded checkpoints and bytes of one repository."""
        row = self._one(
            "SELECT (SELECT count(*) FROM files WHERE repo_id = %(r)s), "
            "(SELECT count(*) FROM checkpoints WHERE repo_id = %(r)s), "
            "(SELECT count(*) FROM symbols WHERE repo_id = %(r)s), "
            "(SELECT count(*) FROM checkpoints c WHERE c.repo_id = %(r)s AND EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.hash = c.hash)), "
            "(SELECT coalesce(sum(size), 0) FROM files WHERE repo_id = %(r)s)", {"r": repo_id})
        assert row is not None
        return dict(zip(("files", "checkpoints", "symbols", "embedded", "bytes"),
                        (int(v) for v in row), strict=True))

    def checkpoint_total(self) -> int:
        """How many checkpoints the store holds: the writers' per-repository counts
        (`keyword_stats`), not a count over a million rows."""
        row = self._one("SELECT coalesce(sum(rows), 0) FROM keyword_stats")
        return int(row[0]) if row else 0
