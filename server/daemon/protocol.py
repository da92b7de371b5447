"""The daemon's wire protocol: JSON lines over a Unix domain socket (the one place it lives).

Every message is one UTF-8 JSON object on one line. A connection is a conversation of
requests, each answered before the next is sent:

1. Handshake. The client sends `{"id": 0, "method": "hello", "params": {"protocol": P,
   "version": V, "settings": DIGEST}}`; the daemon answers `{"id": 0, "result": {"protocol",
   "version", "pid", "started_at", "settings", "held", "socket", "home"}}`. A client that
   finds another `version` or `protocol` does not trust the daemon (it asks it to stop and
   starts its own); another `settings_digest` (of `held_settings`: the home and the
   embedding model, device, precision the daemon holds; `held` spells them out) means the daemon
   cannot answer for this client, which works in-process instead and says why.
2. Requests: `{"id": N, "method": M, "params": {...}, "settings": {...}}`. Methods are the
   use cases of `UseCases` (`search`, `symbols`, `index`, ...) plus `daemon_info` and
   `shutdown`. `settings` (`request_settings`) carries the client's settings that only
   shape a request (search limits, context lines, fusion weights, token budget, Zoekt;
   walk and chunk options): the daemon answers with them, not with its own.
3. Answers: `{"id": N, "result": VALUE}` or `{"id": N, "error": {"code", "message",
   "hint", "details", "type"}}`. Before its answer, `index` streams events
   `{"id": N, "event": "progress", "data": Progress}` and `{"id": N, "event": "lock_wait",
   "data": PID}`.

Values are JSON with tags, so the client gets back the very records the service returned
(`encode` / `decode`): a dataclass of `RECORDS` is `{"$t": NAME, FIELD: ...}`, a tuple
`{"$tuple": [...]}`, an enum member `{"$enum": NAME, "value": V}`, and a plain dict with a
key starting with `$` is wrapped as `{"$dict": {...}}`. Decoding builds only the types named
in `RECORDS` (never a class named by the peer); an unknown type or enum value, a record's
wrong fields and a message nested deeper than `MAX_DEPTH` are a `ProtocolError`. Errors
come back as the same `CtxdError` subclass (`error_to_wire` / `error_from_wire`).

Invariants: pure functions over values plus two small socket helpers (`send`, `receive`);
imports nothing heavier than the record modules (no torch, no mcp).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import socket
from enum import Enum
from typing import Any

from ctxd.indexer import errors
from ctxd.indexer.chunk.options import ChunkOptions
from ctxd.indexer.errors import CtxdError
from ctxd.indexer.models import (
    FileFailure,
    IndexStats,
    LargeFile,
    NotEmbedded,
    Progress,
    RemovedFile,
    Skipped,
    SkipReason,
    WindowedFile,
)
from ctxd.indexer.store.location import redact_url
from ctxd.indexer.walk.options import WalkOptions
from ctxd.search import models
from ctxd.search.graph import models as graph_models
from ctxd.server.config import Settings
from ctxd.server.pages import LexicalPage, SearchPage
from ctxd.server.text_args import too_deep
from ctxd.server.version import package_version

PROTOCOL = 7
"""Bumped whenever a message or a method changes shape."""

MAX_LINE = 64 << 20
"""The longest message accepted (64 MiB: a big `file_content` plus JSON escaping)."""

MAX_DEPTH = 64
"""The deepest nesting of lists and objects a request's params or settings may have (the
records themselves need about ten levels): deeper is refused before it is decoded, so no
request can exhaust the daemon's stack."""


CTXD_VERSION = package_version()
"""The version a daemon announces and a client expects (module-level so that a test can
start a daemon that claims to be older)."""

RECORDS: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        models.LineMatch, models.Block, models.FileMatch, models.LexicalResult,
        models.SymbolItem, models.Copy, models.Hit, models.SymbolPage, models.Reference,
        models.References,
        models.FileContent, SearchPage, LexicalPage, FileFailure, Skipped,
        models.SearchOptions, WalkOptions, ChunkOptions, IndexStats, Progress, RemovedFile,
        NotEmbedded, LargeFile, WindowedFile,
        graph_models.GraphDef, graph_models.Usage, graph_models.Refs, graph_models.Edge,
        graph_models.Calls, graph_models.CallPaths, graph_models.ImpactItem,
        graph_models.Impact,
    )
}


