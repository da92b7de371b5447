"""How PostgreSQL's failures reach people: `translated(exc, url)` turns a psycopg error into
ctxd's own, with the URL's password scrubbed from every message.

- the server cannot be reached, refuses the login, or the pool waited too long ->
  `BackendUnavailable` (naming the store without its password, and what to check);
- the role may not write (a read-only role, a read-only transaction or server) ->
  `StorageError` of kind `read_only`: searching works, indexing needs a role that may write;
- the server's disk is full -> `StorageError` of kind `disk_full`;
- a statement cancelled by `statement_timeout` -> `BackendTimeout`;
- anything else -> None (a bug: the caller lets it go up as it is).

`pg_errors(url)` is the context manager the store's methods and locks run in. `conninfo(url)`
is libpq's reading of a store URL; one it cannot read (an unknown parameter, a bad `%` escape,
an unterminated quote) is a `ConfigError` that names `store.url` and quotes none of its
values (libpq's message quotes the token it choked on: the password, maybe).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg_pool
from psycopg import errors as pge
from psycopg.conninfo import conninfo_to_dict

from ctxd.indexer.errors import (
    BackendTimeout,
    BackendUnavailable,
    ConfigError,
    CtxdError,
    StorageError,
)
from ctxd.indexer.store.location import redact_url, scrub, url_secrets

_QUOTED = re.compile(r'"([^"]*)"')
_KEYWORD = re.compile(r"[a-z_]{1,40}")


def conninfo(url: str) -> dict[str, Any]:
    """libpq's parameters of the store `url` (`psycopg.conninfo.conninfo_to_dict`).

    Raises:
        ConfigError: libpq cannot read it; the message is libpq's with every quoted
            token that is not a parameter's name shown as `***`.
    """
    try:
        return conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        secrets = set(url_secrets(url))

        def shown(m: re.Match[str]) -> str:
            token = m.group(1)
            keep = _KEYWORD.fullmatch(token) is not None and token not in secrets
            return m.group(0) if keep else '"***"'

        why = scrub(_QUOTED.sub(shown, str(exc).strip()), url)
        where = redact_url(url)
        raise ConfigError(
            f"invalid value for store.url: {where!r}: {why}",
            hint="Fix the store URL (--store, CTXD_STORE_URL or [store] url): percent-encode "
            "the user and password (`%` as `%25`, `@` as `%40`) and use only libpq's "
            "parameters (host, port, dbname, user, sslmode, sslrootcert, "
            "application_name, ...).",
            details={"field": "store.url", "value": where}) from None


def translated(exc: BaseException, url: str) -> CtxdError | None:
    """ctxd's error for a psycopg failure on the store at `url`, or None."""
    where = redact_url(url)
    text = scrub(str(exc).strip(), url)
    if isinstance(exc, pge.InsufficientPrivilege | pge.ReadOnlySqlTransaction):
        return StorageError(
            f"the team store {where} refuses to write for this database role: {text}",
            hint="This role can search but not index. Index with a role that may write "
            "(e.g. from the CI job that owns the store), or ask the store's owner for "
            "INSERT/UPDATE/DELETE on ctxd's tables.",
            details={"kind": "read_only", "store": where})
    if isinstance(exc, pge.DiskFull):
        return StorageError(
            f"the team store {where} is out of disk space: {text}",
            hint="Free space on the database server (or grow its volume), then run the same "
            "command again: the store is consistent and the next run completes it.",
            details={"kind": "disk_full", "store": where})
    if isinstance(exc, pge.QueryCanceled):
        return BackendTimeout(f"the team store {where} cancelled a statement: {text}",
                              hint="Retry; if it persists, raise the role's statement_timeout.",
                              details={"store": where})
    if isinstance(exc, psycopg_pool.PoolTimeout | psycopg.OperationalError):
        return BackendUnavailable(
            f"cannot reach the team store {where}: {text}",
            hint="Check that the server is up and reachable from here, the user, password "
            "(PGPASSWORD or ~/.pgpass) and TLS settings (sslmode, sslrootcert) of "
            "CTXD_STORE_URL; unset it to use the local index instead.",
            details={"store": where})
    return None


@contextmanager
def pg_errors(url: str) -> Iterator[None]:
    """Raise ctxd's error for a psycopg failure on the store at `url` (see the module)."""
    try:
        yield
    except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
        err = translated(exc, url)
        if err is None:
            raise
        raise err from None
