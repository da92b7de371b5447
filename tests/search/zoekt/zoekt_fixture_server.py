"""Local HTTP servers that stand in for `zoekt-webserver` in the Zoekt client tests.

`FixtureServer` replays the real exchanges recorded in ../shared/zoekt-fixtures/responses
(see its README) on 127.0.0.1. A request is answered with a recording only when a real
Zoekt would have given that answer to *this* request:

- method and path match exactly (`/api/search/`, `PUT`, ... are refused);
- the body is a JSON object using Zoekt's exact key spelling (Zoekt ignores unknown
  keys, so a misspelled option would be a silent no-op against a real server: here it
  is refused), and it carries the options our client promises to send
  (`ChunkMatches: true`, positive `MaxWallTime` and `MaxDocDisplayCount`);
- `Q` equals the recorded query (or an alias a test declared equivalent);
- options that shape the answer agree: `NumContextLines`, `Whole`, `Opts.Field`; a display
  limit that was recorded must be equal; one that was not recorded is applied to the
  recorded answer as Zoekt applies it (`display_limited`: the first `MaxDocDisplayCount`
  files, then `MaxMatchDisplayCount` matches spent in rank order, index/limit.go), which is
  exact for recordings made without display limits; a cut inside a multi-range chunk
  (which trims its `Content`) is refused. The match limits (`ShardMaxMatchCount`,
  `TotalMaxMatchCount`) must not be below the recorded `MatchCount` (the recordings do not
  hit them). Error recordings (HTTP 4xx) depend on `Q` only.

Recordings made without `ChunkMatches` (line mode) are served to our chunk-mode requests
as a server from before 2022-07 would answer (it ignores the option): the client reads
both shapes. Anything else is answered `418` with the reason, and the reason is kept in
`problems` so that a test fails on it. `serve_next(path, name)` makes the next request
to `path` get a named recording whatever its query (for error answers that no correct
request can produce, like the 405 of a GET).

`StaticServer` answers with fixed responses (HTML catch-all, 404, 500), optionally per path;
`StallingServer` holds every request until its `release` event is set (time-outs).
`closed_port()` yields a port on which nothing listens.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

SEARCH_KEYS = frozenset({"Q", "Opts", "RepoIDs"})
SEARCH_OPTS = frozenset(
    {
        "EstimateDocCount",
        "Whole",
        "ShardMaxMatchCount",
        "TotalMaxMatchCount",
        "ShardRepoMaxMatchCount",
        "MaxWallTime",
        "FlushWallTime",
        "MaxDocDisplayCount",
        "MaxMatchDisplayCount",
        "NumContextLines",
        "ChunkMatches",
        "UseBM25Scoring",
        "Trace",
        "DebugScore",
        "SpanContext",
    }
)
"""Every `SearchOptions` field of the recorded Zoekt version (zoekt-api.md §2.2)."""
CLIENT_OPTS = frozenset(
    {"ChunkMatches", "NumContextLines", "MaxDocDisplayCount", "MaxMatchDisplayCount"}
    | {"MaxWallTime", "Whole", "ShardMaxMatchCount", "TotalMaxMatchCount"}
)
"""The options our client may send; the others change results and are not recorded."""
LIST_KEYS = frozenset({"Q", "Opts"})
LIST_OPTS = frozenset({"Field"})

Reply = tuple[int, str, bytes]


@dataclass(frozen=True, slots=True)
class Exchange:
    """One recorded request/response pair."""

    name: str
    method: str
    path: str
    body: str | None
    status: int
    content_type: str
    response: str

    @property
    def request_json(self) -> dict[str, Any]:
        if self.body is None:
            return {}
        try:
            doc = json.loads(self.body)
        except ValueError:
            return {}
        return doc if isinstance(doc, dict) else {}

    @property
    def response_json(self) -> Any:
        return json.loads(self.response)

    def reply(self) -> Reply:
        return self.status, self.content_type, self.response.encode("utf-8")


def load_exchanges(directory: Path) -> dict[str, Exchange]:
    """Every `*.json` recording of `directory`, by name."""
    out: dict[str, Exchange] = {}
    for path in sorted(directory.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        req = doc["request"]
        out[doc["name"]] = Exchange(
            name=doc["name"],
            method=req["method"],
            path=req["path"],
            body=req.get("body"),
            status=doc["status"],
            content_type=doc["content_type"],
            response=doc["body"],
        )
    return out


@dataclass(frozen=True, slots=True)
class Received:
    """A request as the server saw it, and the recording it got (None: refused)."""

    method: str
    path: str
    body: bytes
    served: str | None

    @property
    def json(self) -> Any:
        return json.loads(self.body)


# --------------------------------------------------------------------------------------
# Matching (pure)
# --------------------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def contract_problems(path: str, doc: object) -> list[str]:
    """What is wrong with a client request body, judged by Zoekt's types and our promises."""
    if not isinstance(doc, dict):
        return ["body is not a JSON object"]
    if not isinstance(doc.get("Q"), str):
        return ["Q is missing or not a string"]
    search = path == "/api/search"
    keys, opt_names = (SEARCH_KEYS, SEARCH_OPTS) if search else (LIST_KEYS, LIST_OPTS)
    problems = [f"unknown key {k!r}" for k in doc if k not in keys]
    opts = doc.get("Opts", {})
    if not isinstance(opts, dict):
        return [*problems, "Opts is not an object"]
    problems += [f"unknown option {k!r} (Zoekt ignores it)" for k in opts if k not in opt_names]
    if not search:
        return problems
    if "RepoIDs" in doc:
        problems.append("RepoIDs is not sent by our client")
    problems += [
        f"option {k!r} is not sent by our client" for k in opts if k in SEARCH_OPTS - CLIENT_OPTS
    ]
    if opts.get("ChunkMatches") is not True:
        problems.append("ChunkMatches must be true")
    for name in ("MaxWallTime", "MaxDocDisplayCount"):
        if not _is_int(opts.get(name)) or opts[name] <= 0:
            problems.append(f"{name} must be a positive integer")
    for name in ("MaxMatchDisplayCount", "ShardMaxMatchCount", "TotalMaxMatchCount"):
        if name in opts and (not _is_int(opts[name]) or opts[name] <= 0):
            problems.append(f"{name} must be a positive integer")
    ctx = opts.get("NumContextLines", 0)
    if not _is_int(ctx) or ctx < 0:
        problems.append("NumContextLines must be a non-negative integer")
    return problems


