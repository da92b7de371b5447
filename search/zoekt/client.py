"""Zoekt as a lexical backend: a sync client for `zoekt-webserver`'s HTTP JSON API.

Provides `ZoektClient` (implements `search.models.LexicalBackend`, `name = "zoekt"`):
`search`, `symbols`, `search_filenames`, `file_content`, `list_repos` and `health`.
The contract it implements is docs/contracts/zoekt-api.md (section numbers below refer to it).
It only talks HTTP and keeps no state between calls, so one client may be shared by
threads. Query text is built by `search/zoekt/query.py`; answers are decoded by
`search/zoekt/decode.py`.

Transport: the standard library's `http.client`, one connection per call. It carries
no dependency (`httpx2` only arrives transitively with `mcp` and is a fork), ignores
`*_proxy` environment variables (a proxy must never see a request to a local Zoekt)
and lets the client enforce one deadline over connect + send + every read.

Invariants:
- Every `/api/search` request sends explicit `ChunkMatches`, `MaxDocDisplayCount`,
  `MaxMatchDisplayCount`, `ShardMaxMatchCount`, `TotalMaxMatchCount` and `MaxWallTime`
  (a little under the client timeout, so that Zoekt returns partial results before the
  socket gives up), never Zoekt's defaults. The match limits are the same on every page,
  so Zoekt's limit heuristic (§2.4) never changes the candidate set between pages.
- Paging (§7.6, there is no offset): page `offset..offset+n` asks for the first
  `offset+n` files and slices. Zoekt spends `MaxMatchDisplayCount` on files in rank
  order and drops the files after the budget is spent, so a common term can leave
  fewer files than asked although more match (`len(Files) < FileCount`); the client
  then asks again with a budget grown to fit, up to `match_display_cap`, and only when
  that cap still cuts does the result say so, naming that limit.
- A non-JSON answer is never parsed as a result: it is `BackendUnavailable` with the
  `-rpc` hint. HTTP 400 is `QueryError`; a socket time-out is `BackendTimeout`.
- Repository listing uses `POST /api/list`, never `type:repo` searches.
"""

from __future__ import annotations

import http.client
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ctxd.indexer.errors import (
    BackendTimeout,
    BackendUnavailable,
    FileNotFound,
    IndexNotFound,
    QueryError,
    ValidationError,
)
from ctxd.search.models import LexicalResult, SymbolItem
from ctxd.search.zoekt.decode import (
    ZoektRepo,
    as_int,
    decode_b64,
    display_text,
    display_units,
    parse_repo_list,
    parse_search_result,
    parse_symbols,
    pick_document,
)
from ctxd.search.zoekt.query import exact_file_query, normalize_query, query_error_hint

__all__ = ["ZoektClient"]

Json = dict[str, Any]

DEFAULT_TIMEOUT_MS = 30_000
MAX_MATCH_DISPLAY = 1_000
"""First `MaxMatchDisplayCount` of a search: matches (chunk ranges, or line fragments on a
line-mode server) per response; files past the budget are dropped (§2.2)."""
MATCH_DISPLAY_CAP = 20_000
"""The largest `MaxMatchDisplayCount` the client grows to when the budget cuts the files
a page needs (keeps one answer to a few MB)."""
SHARD_MAX_MATCHES = 100_000
"""`ShardMaxMatchCount`: Zoekt's own per-shard default, sent explicitly (§2.4, §7.6)."""
TOTAL_MAX_MATCHES = 1_000_000
"""`TotalMaxMatchCount`: no further shards are searched past this many matches."""
WHOLE_FILE_MAX_DOCS = 10
"""`MaxDocDisplayCount` of a whole-file fetch: one path, one document per distinct content."""
_EXCERPT = 200
_NOT_INDEXED = b"NOT-INDEXED: "
_RPC_HINT = (
    "Start zoekt-webserver with `-rpc` to enable the JSON API (/api/search, /api/list), "
    "and check that ZOEKT_URL points at it."
)
_UNAVAILABLE_HINT = "Start it, e.g. `zoekt-webserver -index ~/.zoekt -rpc`, or fix ZOEKT_URL."
_TIMEOUT_HINT = "Narrow the query with repo:, file: or lang:, or raise ZOEKT_TIMEOUT_MS."


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    content_type: str
    body: bytes

    @property
    def is_json(self) -> bool:
        return self.content_type.split(";")[0].strip().lower() == "application/json"

    def excerpt(self) -> str:
        text = display_text(self.body[:_EXCERPT]).strip()
        return text + ("..." if len(self.body) > _EXCERPT else "")

    def json(self) -> Any:
        return json.loads(self.body)


