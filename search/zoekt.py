"""Zoekt as a lexical backend: a sync client for `zoekt-webserver`'s HTTP JSON API.

Provides `ZoektClient` (implements `search.models.LexicalBackend`, `name = "zoekt"`):
`search`, `symbols`, `search_filenames`, `file_content`, `list_repos` and `health`,
plus the query-escaping helpers (`escape_regex`, `quote_term`, `quote_literal`,
`literal_content_query`, `exact_file_query`) that `file_content` and `find_references`
use. The contract it implements is ../shared/zoekt-api.md (section numbers below refer
to it). Called by the service layer from worker threads; it only talks HTTP and keeps
no state between calls, so one client may be shared by threads.

Transport: the standard library's `http.client`, one connection per call. It carries
no dependency (`httpx2` only arrives transitively with `mcp` and is a fork), ignores
`*_proxy` environment variables (a proxy must never see a request to a local Zoekt)
and lets the client enforce one deadline over connect + send + every read.

Invariants:
- Every `/api/search` request sends explicit `ChunkMatches`, `MaxDocDisplayCount`,
  `MaxMatchDisplayCount` and `MaxWallTime` (a little under the client timeout, so that
  Zoekt returns partial results before the socket gives up), never Zoekt's defaults.
- Responses are decoded from the bytes Zoekt sends: base64 fields are decoded, line
  text drops its newline, columns are 1-based code points with an exclusive end
  (counted like Zoekt: one per invalid UTF-8 byte). Both `ChunkMatches` and the older
  `LineMatches` shape are read, so servers that ignore `ChunkMatches` still work.
- A non-JSON answer is never parsed as a result: it is `BackendUnavailable` with the
  `-rpc` hint. HTTP 400 is `QueryError`; a socket time-out is `BackendTimeout`.
- Repository listing uses `POST /api/list`, never `type:repo` searches.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import http.client
import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from indexer.errors import (
    BackendTimeout,
    BackendUnavailable,
    FileNotFound,
    IndexNotFound,
    QueryError,
    ValidationError,
)
from search.models import Block, FileMatch, LexicalResult, LineMatch, SymbolItem

__all__ = [
    "ZoektClient",
    "ZoektRepo",
    "completeness",
    "escape_regex",
    "exact_file_query",
    "literal_content_query",
    "normalize_query",
    "parse_repo_list",
    "parse_search_result",
    "parse_symbols",
    "pick_document",
    "query_error_hint",
    "quote_literal",
    "quote_term",
]

Json = dict[str, Any]

DEFAULT_TIMEOUT_MS = 30_000
MAX_MATCH_DISPLAY = 1_000
"""Cap on matches (chunk ranges) per response; files past the budget are dropped (§2.2)."""
WHOLE_FILE_MAX_DOCS = 10
"""`MaxDocDisplayCount` of a whole-file fetch: one path, one document per distinct content."""
_EXCERPT = 200
_NOT_INDEXED = b"NOT-INDEXED: "
_ZERO_TIME = "0001-01-01T00:00:00Z"
_FLUSH_REASONS = {1: "timer expired", 4: "maximum size reached"}
_RPC_HINT = (
    "Start zoekt-webserver with `-rpc` to enable the JSON API (/api/search, /api/list), "
    "and check that ZOEKT_URL points at it."
)
_UNAVAILABLE_HINT = "Start it, e.g. `zoekt-webserver -index ~/.zoekt -rpc`, or fix ZOEKT_URL."
_TIMEOUT_HINT = "Narrow the query with repo:, file: or lang:, or raise ZOEKT_TIMEOUT_MS."

# --------------------------------------------------------------------------------------
# Query text (§6.1, §6.6)
# --------------------------------------------------------------------------------------

_RE2_META = frozenset("\\.+*?()|[]{}^$")
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f", "\v": "\\v"}


def escape_regex(text: str) -> str:
    """An RE2 pattern matching exactly `text` (Go's `regexp.QuoteMeta`, §6.6).

    Control characters become their escapes (`\\n`, `\\t`, ...) so that the pattern
    never carries a raw newline, which Zoekt's tokenizer rejects.
    """
    out: list[str] = []
    for ch in text:
        if ch in _RE2_META:
            out.append("\\" + ch)
        else:
            out.append(_CONTROL.get(ch, ch))
    return "".join(out)


def quote_term(value: str) -> str:
    """Protect `value` from Zoekt's tokenizer: one token, passed to the regex unchanged.

    Wraps it in double quotes and escapes `\\` and `"` inside (§6.6). Put a field prefix
    in front: `"f:" + quote_term("^src/")`.
    """
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def quote_literal(text: str) -> str:
    """A quoted query token that matches `text` literally (no regex, no tokenizer traps).

    `quote_literal('a.b("x")')` is `"a\\\\.b\\\\(\\"x\\"\\\\)"`; prefix it with `c:` for a
    content-only search, `sym:` for a symbol name.
    """
    return quote_term(escape_regex(text))


def literal_content_query(text: str) -> str:
    """A query for the literal `text` in file contents only (paths excluded, §7.8)."""
    return "c:" + quote_literal(text)


def exact_file_query(repository: str, path: str) -> str:
    """The query that selects exactly one path of one repository, case-sensitively (§7.1).

    No `b:` atom: plain-directory repositories have no branches and any `b:` would
    exclude them; branches are chosen client-side from `FileMatch.Branches`.
    """
    repo_re = "^" + escape_regex(repository) + "$"
    path_re = "^" + escape_regex(path) + "$"
    return f"r:{quote_term(repo_re)} f:{quote_term(path_re)} case:yes"


def normalize_query(query: str) -> str:
    """Make user text safe for Zoekt's tokenizer: newlines become spaces, ends trimmed.

    A newline outside quotes is a parse error in Zoekt and a carriage return becomes
    part of a token (§6.1); everything else is passed through unchanged.
    """
    return query.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").strip()


def query_error_hint(message: str) -> str:
    """A next step for a Zoekt query parse error (after zoekt-mcp-tools-research §6)."""
    low = message.lower()
    if "missing query" in low:
        return "Pass a non-empty query, e.g. `lang:python def main` or `sym:Handler`."
    if "regexp" in low:
        return (
            "Terms are RE2 regular expressions: escape ( ) [ ] { } . * + ? | ^ $ \\ with a "
            'backslash (`foo\\(`), or quote them (`"foo\\\\("`). There is no /regex/ syntax '
            "and no look-around or back-references."
        )
    if "unknown" in low or "argument" in low or "meta field" in low:
        return (
            "Valid fields: repo: (r:), file: (f:), content: (c:), lang:, sym:, branch: (b:), "
            "case:yes|no|auto, type:filematch|filename|repo."
        )
    return (
        "Check quotes and parentheses: `(a or b)` needs spaces inside the parentheses, "
        "`or` needs a term on both sides, and a term starting with `-` must be quoted."
    )


# --------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ZoektRepo:
    """One repository in a Zoekt index, from `POST /api/list` (§4.2)."""

    name: str
    url: str | None
    """Web URL of the repository; None when Zoekt has none (plain directories)."""
    branches: tuple[tuple[str, str], ...]
    """(branch name, 7-character commit) pairs, default branch first; () for directories."""
    files: int
    """Indexed documents (`Stats.Documents`)."""
    content_bytes: int
    index_bytes: int | None
    has_symbols: bool
    """ctags was configured at index time (not proof that symbols were extracted)."""
    indexed_at: datetime | None
    """When the newest shard was written (`IndexMetadata.IndexTime`)."""
    latest_commit_date: datetime | None = None
    languages: tuple[str, ...] = ()
    shards: int = 1


# --------------------------------------------------------------------------------------
# Decoding (pure): JSON payloads -> records
# --------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\udc80-\udcff]")


def _b64(value: object) -> bytes:
    """Decode one of Zoekt's `[]byte` fields (`null`/missing -> b"")."""
    if not isinstance(value, str) or not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _text(data: bytes) -> str:
    """Bytes as display text, one U+FFFD per invalid byte (keeps Zoekt's column count)."""
    decoded = data.decode("utf-8", "surrogateescape")
    return _SURROGATE.sub("\ufffd", decoded) if not decoded.isascii() else decoded


def _column(line: bytes, byte_offset: int) -> int:
    """1-based code-point column of `byte_offset` in `line` (invalid bytes count one)."""
    return len(line[:byte_offset].decode("utf-8", "surrogateescape")) + 1


def _split_lines(data: bytes) -> list[bytes]:
    """Lines of `data` without their `\\n`; a final newline does not start a new line."""
    if not data:
        return []
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return lines


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line


def _int(value: object, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


class _FileLines:
    """Accumulates the lines of one file seen in a response: text, matched ranges."""

    def __init__(self) -> None:
        self.text: dict[int, str] = {}
        self.ranges: dict[int, set[tuple[int, int]]] = {}

    def add_line(self, number: int, raw: bytes) -> None:
        if number >= 1:
            self.text.setdefault(number, _text(_strip_cr(raw)))

    def add_range(self, number: int, raw: bytes, start: int, end: int) -> None:
        """Record bytes [start, end) of line `number` (offsets within `raw`) as a match."""
        line = _strip_cr(raw)
        end = min(end, len(line))
        if number < 1 or end <= start:
            return
        self.add_line(number, raw)
        self.ranges.setdefault(number, set()).add((_column(line, start), _column(line, end)))

    def matches(self) -> tuple[LineMatch, ...]:
        return tuple(
            LineMatch(line=n, text=self.text[n], ranges=tuple(sorted(self.ranges[n])))
            for n in sorted(self.ranges)
        )

    def blocks(self) -> tuple[Block, ...]:
        out: list[Block] = []
        run: list[int] = []
        for n in sorted(self.text):
            if run and n != run[-1] + 1:
                out.append(Block(run[0], tuple(self.text[i] for i in run)))
                run = []
            run.append(n)
        if run:
            out.append(Block(run[0], tuple(self.text[i] for i in run)))
        return tuple(out)


def _read_chunk(lines: _FileLines, chunk: Mapping[str, Any]) -> int:
    """Add one `ChunkMatch` (§3.5); returns its number of ranges (Zoekt's match unit)."""
    ranges = chunk.get("Ranges") or []
    if chunk.get("FileName"):
        return len(ranges)
    content = _b64(chunk.get("Content"))
    start = chunk.get("ContentStart") or {}
    base = _int(start.get("ByteOffset"))
    first_line = _int(start.get("LineNumber"), 1)
    raw_lines = _split_lines(content)
    starts: list[int] = []  # file byte offset of each content line
    offset = base
    for i, raw in enumerate(raw_lines):
        starts.append(offset)
        lines.add_line(first_line + i, raw)
        offset += len(raw) + 1
    for rng in ranges:
        lo = _int((rng.get("Start") or {}).get("ByteOffset"))
        hi = _int((rng.get("End") or {}).get("ByteOffset"))
        if hi <= lo:
            continue  # zero-length match (e.g. `^`): nothing to point at
        i = max(bisect.bisect_right(starts, lo) - 1, 0)
        while i < len(raw_lines) and starts[i] < hi:
            ls = starts[i]
            lines.add_range(first_line + i, raw_lines[i], max(lo - ls, 0), hi - ls)
            i += 1
    return len(ranges)


def _read_line_match(lines: _FileLines, lm: Mapping[str, Any]) -> None:
    """Add one line-mode `LineMatch` (§3.4) with its `Before`/`After` context."""
    if lm.get("FileName"):
        return
    number = _int(lm.get("LineNumber"))
    raw_line = _b64(lm.get("Line"))
    raw = raw_line[:-1] if raw_line.endswith(b"\n") else raw_line
    before = _split_lines(_b64(lm.get("Before")))
    for i, ctx in enumerate(before):
        lines.add_line(number - len(before) + i, ctx)
    lines.add_line(number, raw)
    for i, ctx in enumerate(_split_lines(_b64(lm.get("After")))):
        lines.add_line(number + 1 + i, ctx)
    for frag in lm.get("LineFragments") or []:
        start = _int(frag.get("LineOffset"))
        lines.add_range(number, raw, start, start + _int(frag.get("MatchLength")))


def _file_match(fm: Mapping[str, Any]) -> tuple[FileMatch, int]:
    """One `FileMatch` record and the number of Zoekt matches it carries."""
    lines = _FileLines()
    shown = 0
    for chunk in fm.get("ChunkMatches") or []:
        shown += _read_chunk(lines, chunk)
    for lm in fm.get("LineMatches") or []:
        _read_line_match(lines, lm)
        shown += 1
    record = FileMatch(
        repository=str(fm.get("Repository", "")),
        path=str(fm.get("FileName", "")),
        language=str(fm.get("Language") or ""),
        score=float(fm.get("Score") or 0.0),
        matches=lines.matches(),
        blocks=lines.blocks(),
        branches=tuple(str(b) for b in fm.get("Branches") or ()),
    )
    return record, shown


def completeness(
    result: Mapping[str, Any], *, shown_files: int, shown_matches: int, max_files: int | None
) -> tuple[bool, tuple[str, ...]]:
    """Whether a search result is partial, and why (§3.12). Pure."""
    notes: list[str] = []
    file_count = _int(result.get("FileCount"))
    match_count = _int(result.get("MatchCount"))
    if shown_files < file_count:
        limit = f" (limit {max_files})" if max_files else ""
        notes.append(f"Showing {shown_files} of {file_count} matching files{limit}.")
    elif shown_matches < match_count:
        notes.append(f"Showing {shown_matches} of {match_count} matches (match display limit).")
    skipped = _int(result.get("FilesSkipped"))
    if skipped:
        notes.append(
            f"Zoekt stopped early: {skipped} candidate files were not searched "
            "(match limit or deadline); counts are lower bounds."
        )
    shards = _int(result.get("ShardsSkipped"))
    if shards:
        notes.append(f"{shards} index shards were not searched: the search deadline expired.")
    crashes = _int(result.get("Crashes"))
    if crashes:
        notes.append(
            f"{crashes} index shards failed or are still loading; results may be incomplete."
        )
    flush = _FLUSH_REASONS.get(_int(result.get("FlushReason")))
    if flush:
        notes.append(f"Zoekt flushed results early ({flush}).")
    return bool(notes), tuple(notes)


def parse_search_result(
    payload: Mapping[str, Any], *, max_files: int | None = None
) -> LexicalResult:
    """Decode the `Result` object of `/api/search` (same shape as a `/healthz` answer). Pure.

    Files keep Zoekt's ranking; inside a file, matches and blocks are in line order.
    `max_files` only words the display-limit note.
    """
    files: list[FileMatch] = []
    shown_matches = 0
    for fm in payload.get("Files") or []:
        record, shown = _file_match(fm)
        files.append(record)
        shown_matches += shown
    partial, notes = completeness(
        payload, shown_files=len(files), shown_matches=shown_matches, max_files=max_files
    )
    return LexicalResult(
        files=files,
        match_count=_int(payload.get("MatchCount")),
        file_count=_int(payload.get("FileCount")),
        duration_ms=_int(payload.get("Duration")) / 1e6,
        partial=partial,
        notes=notes,
    )


def _symbol_item(sym: Mapping[str, Any], fm: Mapping[str, Any], line: int) -> SymbolItem:
    return SymbolItem(
        name=str(sym.get("Sym", "")),
        kind=str(sym.get("Kind", "")),
        repository=str(fm.get("Repository", "")),
        path=str(fm.get("FileName", "")),
        line=line,
        container=str(sym.get("Parent") or "") or None,
        language=str(fm.get("Language") or ""),
    )


def _chunk_symbols(chunk: Mapping[str, Any]) -> Iterable[tuple[Mapping[str, Any], int]]:
    """(symbol, line) pairs of one chunk; `SymbolInfo` is index-aligned for pure `sym:`."""
    ranges = chunk.get("Ranges") or []
    infos = chunk.get("SymbolInfo") or []
    if chunk.get("FileName") or not infos or not ranges:
        return []
    if len(infos) == len(ranges):
        pairs = zip(infos, ranges, strict=True)
        return [(s, _int(r["Start"].get("LineNumber"))) for s, r in pairs if s]
    # Mixed queries: no positional alignment (§3.5); attach each symbol to the
    # chunk's best line.
    best = _int(chunk.get("BestLineMatch")) or _int(ranges[0]["Start"].get("LineNumber"))
    return [(s, best) for s in infos if s]


def parse_symbols(payload: Mapping[str, Any]) -> list[SymbolItem]:
    """Symbol definitions of a `sym:` search result, files in Zoekt's order. Pure."""
    out: list[SymbolItem] = []
    for fm in payload.get("Files") or []:
        found: dict[tuple[str, int], SymbolItem] = {}
        for chunk in fm.get("ChunkMatches") or []:
            for sym, line in _chunk_symbols(chunk):
                found.setdefault((str(sym.get("Sym", "")), line), _symbol_item(sym, fm, line))
        for lm in fm.get("LineMatches") or []:
            line = _int(lm.get("LineNumber"))
            for frag in lm.get("LineFragments") or []:
                sym = frag.get("SymbolInfo")
                if sym and not lm.get("FileName"):
                    found.setdefault((str(sym.get("Sym", "")), line), _symbol_item(sym, fm, line))
        out.extend(sorted(found.values(), key=lambda s: (s.line, s.name)))
    return out


def _time(value: object) -> datetime | None:
    """An RFC 3339 time from Zoekt; None for the zero time or anything unparsable."""
    if not isinstance(value, str) or not value or value == _ZERO_TIME:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return None if parsed.year <= 1 else parsed


def _repo(entry: Mapping[str, Any]) -> ZoektRepo | None:
    repo = entry.get("Repository") or {}
    if not repo.get("Name") or repo.get("Tombstone"):
        return None
    meta = entry.get("IndexMetadata") or {}
    stats = entry.get("Stats") or {}
    branches = tuple(
        (str(b.get("Name", "")), str(b.get("Version") or "")[:7])
        for b in repo.get("Branches") or ()
    )
    index_bytes = stats.get("IndexBytes")
    return ZoektRepo(
        name=str(repo["Name"]),
        url=str(repo.get("URL") or "") or None,
        branches=branches,
        files=_int(stats.get("Documents")),
        content_bytes=_int(stats.get("ContentBytes")),
        index_bytes=index_bytes if isinstance(index_bytes, int) else None,
        has_symbols=bool(repo.get("HasSymbols")),
        indexed_at=_time(meta.get("IndexTime")),
        latest_commit_date=_time(repo.get("LatestCommitDate")),
        languages=tuple(sorted(k for k in (meta.get("LanguageMap") or {}) if k)),
        shards=_int(stats.get("Shards"), 1),
    )


def parse_repo_list(payload: Mapping[str, Any]) -> list[ZoektRepo]:
    """Repositories of a `/api/list` `List` object, sorted by name. Pure.

    Entries of `ReposMap` (only sent for `Opts.Field = 2`) carry no name and are not
    listed; tombstoned repositories are hidden from search and skipped as well.
    """
    repos = [r for r in (_repo(e) for e in payload.get("Repos") or []) if r is not None]
    return sorted(repos, key=lambda r: r.name)


def pick_document(
    candidates: Sequence[Mapping[str, Any]], branch: str, default_branch: str | None
) -> Mapping[str, Any] | None:
    """The document of a whole-file fetch that belongs to `branch` (§7.1 step 3). Pure.

    Plain-directory repositories have no branches: their single document is the file.
    `HEAD` is the repository's first branch (`default_branch`, from `/api/list`).
    """
    if len(candidates) == 1 and not candidates[0].get("Branches"):
        return candidates[0]
    wanted = {branch}
    if branch == "HEAD" and default_branch:
        wanted.add(default_branch)
    for doc in candidates:
        if wanted & set(doc.get("Branches") or ()):
            return doc
    return None


# --------------------------------------------------------------------------------------
# HTTP
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    content_type: str
    body: bytes

    @property
    def is_json(self) -> bool:
        return self.content_type.split(";")[0].strip().lower() == "application/json"

    def excerpt(self) -> str:
        text = _text(self.body[:_EXCERPT]).strip()
        return text + ("..." if len(self.body) > _EXCERPT else "")

    def json(self) -> Any:
        return json.loads(self.body)


class ZoektClient:
    """Client of one `zoekt-webserver` started with `-rpc` (§1).

    Args:
        url: base URL, e.g. `http://localhost:6070` (a path prefix is kept).
        timeout_ms: deadline for each HTTP exchange (connect, send, whole answer).
    """

    name = "zoekt"

    def __init__(self, url: str, *, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
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

    # ---- LexicalBackend --------------------------------------------------------------

    def search(self, query: str, *, max_files: int = 30, context_lines: int = 3) -> LexicalResult:
        """Run a Zoekt query; up to `max_files` files, best first, with context blocks.

        Raises:
            QueryError: Zoekt rejected the query (its message, plus a hint).
            BackendUnavailable: no server, no JSON API (`-rpc`), or a server error.
            BackendTimeout: no complete answer within `timeout_ms`.
        """
        result = self._search_json(normalize_query(query), max_files, max(context_lines, 0))
        return parse_search_result(result, max_files=max_files)

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
        content = _b64(doc.get("Content"))  # no `Content` key = empty file (§10.24)
        if content.startswith(_NOT_INDEXED):
            reason = _text(content[len(_NOT_INDEXED) :]).strip()
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
            "repos": _int(stats.get("Repos")),
            "documents": _int(stats.get("Documents")),
            "shards": _int(stats.get("Shards")),
            "index_bytes": _int(stats.get("IndexBytes")),
            "content_bytes": _int(stats.get("ContentBytes")),
            "crashes": _int(listing.get("Crashes")),
        }

    # ---- internals ---------------------------------------------------------------------

    def _wall_time_ns(self) -> int:
        """Zoekt's own deadline: 90% of ours, so partial results arrive before we give up."""
        return max(self.timeout_ms * 9 // 10, 1) * 1_000_000

    def _search_json(self, query: str, max_files: int, context_lines: int) -> Json:
        opts = {
            "ChunkMatches": True,
            "NumContextLines": context_lines,
            "MaxDocDisplayCount": max(max_files, 1),
            "MaxMatchDisplayCount": MAX_MATCH_DISPLAY,
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