def record_type(name: str) -> type[Any] | None:
    """The record class called `name`, or None when it is not a protocol record."""
    return RECORDS.get(name)
ENUMS: dict[str, type[Enum]] = {"MatchSource": models.MatchSource, "SkipReason": SkipReason}
ERRORS: dict[str, type[CtxdError]] = {
    name: obj for name, obj in vars(errors).items()
    if isinstance(obj, type) and issubclass(obj, CtxdError)
}


class ProtocolError(Exception):
    """The peer sent something that is not this protocol (or closed the connection)."""


def trusted(info: dict[str, Any]) -> bool:
    """Whether a daemon's handshake answer says it runs this very ctxd (version and
    protocol)."""
    return bool(info.get("version") == CTXD_VERSION and info.get("protocol") == PROTOCOL)


REQUEST_SECTIONS = ("search", "walk", "chunk")
"""Settings that only shape a request: they travel with it (`request_settings`)."""


def held_settings(settings: Settings) -> dict[str, Any]:
    """What a daemon holds for its whole life: its home, its store (the PostgreSQL URL
    without its password, '' for the home's SQLite file) and the loaded model's options."""
    e = settings.embedding
    return {"home": str(settings.home), "store": redact_url(settings.store.url),
            "model": e.model, "device": e.device,
            "precision": e.precision, "batch_size": e.batch_size, "threads": e.threads}


def settings_digest(settings: Settings) -> str:
    """A fingerprint of `held_settings`: a client and a daemon that agree on it share it."""
    return hashlib.sha256(repr(sorted(held_settings(settings).items())).encode()
                          ).hexdigest()[:16]


def held_difference(mine: Settings, daemon: dict[str, Any]) -> str:
    """How a daemon's `held` settings differ from `mine`, in words (`model a (daemon) vs b
    (here)`), or '' when they do not."""
    here = held_settings(mine)
    return ", ".join(f"{k} {daemon.get(k)!r} (daemon) vs {v!r} (here)"
                     for k, v in here.items() if daemon.get(k) != v)


def request_settings(settings: Settings) -> dict[str, Any]:
    """The settings that travel with each request (`REQUEST_SECTIONS`), encoded."""
    return {name: encode(getattr(settings, name)) for name in REQUEST_SECTIONS}


def apply_request_settings(settings: Settings, wire: Any) -> Settings:
    """`settings` with the sections a request carried (`request_settings`).

    Raises:
        ProtocolError: the request's settings are not the sections' records.
    """
    if not wire:
        return settings
    values = decode(wire)
    if not isinstance(values, dict) or set(values) - set(REQUEST_SECTIONS):
        raise ProtocolError("request settings must be the search, walk and chunk sections")
    for name, value in values.items():
        if type(value) is not type(getattr(settings, name)):
            raise ProtocolError(f"request settings: {name} is not a {name} section")
    return dataclasses.replace(settings, **values)


# -- values ---------------------------------------------------------------------------------