class ZoektClient:
    """Client of one `zoekt-webserver` started with `-rpc` (§1).

    Args:
        url: base URL, e.g. `http://localhost:6070` (a path prefix is kept).
        timeout_ms: deadline for each HTTP exchange (connect, send, whole answer).
        match_display: `MaxMatchDisplayCount` of a search's first request.
        match_display_cap: the most it grows to when it cuts the files of a page.
    """

    name = "zoekt"

    def __init__(
        self,
        url: str,
        *,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        match_display: int = MAX_MATCH_DISPLAY,
        match_display_cap: int = MATCH_DISPLAY_CAP,
    ) -> None:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValidationError(
                f"Invalid Zoekt URL {url!r}: expected http://HOST:PORT",
                hint="Set ZOEKT_URL, e.g. http://localhost:6070",
                details={"field": "zoekt_url", "value": url},
            )
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms <= 0:
            raise ValidationError(
                f"Invalid Zoekt timeout {timeout_ms!r}: expected a positive number of ms",
                hint="Set ZOEKT_TIMEOUT_MS, e.g. 30000",
                details={"field": "zoekt_timeout_ms", "value": timeout_ms},
            )
        self.url = url.strip().rstrip("/")
        self.timeout_ms = timeout_ms
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        try:
            self._port = parts.port
        except ValueError as exc:
            raise ValidationError(
                f"Invalid Zoekt URL {url!r}: {exc}", details={"field": "zoekt_url", "value": url}
            ) from exc
        self._prefix = parts.path.rstrip("/")
        self.match_display = max(match_display, 1)
        self.match_display_cap = max(match_display_cap, self.match_display)

    # ---- LexicalBackend --------------------------------------------------------------

    def search(
        self, query: str, *, max_files: int = 30, context_lines: int = 3, offset: int = 0
    ) -> LexicalResult:
        """Run a Zoekt query; files `offset..offset+max_files` in Zoekt's ranking, with
        context blocks; `file_count` counts every matching file.

        Raises:
            QueryError: Zoekt rejected the query (its message, plus a hint).
            BackendUnavailable: no server, no JSON API (`-rpc`), or a server error.
            BackendTimeout: no complete answer within `timeout_ms`.
        """
        text, context, want = normalize_query(query), max(context_lines, 0), offset + max_files
        budget = self.match_display
        while True:
            result = self._search_json(text, want, context, match_display=budget)
            grown = next_match_budget(result, want, budget, self.match_display_cap)
            if grown is None:
                break
            budget = grown
        return parse_search_result(result, max_files=max_files, offset=offset,
                                   match_display=budget)

    def symbols(self, query: str, *, max_files: int = 100) -> list[SymbolItem]:
        """Symbol definitions matching `query` (ctags data in the index, §7.3).

        A query without a `sym:` atom gets one on its first term (`Greet lang:go` ->
        `sym:Greet lang:go`). Kinds are ctags' names, unfiltered (the caller filters).
        """
        text = normalize_query(query)
        if "sym:" not in text:
            text = "sym:" + text
        return parse_symbols(self._search_json(text, max_files, 0))

    def search_filenames(self, pattern: str, *, max_files: int = 50) -> LexicalResult:
        """Files selected by `type:filename PATTERN` (path or content matches), paths only.

        Each `FileMatch` has no line matches: the whole path is the hit (§3.7).
        """
        text = "type:filename " + normalize_query(pattern)
        result = self._search_json(text.strip(), max_files, 0)
        return parse_search_result(result, max_files=max_files)

    # ---- files and repositories --------------------------------------------------------

    def file_content(self, repository: str, path: str, branch: str = "HEAD") -> str:
        """The whole text of `path` in `repository` (§7.1), decoded as UTF-8.

        Raises:
            FileNotFound: no such path (or not on `branch`, or not indexed as text).
            IndexNotFound: Zoekt has no repository of that name.
            BackendUnavailable / BackendTimeout: as for `search`.
        """
        opts = {
            "Whole": True,
            "ChunkMatches": True,
            "MaxDocDisplayCount": WHOLE_FILE_MAX_DOCS,
            "MaxWallTime": self._wall_time_ns(),
        }
        result = self._call_search({"Q": exact_file_query(repository, path), "Opts": opts})
        docs = [
            fm
            for fm in result.get("Files") or []
            if fm.get("Repository") == repository and fm.get("FileName") == path
        ]
        if not docs:
            raise self._not_found(repository, path)
        doc = pick_document(docs, branch, None)
        if doc is None and branch == "HEAD":
            doc = pick_document(docs, branch, self._default_branch(repository))
        if doc is None:
            on = sorted({b for d in docs for b in d.get("Branches") or ()})
            raise FileNotFound(
                f"File not found: {repository}/{path}",
                hint=f"It exists on branch(es) {', '.join(on)}, not on {branch!r}.",
                details={"repository": repository, "path": path, "branch": branch},
            )
        content = decode_b64(doc.get("Content"))  # no `Content` key = empty file (§10.24)
        if content.startswith(_NOT_INDEXED):
            reason = display_text(content[len(_NOT_INDEXED) :]).strip()
            raise FileNotFound(
                f"File content not indexed: {repository}/{path} ({reason})",
                hint="Zoekt keeps only text files under its size limit; read it from disk.",
                details={"repository": repository, "path": path, "reason": reason},
            )
        return content.decode("utf-8", "replace")

    def list_repos(self, query: str = "") -> list[ZoektRepo]:
        """Indexed repositories, sorted by name (`POST /api/list`, §4).

        Args:
            query: optional Zoekt query selecting repositories (`r:^github\\.com/org/`);
                "" lists all.
        """
        answer = self._post("/api/list", {"Q": normalize_query(query)})
        return parse_repo_list(self._unwrap(answer, "List", "/api/list"))

    def health(self) -> dict[str, object]:
        """`GET /healthz` plus the `/api/list` totals; never raises for a sick server.

        Returns `{"ok", "backend", "url", "repos", "documents", "shards", "index_bytes",
        "content_bytes", "crashes"}` when healthy, `{"ok": False, "backend", "url", "error",
        "hint"}` otherwise. `crashes > 0` means shards failed or are still loading.
        """
        base: dict[str, object] = {"ok": False, "backend": self.name, "url": self.url}
        try:
            answer = self._exchange("GET", "/healthz", None)
            if answer.status != 200:  # 500 "not ready: ..." while shards fail to load
                return base | {
                    "error": f"Zoekt at {self.url} is not healthy: HTTP {answer.status}: "
                    f"{answer.excerpt()}",
                    "hint": "Check the zoekt-webserver log and its -index directory.",
                }
            if not answer.is_json:
                return base | {
                    "error": f"{self.url}/healthz did not answer JSON: is this zoekt-webserver?",
                    "hint": _UNAVAILABLE_HINT,
                }
            listing = self._unwrap(self._post("/api/list", {"Q": ""}), "List", "/api/list")
        except (BackendUnavailable, BackendTimeout, QueryError) as exc:
            return base | {"error": exc.message, "hint": exc.hint or ""}
        stats = listing.get("Stats") or {}
        return base | {
            "ok": True,
            "repos": as_int(stats.get("Repos")),
            "documents": as_int(stats.get("Documents")),
            "shards": as_int(stats.get("Shards")),
            "index_bytes": as_int(stats.get("IndexBytes")),
            "content_bytes": as_int(stats.get("ContentBytes")),
            "crashes": as_int(listing.get("Crashes")),
        }

    # ---- internals ---------------------------------------------------------------------

    def _wall_time_ns(self) -> int:
        """Zoekt's own deadline: 90% of ours, so partial results arrive before we give up."""
        return max(self.timeout_ms * 9 // 10, 1) * 1_000_000

    def _search_json(
        self, query: str, max_files: int, context_lines: int, *, match_display: int | None = None
    ) -> Json:
        opts = {
            "ChunkMatches": True,
            "NumContextLines": context_lines,
            "MaxDocDisplayCount": max(max_files, 1),
            "MaxMatchDisplayCount": match_display or self.match_display,
            "ShardMaxMatchCount": SHARD_MAX_MATCHES,
            "TotalMaxMatchCount": TOTAL_MAX_MATCHES,
            "MaxWallTime": self._wall_time_ns(),
        }
        return self._call_search({"Q": query, "Opts": opts})

    def _call_search(self, request: Json) -> Json:
        return self._unwrap(self._post("/api/search", request), "Result", "/api/search")

    def _default_branch(self, repository: str) -> str | None:
        for repo in self.list_repos():
            if repo.name == repository:
                return repo.branches[0][0] if repo.branches else None
        return None

    def _not_found(self, repository: str, path: str) -> FileNotFound | IndexNotFound:
        names = [r.name for r in self.list_repos()]
        if repository not in names:
            shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
            return IndexNotFound(
                f"Repository not indexed: {repository}",
                hint=f"Indexed repositories: {shown}" if names else "Zoekt has no repositories.",
                details={"repository": repository},
            )
        return FileNotFound(
            f"File not found: {repository}/{path}",
            hint="Paths are case-sensitive and relative to the repository root.",
            details={"repository": repository, "path": path},
        )

    def _post(self, path: str, payload: Json) -> _Answer:
        return self._exchange("POST", path, json.dumps(payload).encode("utf-8"))

    def _unwrap(self, answer: _Answer, key: str, path: str) -> Json:
        """The `key` object of a JSON answer, or the error this answer stands for."""
        if not answer.is_json:
            raise BackendUnavailable(
                f"Zoekt at {self.url} did not answer {path} with JSON "
                f"(HTTP {answer.status}, {answer.content_type or 'no content type'}).",
                hint=_RPC_HINT,
                details={"url": self.url, "status": answer.status, "body": answer.excerpt()},
            )
        try:
            doc = answer.json()
        except ValueError as exc:
            raise BackendUnavailable(
                f"Zoekt at {self.url} sent invalid JSON for {path} (HTTP {answer.status}).",
                details={"url": self.url, "status": answer.status, "body": answer.excerpt()},
            ) from exc
        error = doc.get("Error") if isinstance(doc, dict) else None
        if answer.status == 400:
            message = str(error or answer.excerpt())
            raise QueryError(
                f"Query syntax error: {message}",
                hint=query_error_hint(message),
                details={"zoekt_error": message},
            )
        if answer.status >= 500 and error and "deadline exceeded" in str(error):
            raise self._timeout()
        if answer.status != 200 or not isinstance(doc, dict) or not isinstance(doc.get(key), dict):
            raise BackendUnavailable(
                f"Zoekt at {self.url} failed on {path}: HTTP {answer.status}: {answer.excerpt()}",
                hint="Check the zoekt-webserver log.",
                details={"url": self.url, "status": answer.status, "body": answer.excerpt()},
            )
        result: Json = doc[key]
        return result

    def _timeout(self) -> BackendTimeout:
        return BackendTimeout(
            f"Search timed out after {self.timeout_ms}ms. Try a more specific query.",
            hint=_TIMEOUT_HINT,
            details={"url": self.url, "timeout_ms": self.timeout_ms},
        )

    def _unavailable(self, reason: str) -> BackendUnavailable:
        return BackendUnavailable(
            f"Search backend unavailable at {self.url}. Ensure zoekt-webserver is running.",
            hint=_UNAVAILABLE_HINT,
            details={"url": self.url, "reason": reason},
        )

    def _exchange(self, method: str, path: str, body: bytes | None) -> _Answer:
        """One HTTP exchange under a single deadline; transport errors become ours."""
        timeout_s = self.timeout_ms / 1000
        deadline = time.monotonic() + timeout_s
        conn_type = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = conn_type(self._host, self._port, timeout=timeout_s)
        try:
            try:
                conn.connect()
            except TimeoutError as exc:  # nothing answered the SYN: unreachable, not slow
                raise self._unavailable(f"connect timed out: {exc}") from exc
            except OSError as exc:  # refused, DNS failure, no route, TLS handshake
                raise self._unavailable(str(exc)) from exc
            headers = {"Accept": "application/json", "User-Agent": "ctxd-zoekt-client"}
            if body is not None:
                headers["Content-Type"] = "application/json"
            try:
                conn.request(method, self._prefix + path, body=body, headers=headers)
                _set_timeout(conn, deadline)
                resp = conn.getresponse()
                data = _read_all(resp, conn, deadline)
            except TimeoutError as exc:
                raise self._timeout() from exc
            except (OSError, http.client.HTTPException) as exc:  # reset, not HTTP
                raise self._unavailable(f"{type(exc).__name__}: {exc}") from exc
            return _Answer(resp.status, resp.getheader("Content-Type") or "", data)
        finally:
            conn.close()


def _set_timeout(conn: http.client.HTTPConnection, deadline: float) -> None:
    """Give the socket what is left of the deadline (raises TimeoutError when none is)."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed")
    if conn.sock is not None:
        conn.sock.settimeout(left)


def _read_all(
    resp: http.client.HTTPResponse, conn: http.client.HTTPConnection, deadline: float
) -> bytes:
    parts: list[bytes] = []
    while True:
        _set_timeout(conn, deadline)
        part = resp.read(1 << 16)
        if not part:
            return b"".join(parts)
        parts.append(part)


def next_match_budget(result: Json, want: int, budget: int, cap: int) -> int | None:
    """A larger `MaxMatchDisplayCount` when `budget` was spent (Zoekt stops at exactly the
    budget, so a spent budget may have cut the matches, or the files, of the first `want`
    files), else None. Pure.

    The next budget scales the matches per file seen so far to `want` files (with a
    margin), at least doubles, and stops at `cap`.
    """
    if budget >= cap or display_units(result) < budget:
        return None
    shown = len(result.get("Files") or [])
    per_file = budget / max(shown, 1)
    return min(cap, max(budget * 2, int(per_file * want * 1.25) + 1))