def _search_mismatch(recorded: Exchange, opts: Mapping[str, Any]) -> str | None:
    """Why `recorded` is not the answer to a search with `opts` (None: it is, after
    `display_limited`)."""
    ropts = recorded.request_json.get("Opts") or {}
    for name, default in (("NumContextLines", 0), ("Whole", False)):
        if opts.get(name, default) != ropts.get(name, default):
            return f"{name} {opts.get(name, default)!r} != recorded {ropts.get(name, default)!r}"
    result = recorded.response_json.get("Result") or {}
    for name in ("ShardMaxMatchCount", "TotalMaxMatchCount"):
        if name in opts and opts[name] < result.get("MatchCount", 0):
            return f"{name} {opts[name]} is below the recorded MatchCount"
    for name in ("MaxDocDisplayCount", "MaxMatchDisplayCount"):
        if name in ropts and opts.get(name) != ropts[name]:
            return f"{name} {opts.get(name)!r} != recorded {ropts[name]!r}"
    try:
        display_limited(result, ropts, opts)
    except ValueError as exc:
        return str(exc)
    return None


def display_units(fm: Mapping[str, Any]) -> int:
    """What `MaxMatchDisplayCount` counts in one file: chunk ranges or line fragments."""
    return sum(len(c["Ranges"]) for c in fm.get("ChunkMatches") or []) + sum(
        len(lm["LineFragments"]) for lm in fm.get("LineMatches") or []
    )


