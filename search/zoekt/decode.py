"""Decoding Zoekt's JSON answers into ctxd records: pure functions over parsed JSON.

Provides `parse_search_result` (`/api/search` `Result` -> `LexicalResult`),
`parse_symbols` (a `sym:` result -> `SymbolItem`s), `parse_repo_list` (`/api/list`
`List` -> `ZoektRepo`s, the record defined here), `completeness` (whether a result is
partial, and why) and `pick_document` (the branch's document of a whole-file fetch),
plus the field readers `decode_b64`, `display_text` and `as_int` that the client
shares. Section numbers refer to docs/contracts/zoekt-api.md. Pure: recorded answers decode the
same.

Invariants:
- No I/O; malformed or missing fields decode to empty values, never raise.
- Decoded from the bytes Zoekt sends: base64 fields are decoded, line text drops its
  newline (and a trailing carriage return), columns are 1-based code points with an
  exclusive end, counted like Zoekt: one per invalid UTF-8 byte (shown as U+FFFD).
- Both `ChunkMatches` and the older `LineMatches` shape are read; `FileName`
  pseudo-matches add no line matches. Files keep Zoekt's ranking.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ctxd.search.models import Block, FileMatch, LexicalResult, LineMatch, SymbolItem

__all__ = [
    "ZoektRepo",
    "as_int",
    "completeness",
    "decode_b64",
    "display_text",
    "display_units",
    "parse_repo_list",
    "parse_search_result",
    "parse_symbols",
    "pick_document",
]

_ZERO_TIME = "0001-01-01T00:00:00Z"
_FLUSH_REASONS = {1: "timer expired", 4: "maximum size reached"}

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


def decode_b64(value: object) -> bytes:
    """Decode one of Zoekt's `[]byte` fields (`null`/missing -> b"")."""
    if not isinstance(value, str) or not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def display_text(data: bytes) -> str:
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