def encode(value: Any) -> Any:
    """A JSON-ready form of `value` that `decode` turns back into equal records."""
    if isinstance(value, Enum):  # before str: a StrEnum member is a str too
        return {"$enum": type(value).__name__, "value": value.value}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if record_type(name) is not type(value):
            raise TypeError(f"{name} is not a protocol record")
        out = {"$t": name}
        out.update({f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)})
        return out
    if isinstance(value, tuple):
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        body = {str(k): encode(v) for k, v in value.items()}
        return {"$dict": body} if any(str(k).startswith("$") for k in value) else body
    raise TypeError(f"cannot send a {type(value).__name__} to the daemon")


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Refuse a value nested deeper than `limit` lists and objects (checked without
    recursion: a value too deep for it is refused, not crashed on).

    Raises:
        ProtocolError: it is nested deeper.
    """
    if too_deep(value, limit):
        raise ProtocolError(f"nested deeper than {limit} levels")


def decode(value: Any) -> Any:
    """The inverse of `encode`. A record with fields its class does not have, or an enum
    value its enum lacks, is refused like an unknown type.

    Raises:
        ProtocolError: a tag names a type or value this side does not know, or a record's
            fields do not fit it.
    """
    try:
        return _decode(value)
    except (TypeError, ValueError, AttributeError) as exc:  # a tag over the wrong shape
        raise ProtocolError(f"cannot decode: {exc}") from None
    except RecursionError:
        raise ProtocolError("cannot decode: nested too deeply") from None


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$t" in value:
        cls = record_type(str(value["$t"]))
        if cls is None:
            raise ProtocolError(f"unknown record type {value['$t']!r}")
        try:
            return cls(**{k: _decode(v) for k, v in value.items() if k != "$t"})
        except TypeError as exc:  # a field the record does not have, or one missing
            raise ProtocolError(f"bad {value['$t']} record: {exc}") from None
    if "$tuple" in value:
        return tuple(_decode(v) for v in value["$tuple"])
    if "$enum" in value:
        enum = ENUMS.get(str(value["$enum"]))
        if enum is None:
            raise ProtocolError(f"unknown enum {value['$enum']!r}")
        try:
            return enum(value.get("value"))
        except ValueError:
            raise ProtocolError(f"{value.get('value')!r} is not a {value['$enum']} value "
                                f"(one of: {', '.join(str(m.value) for m in enum)})") from None
    if "$dict" in value:
        return {k: _decode(v) for k, v in value["$dict"].items()}
    return {k: _decode(v) for k, v in value.items()}


def error_to_wire(err: CtxdError) -> dict[str, Any]:
    try:
        details = encode(err.details)
    except TypeError:  # a value outside the protocol (a Path, ...): sent as its text
        details = json.loads(json.dumps(err.details, default=str))
    return {"code": err.code, "message": err.message, "hint": err.hint,
            "details": details, "type": type(err).__name__}


def error_from_wire(data: dict[str, Any]) -> CtxdError:
    """The same `CtxdError` subclass, message, hint and details the daemon raised."""
    cls = ERRORS.get(str(data.get("type")), CtxdError)
    err = cls(str(data.get("message", "")), hint=data.get("hint"),
              details=decode(data.get("details") or {}))
    if err.code != data.get("code") and isinstance(data.get("code"), str):
        err.code = data["code"]
    return err


# -- framing --------------------------------------------------------------------------------


def dumps(message: dict[str, Any]) -> bytes:
    """One JSON line. ASCII escapes keep it valid for any text, including the lone
    surrogates that stand for file-name bytes that are not UTF-8 (`json.loads` gives them
    back unchanged)."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(dumps(message))


class LineReader:
    """Reads whole JSON lines from a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buf = bytearray()

    def receive(self) -> dict[str, Any] | None:
        """The next message, or None when the peer closed the connection cleanly.

        Raises:
            ProtocolError: a line that is not a JSON object, too long, or a connection cut
                in the middle of a line.
        """
        while (msg := self.take()) is None:
            if not self.fill():
                return None
        return msg

    def take(self) -> dict[str, Any] | None:
        """The next whole message already read, or None (reads nothing from the socket).

        Raises:
            ProtocolError: a line that is not a JSON object, or one too long.
        """
        end = self._buf.find(b"\n")
        if end < 0:
            if len(self._buf) > MAX_LINE:
                raise ProtocolError("message too long")
            return None
        line = bytes(self._buf[:end])
        del self._buf[: end + 1]
        try:
            msg = json.loads(line)
        except ValueError as exc:
            raise ProtocolError(f"not a JSON line: {exc}") from None
        except RecursionError:  # the parser's own limit: a line nested thousands deep
            raise ProtocolError(f"a message nested deeper than {MAX_DEPTH} levels") from None
        if not isinstance(msg, dict):
            raise ProtocolError("a message must be a JSON object")
        return msg

    def fill(self) -> bool:
        """Read what the socket has (one `recv`); False when the peer closed it cleanly.

        Raises:
            ProtocolError: the connection closed in the middle of a message.
            OSError: the socket failed (or its time-out ran out).
        """
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            if self._buf:
                raise ProtocolError("connection closed in the middle of a message")
            return False
        self._buf += chunk
        return True