def display_limited(
    result: Mapping[str, Any], recorded_opts: Mapping[str, Any], opts: Mapping[str, Any]
) -> dict[str, Any]:
    """The recorded `Result` as Zoekt would answer it under `opts`' display limits that the
    recording was made without (zoekt-api.md §2.2; Zoekt's index/limit.go): keep the first
    `MaxDocDisplayCount` files; then spend `MaxMatchDisplayCount` on the files in rank
    order and their matches in the order given (line fragments in line mode, ranges in
    chunk mode), trimming the file where it runs out and dropping the files after it.
    Stats (`FileCount`, `MatchCount`, ...) describe the search before truncation and stay.

    Raises:
        ValueError: the budget runs out inside a chunk with several ranges (Zoekt would
            trim its `Content`; not reproduced here).
    """
    out = json.loads(json.dumps(result))
    files = list(out.get("Files") or [])
    docs = opts.get("MaxDocDisplayCount") if "MaxDocDisplayCount" not in recorded_opts else None
    if docs and len(files) > docs:
        files = files[:docs]
    left = opts.get("MaxMatchDisplayCount") if "MaxMatchDisplayCount" not in recorded_opts else None
    if left:
        kept = []
        for fm in files:
            kept.append(fm)
            if display_units(fm) < left:
                left -= display_units(fm)
                continue
            for key, unit in (("LineMatches", "LineFragments"), ("ChunkMatches", "Ranges")):
                items = []
                for item in fm.get(key) or []:
                    items.append(item)
                    if len(item[unit]) >= left:
                        if unit == "Ranges" and len(item[unit]) > left:
                            raise ValueError("the match budget would cut inside a chunk")
                        item[unit] = item[unit][:left]
                        left = 0
                        break
                    left -= len(item[unit])
                if key in fm:
                    fm[key] = items
                if left == 0:
                    break
            break
        files = kept
    if out.get("Files") is not None:
        out["Files"] = files
    return out


def choose(
    exchanges: Mapping[str, Exchange],
    aliases: Mapping[str, Sequence[str]],
    method: str,
    path: str,
    body: bytes,
) -> tuple[Exchange | None, str]:
    """The recording that answers this request, or None and the reason."""
    same_route = [e for e in exchanges.values() if e.method == method and e.path == path]
    if not same_route:
        return None, f"no recording for {method} {path}"
    if method != "POST":
        plain = [e for e in same_route if e.body is None]
        if body or not plain:
            return None, f"unexpected body for {method} {path}"
        return plain[0], ""
    try:
        doc = json.loads(body)
    except ValueError:
        return None, f"body is not JSON: {body[:80]!r}"
    problems = contract_problems(path, doc)
    if problems:
        return None, "; ".join(problems)
    query, opts = doc["Q"], doc.get("Opts") or {}
    same_q = [
        e
        for e in same_route
        if e.request_json.get("Q") == query or query in aliases.get(e.name, ())
    ]
    if not same_q:
        return None, f"no recording of {path} for Q={query!r}"
    # A recording made with the very display limits asked for beats one derived by
    # `display_limited` from a recording made without them.
    same_q.sort(key=lambda e: -sum(
        name in (e.request_json.get("Opts") or {})
        for name in ("MaxDocDisplayCount", "MaxMatchDisplayCount")
    ))
    reasons = []
    for rec in same_q:
        if rec.status != 200:
            return rec, ""  # parse errors depend on Q alone
        if path == "/api/list":
            ropts = rec.request_json.get("Opts") or {}
            why = None if opts.get("Field", 0) == ropts.get("Field", 0) else "Field differs"
        else:
            why = _search_mismatch(rec, opts)
        if why is None:
            return rec, ""
        reasons.append(f"{rec.name}: {why}")
    return None, f"recordings for Q={query!r} do not fit: " + "; ".join(reasons)


# --------------------------------------------------------------------------------------
# Servers
# --------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, ctype, payload = self.server.app(self.command, self.path, body)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        try:
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first (the timeout tests): nothing to answer

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _answer

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request log lines on stderr."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, app: Callable[[str, str, bytes], Reply]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.app = app