def as_int(value: object, default: int = 0) -> int:
    """An integer JSON field, or `default` when it is missing or not an integer."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


class _FileLines:
    """Accumulates the lines of one file seen in a response: text, matched ranges."""

    def __init__(self) -> None:
        self.text: dict[int, str] = {}
        self.ranges: dict[int, set[tuple[int, int]]] = {}

    def add_line(self, number: int, raw: bytes) -> None:
        if number >= 1:
            self.text.setdefault(number, display_text(_strip_cr(raw)))

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
    content = decode_b64(chunk.get("Content"))
    start = chunk.get("ContentStart") or {}
    base = as_int(start.get("ByteOffset"))
    first_line = as_int(start.get("LineNumber"), 1)
    raw_lines = _split_lines(content)
    starts: list[int] = []  # file byte offset of each content line
    offset = base
    for i, raw in enumerate(raw_lines):
        starts.append(offset)
        lines.add_line(first_line + i, raw)
        offset += len(raw) + 1
    for rng in ranges:
        lo = as_int((rng.get("Start") or {}).get("ByteOffset"))
        hi = as_int((rng.get("End") or {}).get("ByteOffset"))
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
    number = as_int(lm.get("LineNumber"))
    raw_line = decode_b64(lm.get("Line"))
    raw = raw_line[:-1] if raw_line.endswith(b"\n") else raw_line
    before = _split_lines(decode_b64(lm.get("Before")))
    for i, ctx in enumerate(before):
        lines.add_line(number - len(before) + i, ctx)
    lines.add_line(number, raw)
    for i, ctx in enumerate(_split_lines(decode_b64(lm.get("After")))):
        lines.add_line(number + 1 + i, ctx)
    for frag in lm.get("LineFragments") or []:
        start = as_int(frag.get("LineOffset"))
        lines.add_range(number, raw, start, start + as_int(frag.get("MatchLength")))


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


def display_units(payload: Mapping[str, Any]) -> int:
    """What `MaxMatchDisplayCount` counts in an answer: chunk `Ranges` plus line-mode
    `LineFragments` (§2.2). Pure."""
    return sum(
        sum(len(c.get("Ranges") or []) for c in fm.get("ChunkMatches") or [])
        + sum(len(lm.get("LineFragments") or []) for lm in fm.get("LineMatches") or [])
        for fm in payload.get("Files") or []
    )


def completeness(
    result: Mapping[str, Any],
    *,
    shown_files: int,
    shown_matches: int,
    max_files: int | None,
    offset: int = 0,
    match_display: int | None = None,
) -> tuple[bool, tuple[str, ...]]:
    """Whether a search result is partial, and why (§3.12), naming the limit that cut it.
    Pure. A page that ends before the last matching file is not partial: the caller
    pages on (its cursor) to the rest.

    Args:
        result: the `Result` object; its `Files` are the first `offset + max_files` files
            asked for (or fewer).
        shown_files / shown_matches: files and matches of the whole answer (all pages).
        max_files: the page size; offset: files before this page.
        match_display: the `MaxMatchDisplayCount` that was sent.
    """
    notes: list[str] = []
    file_count = as_int(result.get("FileCount"))
    match_count = as_int(result.get("MatchCount"))
    if max_files and shown_files < min(file_count, offset + max_files):
        budget = "MaxMatchDisplayCount" + (f" {match_display}" if match_display else "")
        notes.append(
            f"Zoekt's match display limit ({budget}) cut the results: its matches were all "
            f"spent on the first {shown_files} of {file_count} matching files, so the files "
            f"after them cannot be fetched. Narrow the query (repo:, file:, lang:) to reach them."
        )
    elif not max_files and shown_files < file_count:
        notes.append(f"Showing {shown_files} of {file_count} matching files.")
    elif shown_files >= file_count and shown_matches < match_count:
        why = f"Zoekt's MaxMatchDisplayCount {match_display}" if match_display else (
            "match display limit")
        notes.append(f"Showing {shown_matches} of {match_count} matches ({why}).")
    skipped = as_int(result.get("FilesSkipped"))
    if skipped:
        notes.append(
            f"Zoekt stopped early: {skipped} candidate files were not searched (its match "
            "limits ShardMaxMatchCount / TotalMaxMatchCount, or the MaxWallTime deadline); "
            "counts are lower bounds."
        )
    shards = as_int(result.get("ShardsSkipped"))
    if shards:
        notes.append(f"{shards} index shards were not searched: the search deadline expired.")
    crashes = as_int(result.get("Crashes"))
    if crashes:
        notes.append(
            f"{crashes} index shards failed or are still loading; results may be incomplete."
        )
    flush = _FLUSH_REASONS.get(as_int(result.get("FlushReason")))
    if flush:
        notes.append(f"Zoekt flushed results early ({flush}).")
    return bool(notes), tuple(notes)


def parse_search_result(
    payload: Mapping[str, Any],
    *,
    max_files: int | None = None,
    offset: int = 0,
    match_display: int | None = None,
) -> LexicalResult:
    """Decode the `Result` object of `/api/search` (same shape as a `/healthz` answer). Pure.

    Files keep Zoekt's ranking; inside a file, matches and blocks are in line order. The
    answer holds the first `offset + max_files` files: the result keeps the page from
    `offset` on. `max_files` and `match_display` (the limits sent) word the notes.
    """
    files: list[FileMatch] = []
    shown_matches = 0
    for fm in payload.get("Files") or []:
        record, shown = _file_match(fm)
        files.append(record)
        shown_matches += shown
    partial, notes = completeness(
        payload, shown_files=len(files), shown_matches=shown_matches, max_files=max_files,
        offset=offset, match_display=match_display,
    )
    end = None if max_files is None else offset + max_files
    return LexicalResult(
        files=files[offset:end],
        match_count=as_int(payload.get("MatchCount")),
        file_count=as_int(payload.get("FileCount")),
        duration_ms=as_int(payload.get("Duration")) / 1e6,
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
        return [(s, as_int(r["Start"].get("LineNumber"))) for s, r in pairs if s]
    # Mixed queries: no positional alignment (§3.5); attach each symbol to the
    # chunk's best line.
    best = as_int(chunk.get("BestLineMatch")) or as_int(ranges[0]["Start"].get("LineNumber"))
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
            line = as_int(lm.get("LineNumber"))
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
        files=as_int(stats.get("Documents")),
        content_bytes=as_int(stats.get("ContentBytes")),
        index_bytes=index_bytes if isinstance(index_bytes, int) else None,
        has_symbols=bool(repo.get("HasSymbols")),
        indexed_at=_time(meta.get("IndexTime")),
        latest_commit_date=_time(repo.get("LatestCommitDate")),
        languages=tuple(sorted(k for k in (meta.get("LanguageMap") or {}) if k)),
        shards=as_int(stats.get("Shards"), 1),
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
