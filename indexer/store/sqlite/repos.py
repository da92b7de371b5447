"""The repositories of the index: one `repos` row per indexed root, its options and the
start and end of its last run.

A repository's name is its folder's basename, made unique with `-2`, `-3`, ...; `_delete_repo`
removes the repository with every row of its text in one transaction (`Store.remove_repo`
then collects the vectors no checkpoint uses any more).
"""

from __future__ import annotations

import json
import os
from typing import Any

from ctxd.indexer.store.records import RepoRow
from ctxd.indexer.store.sqlite.connection import Connection, Row


class RepoRows(Connection):
    """The `repos` table."""

    def _repo(self, row: Row | None) -> RepoRow | None:
        if row is None:
            return None
        return RepoRow(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6],
                       root_id=row[7])

    _REPO_COLS = "id, name, root, options, created_at, indexed_at, index_started_at, root_id"

    def repos(self) -> list[RepoRow]:
        rows = self.db.execute(f"SELECT {self._REPO_COLS} FROM repos ORDER BY name")
        return [r for r in (self._repo(row) for row in rows) if r is not None]

    def repo_by_root(self, root: str) -> RepoRow | None:
        row = self.db.execute(f"SELECT {self._REPO_COLS} FROM repos WHERE root = ?", (root,))
        return self._repo(row.fetchone())

    def repo_by_name(self, name: str) -> RepoRow | None:
        row = self.db.execute(f"SELECT {self._REPO_COLS} FROM repos WHERE name = ?", (name,))
        return self._repo(row.fetchone())

    def upsert_repo(self, root: str, options: dict[str, Any], now: str,
                    root_id: str = "") -> RepoRow:
        """Create the repository row for `root` (named after its folder) or update its options
        (and the root folder's identity `root_id`, when given: `indexer.walk.rootpin`).

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
                    "INSERT INTO repos(name, root, options, created_at, index_started_at, "
                    "root_id) VALUES (?, ?, ?, ?, ?, ?)",
                    (name, root, json.dumps(options), now, now, root_id),
                )
            else:
                self.db.execute(
                    "UPDATE repos SET options = ?, index_started_at = ?, "
                    "root_id = coalesce(nullif(?, ''), root_id) WHERE id = ?",
                    (json.dumps(options), now, root_id, existing.id),
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

    def _delete_repo(self, repo_id: int) -> None:
        """Delete a repository and every row of it, in one transaction; the vectors its
        checkpoints used stay until collected (`Store.remove_repo` does both)."""
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
            self.db.execute(
                "DELETE FROM graph_links WHERE file_id IN (SELECT id FROM files WHERE repo_id = ?)",
                (repo_id,),
            )
            for table in ("checkpoints", "symbols", "summaries", "graph", "files"):
                self.db.execute(f"DELETE FROM {table} WHERE repo_id = ?", (repo_id,))
            self.db.execute("DELETE FROM repos WHERE id = ?", (repo_id,))
            self._text_changed()