class _Running:
    """Start/stop of one local server on a free port, as a context manager."""

    def __init__(self) -> None:
        self._httpd = _HTTPServer(self.app)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)

    def app(self, method: str, path: str, body: bytes) -> Reply:
        raise NotImplementedError

    @property
    def url(self) -> str:
        port = self._httpd.server_address[1]
        return f"http://127.0.0.1:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FixtureServer(_Running):
    """Replays recorded Zoekt exchanges; refuses (418) and records any unfaithful request."""

    def __init__(
        self,
        exchanges: Mapping[str, Exchange],
        *,
        aliases: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.exchanges = dict(exchanges)
        self.aliases = {k: tuple(v) for k, v in (aliases or {}).items()}
        self.requests: list[Received] = []
        self.problems: list[str] = []
        self._forced: dict[str, deque[str]] = {}
        self._lock = threading.Lock()
        super().__init__()

    def serve_next(self, path: str, name: str) -> None:
        """Answer the next well-formed request to `path` with recording `name`."""
        with self._lock:
            self._forced.setdefault(path, deque()).append(name)

    def app(self, method: str, path: str, body: bytes) -> Reply:
        with self._lock:
            forced = self._forced.get(path)
            name = forced.popleft() if forced else None
        if name is not None:
            rec: Exchange | None = self.exchanges[name]
            why = ""
            if method == "POST":
                try:
                    problems = contract_problems(path, json.loads(body))
                except ValueError:
                    problems = ["body is not JSON"]
                if problems:
                    rec, why = None, "; ".join(problems)
        else:
            rec, why = choose(self.exchanges, self.aliases, method, path, body)
        with self._lock:
            self.requests.append(Received(method, path, body, rec.name if rec else None))
            if rec is None:
                self.problems.append(f"{method} {path}: {why}")
        if rec is None:
            return 418, "text/plain; charset=utf-8", f"fixture server: {why}\n".encode()
        if method == "POST" and path == "/api/search" and rec.status == 200:
            result = rec.response_json["Result"]
            limited = display_limited(result, rec.request_json.get("Opts") or {},
                                      json.loads(body).get("Opts") or {})
            if limited != result:
                payload = json.dumps({"Result": limited}, separators=(",", ":")) + "\n"
                return rec.status, rec.content_type, payload.encode("utf-8")
        return rec.reply()

    def served(self) -> list[str]:
        return [r.served or "<refused>" for r in self.requests]


class StaticServer(_Running):
    """Answers with fixed responses: `routes[path]` if present, else `status`/`body`."""

    def __init__(
        self,
        status: int,
        content_type: str,
        body: str,
        *,
        routes: Mapping[str, Reply] | None = None,
    ) -> None:
        self.reply: Reply = (status, content_type, body.encode("utf-8"))
        self.routes = dict(routes or {})
        self.requests: list[tuple[str, str]] = []
        super().__init__()

    def app(self, method: str, path: str, body: bytes) -> Reply:
        self.requests.append((method, path))
        return self.routes.get(path, self.reply)


class StallingServer(_Running):
    """Holds each request until `release` is set (at most `cap_s`), then answers 200."""

    def __init__(self, cap_s: float = 30.0) -> None:
        self.release = threading.Event()
        self.arrived = threading.Event()
        self._cap_s = cap_s
        super().__init__()

    def app(self, method: str, path: str, body: bytes) -> Reply:
        self.arrived.set()
        self.release.wait(self._cap_s)
        return 200, "application/json", b'{"Result": {"Files": null}}'

    def stop(self) -> None:
        self.release.set()
        super().stop()


@contextmanager
def closed_port() -> Iterator[int]:
    """A local port that is bound (so nobody else takes it) but not listening."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
    finally:
        sock.close()


__all__ = [
    "Exchange",
    "FixtureServer",
    "Received",
    "StallingServer",
    "StaticServer",
    "choose",
    "closed_port",
    "contract_problems",
    "load_exchanges",
]
