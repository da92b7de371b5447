"""Where the index lives: `StoreOptions` (the `[store]` settings) and the URL's safe form.

Without a URL the index is the SQLite file `index.db` in the index home; with one
(`--store URL`, `CTXD_STORE_URL`, `[store] url`) it is a PostgreSQL database shared by a
team. `redact_url(url)` is the URL as ctxd ever shows it (status, logs, errors): the
password of the user-info part and any `password=` or `sslpassword=` parameter replaced
by `***`; every other parameter (`sslmode`, `sslrootcert`, `application_name`, ...) kept,
since they are passed through to libpq unchanged. `check_url(url)` says what is wrong
with one (a scheme other than PostgreSQL's, a `%` not followed by two hex digits), or
nothing, and never quotes a part of it.

Pure; imports no database driver (the CLI's start-up stays light).
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

SCHEMES = ("postgresql", "postgres")
VECTOR_TYPES = ("vector", "halfvec")


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """Where the index lives (`[store]`)."""

    url: str = field(default="", repr=False)
    """A PostgreSQL URL (`postgresql://user@host:5432/db?sslmode=verify-full`) or libpq
    `key=value` string; empty = the SQLite file in the index home."""
    vector_type: str = "vector"
    """The pgvector column type of a new store: `vector` (float32, the same answers as
    SQLite) or `halfvec` (float16: half the memory and disk for vectors and HNSW)."""
    pool_size: int = 8
    """Connections at most in this process's pool (PostgreSQL)."""

    @property
    def shared(self) -> bool:
        """Whether the index is a PostgreSQL store (possibly shared by several machines)."""
        return bool(self.url)


def this_host() -> str:
    """The name of this machine, as a shared store records who indexed a repository (and a
    laptop's watcher keeps to the repositories it indexed itself)."""
    return socket.gethostname()


SECRET_PARAMS = frozenset({"password", "sslpassword"})
"""libpq parameters whose value is a secret: never shown."""
_PASSWORD_KV = re.compile(r"(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)",
                          re.IGNORECASE)
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def is_url(text: str) -> bool:
    """Whether `text` is a `postgresql://` (or `postgres://`) URL rather than `key=value`."""
    return text.split("://", 1)[0].lower() in SCHEMES and "://" in text


def redact_url(url: str) -> str:
    """`url` with its password replaced by `***` (user-info and `password=` alike; any
    `scheme://` URL, even one that is not PostgreSQL's)."""
    if not url:
        return ""
    if "://" not in url:
        return _PASSWORD_KV.sub(lambda m: m.group(1) + "***", url)
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user, colon, password = userinfo.partition(":")
        if colon and password:
            userinfo = f"{user}:***"
        netloc = f"{userinfo}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() in SECRET_PARAMS for k, _v in pairs):
            query = urlencode([(k, "***" if k.lower() in SECRET_PARAMS else v)
                               for k, v in pairs], safe="/:*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The passwords written in `url` (user-info, `password=`, `sslpassword=`), to scrub
    them from a driver's message."""
    if "://" not in url:
        return [m.group(2).strip("'") for m in _PASSWORD_KV.finditer(url)]
    parts = urlsplit(url)
    found = [parts.password] if parts.password else []
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True)
              if k.lower() in SECRET_PARAMS and v]
    raw = parts.netloc.rsplit("@", 1)[0].partition(":")[2] if "@" in parts.netloc else ""
    return [*found, *([raw] if raw else [])]


def scrub(text: str, url: str) -> str:
    """`text` without the passwords of `url` (a driver's error may quote its input)."""
    for secret in url_secrets(url):
        for form in sorted({secret, unquote(secret)}, key=len, reverse=True):
            if form:
                text = text.replace(form, "***")
    return text.replace(url, redact_url(url)) if url else text


def check_url(url: str) -> str | None:
    """What is wrong with a store URL, or None (empty is fine: the SQLite file)."""
    if not url:
        return None
    if is_url(url):
        parts = urlsplit(url)
        if parts.scheme.lower() not in SCHEMES:
            return f"the scheme must be {' or '.join(SCHEMES)}"
        return _bad_percent(parts.netloc, parts.path, parts.query)
    if "=" in url and "://" not in url:
        return None  # a libpq key=value string: libpq judges it
    return ("expected a PostgreSQL URL such as postgresql://user@host:5432/ctxd "
            "(or a libpq key=value string)")


def _bad_percent(netloc: str, path: str, query: str) -> str | None:
    """Which part of a URL holds a `%` that is not followed by two hex digits (libpq
    refuses it, quoting the part: the password, maybe), named, never quoted."""
    userinfo, at, host = netloc.rpartition("@")
    user, _colon, password = userinfo.partition(":")
    parts = [("the user name", user), ("the password", password), ("the host", host if at
             else netloc), ("the database name", path)]
    for pair in query.split("&") if query else []:
        key, _eq, value = pair.partition("=")
        parts.append(("a parameter name", key))
        named = f"the value of {key}" if re.fullmatch(r"[a-z_]{1,40}", key) else "a value"
        parts.append((named, value))
    for what, text in parts:
        if _BAD_PERCENT.search(text):
            return (f"a PostgreSQL URL with {what} percent-encoded: a `%` there must be "
                    "followed by two hex digits (write a literal `%` as `%25`, `@` as "
                    "`%40`, `:` as `%3A`)")
    return None
