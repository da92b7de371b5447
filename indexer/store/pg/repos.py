"""The repositories of the PostgreSQL store (`PgRepoRows`): as `indexer.store.sqlite.repos`,
plus the machine that last indexed each one (`repos.host`, `RepoRow.host`), so that a laptop's
watcher keeps to the repositories checked out on that laptop.

A repository is its root path (`repos.root` is unique): a CI job that indexes from the same
path every time updates one repository. Its name is the folder's basename made unique with
`-2`, `-3`, ...; two machines creating the same name at once cannot both win (the unique
index): the loser takes the next suffix.
"""

from __future__ import annotations

import json
import os
from typing import Any

from psycopg import errors as pge

from ctxd.indexer.store.location import this_host
from ctxd.indexer.store.pg.connection import PgConnection, Row
from ctxd.indexer.store.records import RepoRow

_COLS = "id, name, root, options, created_at, indexed_at, index_started_at, host, root_id"


class PgRepoRows(PgConnection):
    """The `repos` table."""

    def _repo(self, row: Row | None) -> RepoRow | None:
        if row is None:
            return None
        return RepoRow(int(row[0]), str(row[1]), str(row[2]), json.loads(row[3]), str(row[4]),
                       row[5], row[6], str(row[7]), str(row[8]))

    def repos(self) -> list[RepoRow]:
        rows = self._rows(f"SELECT {_COLS} FROM repos ORDER BY name")
        return [r for r in (self._repo(row) for row in rows) if r is not None]

    def repo_by_root(self, root: str) -> RepoRow | None:
        return self._repo(self._one(f"SELECT {_COLS} FROM repos WHERE root = %s", (root,)))

    def repo_by_name(self, name: str) -> RepoRow | None:
        return self._repo(self._one(f"SELECT {_COLS} FROM repos WHERE name = %s", (name,)))

    def upsert_repo(self, root: str, options: dict[str, Any], now: str,
                    root_id: str = "") -> RepoRow:
        """Create the repository row for `root` (named after its folder) or update its
        options, recording this machine as the one indexing it (and the root folder's
        identity `root_id` on it, when given: `indexer.walk.rootpin`)."""
        base = os.path.basename(root.rstrip("/")) or "root"
        for _attempt in range(50):
            try:
                with self.transaction():
                    self._upsert(root, base, options, now, root_id)
                break
            except pge.UniqueViolation:  # another machine took the name meanwhile
                continue
        repo = self.repo_by_root(root)
        assert repo is not None
        return repo

    def _upsert(self, root: str, base: str, options: dict[str, Any], now: str,
                root_id: str) -> None:
        existing = self._one("SELECT id FROM repos WHERE root = %s", (root,))
        if existing is not None:
            self._rows("UPDATE repos SET options = %s, index_started_at = %s, host = %s, "
                       "root_id = CASE WHEN %s = '' AND host = %s THEN root_id ELSE %s END "
                       "WHERE id = %s", (json.dumps(options), now, this_host(), root_id,
                                         this_host(), root_id, existing[0]))
            return
        taken = {str(r[0]) for r in self._rows(
            "SELECT name FROM repos WHERE name = %s OR name LIKE %s",
            (base, base.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "-%"))}
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        self._rows(
            "INSERT INTO repos(name, root, options, created_at, index_started_at, host, "
            "root_id) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (name, root, json.dumps(options), now, now, this_host(), root_id))

    def mark_indexed(self, repo_id: int, now: str | None) -> None:
        """End a run: `indexed_at` becomes `now` (None: stays as it was)."""
        self._rows("UPDATE repos SET indexed_at = coalesce(%s, indexed_at), "
                   "index_started_at = NULL WHERE id = %s", (now, repo_id))

    def _delete_repo(self, repo_id: int) -> None:
        """Delete a repository and every row of it, in one transaction (its files' text,
        checkpoints, symbols and summaries go with the files)."""
        with self.transaction():
            for table in ("checkpoints", "symbols", "summaries", "keyword_stats",
                          "keyword_df"):
                self._rows(f"DELETE FROM {table} WHERE repo_id = %s", (repo_id,))
            self._rows("DELETE FROM files WHERE repo_id = %s", (repo_id,))
            self._rows("DELETE FROM repos WHERE id = %s", (repo_id,))
            self._text_changed()
