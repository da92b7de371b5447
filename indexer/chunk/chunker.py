"""Cuts a file into checkpoints (chunks) sized in model tokens, and lists its symbols.

`chunk_file(path, text, opts, count_tokens)` returns `FileChunks(language, chunks,
symbols)`. Code is cut by syntax (`indexer.chunk.syntax`: tree-sitter definitions, within
`opts.parse_budget_ms`), Markdown and reStructuredText by headings, everything else (and
code whose parse fails or runs over the budget: `FileChunks.windows_reason` says so) by
overlapping line windows. A parsed code file's tree rides along in `FileChunks.parsed`
for the code graph (`indexer.graph`), so the file is parsed once.
`split_chunk(chunk, max_tokens, count_tokens)` re-splits one chunk that is too long
(the pipeline calls it when its header pushes a chunk over the model limit).

It calls the given `TokenCounter` once per file, on its distinct lines. Pure: no I/O.

How a file with definitions is cut:
- A definition that fits `max_tokens` is one piece, with its decorators and the
  comments directly above it. One that does not is cut into its nested definitions
  (a class into its methods) plus the code between them (the class header, fields),
  recursively; one without nested definitions is cut by lines into balanced parts
  near `target_tokens`, preferring blank lines and statement starts.
- The code between definitions (imports, module code) makes pieces too.
- Neighbouring whole pieces merge while they stay within `target_tokens`; a piece
  under `min_tokens` merges with a neighbour while they stay within `max_tokens`.
  The parts of a cut definition only take in such small neighbours.

Invariants of every chunk:
- `start_line`/`end_line` are 1-based and inclusive, and `text` is exactly those
  lines joined with `\\n` (lines are split on `\\n`; CRLF is normalised upstream).
  The one exception is a single line longer than `max_tokens`: it is cut by
  characters, each part a chunk with `start_line == end_line` and `text` a slice
  of the line (the parts concatenate to the line).
- No chunk has leading or trailing blank lines; every non-blank line of the file is
  in at least one chunk; chunks come in file order (windows overlap by
  `window_overlap_lines`, other chunks do not overlap).
- A chunk's token count is the sum of its lines' counts, which for WordPiece
  tokenizers equals the count of the joined text (lines are counted with their
  newline, which also keeps a characters-per-token estimate on the safe side);
  that sum never exceeds `max_tokens`.
- `symbol` is the qualified name of the innermost definition that encloses the
  whole chunk (`Retry.increment`; None for top-level code or a mix of top-level
  definitions), with its `symbol_kind` and `container`.

Symbols: every definition, `line` = the line of its name (after decorators), with
`end_line` its last line and `container` the qualified name of its parent.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ctxd.indexer.chunk.headings import markdown_sections, rst_sections
from ctxd.indexer.chunk.languages import Family, detect_language, family
from ctxd.indexer.chunk.options import ChunkOptions as ChunkOptions  # re-exported
from ctxd.indexer.chunk.syntax import (
    Definition,
    ParseBudgetExceeded,
    ParsedSource,
    iter_definitions,
    parse_source,
)
from ctxd.indexer.chunk.tokens import TokenCounter
from ctxd.indexer.models import Chunk, FileChunks, Symbol

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Piece:
    start: int
    """0-based first line."""
    end: int
    """0-based last line (inclusive)."""
    owner: Definition | None
    sealed: bool = False
    """Part of a cut definition or a cut gap: merges only with small neighbours."""
    text: str | None = None
    """Set only for a slice of one over-long line."""
    count: int = 0
    """The slice's word pieces (with `text`)."""


_CONTINUATIONS = (")", "]", "}", "else", "elif", "except", "finally", "catch", "case ")


class _Cutter:
    """The lines of one text with their token counts, and the cutting strategies."""

    def __init__(
        self,
        lines: Sequence[str],
        counts: Sequence[int],
        opts: ChunkOptions,
        count_tokens: TokenCounter,
    ) -> None:
        self.lines = lines
        self.opts = opts
        self.count_tokens = count_tokens
        self.max = max(opts.max_tokens, 1)
        self.target = min(max(opts.target_tokens, 1), self.max)
        self.blank = [not line.strip() for line in lines]
        self.long = [c > self.max for c in counts]
        prefix = [0] * (len(counts) + 1)
        total = 0
        for i, c in enumerate(counts):
            total += c
            prefix[i + 1] = total
        self.prefix = prefix

    # ---------------------------------------------------------------- helpers

    def tokens(self, start: int, end: int) -> int:
        return self.prefix[end + 1] - self.prefix[start]

    def trim(self, start: int, end: int) -> tuple[int, int]:
        """The range without leading and trailing blank lines (empty: start > end)."""
        blank = self.blank
        while start <= end and blank[start]:
            start += 1
        while end >= start and blank[end]:
            end -= 1
        return start, end

    def _boundary(self, cut: int, end: int, indent: Sequence[int], body_indent: int) -> float:
        """How good a place to cut after line `cut` is (higher is better).

        `indent[k]` is the indentation of line `k` (0-based, whole file or region)."""
        nxt = cut + 1
        if nxt > end:
            return 3.0
        if self.blank[nxt] or self.blank[cut]:
            return 2.0
        if self.lines[nxt].lstrip().startswith(_CONTINUATIONS):
            return 0.0
        if indent[nxt] <= body_indent:
            return 1.5
        if indent[nxt] < indent[cut]:
            return 0.5
        return 0.0

    # ---------------------------------------------------------------- strategies

    def split_lines(
        self, start: int, end: int, owner: Definition | None, target: int | None = None
    ) -> list[_Piece]:
        """Balanced parts of [start, end], each within max, near `target` tokens."""
        target = self.target if target is None else target
        out: list[_Piece] = []
        start, end = self.trim(start, end)
        lines = self.lines
        indent = [0] * start + [len(x) - len(x.lstrip()) for x in lines[start : end + 1]]
        body = [indent[i] for i in range(start + 1, end + 1) if not self.blank[i]]
        body_indent = min(body) if body else 0
        i = start
        while i <= end:
            while i <= end and self.blank[i]:
                i += 1
            if i > end:
                break
            if self.long[i]:
                out.extend(self.split_long_line(i, owner))
                i += 1
                continue
            remaining = self.tokens(i, end)
            hi = i
            while hi + 1 <= end and not self.long[hi + 1] and self.tokens(i, hi + 1) <= self.max:
                hi += 1
            if hi == end:
                out.append(_Piece(i, end, owner, sealed=True))
                break
            parts = max(math.ceil(remaining / target), 2)
            ideal = remaining / parts
            best, best_score = hi, -math.inf
            for cut in range(i, hi + 1):
                if self.blank[cut] and cut != hi:
                    continue
                size = self.tokens(i, cut)
                boundary = self._boundary(cut, end, indent, body_indent)
                score = 0.5 * boundary - abs(size - ideal) / ideal
                if size < 0.5 * ideal and cut != hi:
                    score -= 1.0
                if score > best_score:
                    best, best_score = cut, score
            s, e = self.trim(i, best)
            if s <= e:
                out.append(_Piece(s, e, owner, sealed=True))
            i = best + 1
        return out

    def split_long_line(self, i: int, owner: Definition | None) -> list[_Piece]:
        """A line over max tokens, cut by characters into parts that each fit."""
        line = self.lines[i]
        parts = _cut_text(line, math.ceil(self.tokens(i, i) / self.target))
        fitted: list[tuple[str, int]] = []
        counts = self.count_tokens(parts)
        pending = list(zip(parts, counts, strict=True))
        while pending:
            part, count = pending.pop(0)
            if count <= self.max or len(part) <= 1:
                fitted.append((part, count))
                continue
            halves = _cut_text(part, 2)
            pending[0:0] = list(zip(halves, self.count_tokens(halves), strict=True))
        return [_Piece(i, i, owner, sealed=True, text=part, count=n) for part, n in fitted
                if part]

    def windows(self, start: int, end: int) -> list[_Piece]:
        """Overlapping windows of about target tokens (text that is not code)."""
        out: list[_Piece] = []
        overlap = max(self.opts.window_overlap_lines, 0)
        covered = start - 1  # last line already in a window
        i = start
        while i <= end:
            while i <= end and self.blank[i]:
                i += 1
            if i > end:
                break
            if self.long[i]:
                out.extend(self.split_long_line(i, None))
                covered = i
                i += 1
                continue
            j = i
            while j + 1 <= end and not self.long[j + 1] and self.tokens(i, j + 1) <= self.target:
                j += 1
            if j < end:  # end the window at a paragraph break when one is near
                floor = max(i + (j - i) // 2, covered + 1)
                for c in range(j, floor, -1):
                    if self.blank[c]:
                        j = c - 1
                        break
            s, e = self.trim(i, j)
            out.append(_Piece(s, e, None))
            covered = j
            if j >= end:
                break
            # Overlap at most a quarter of the window: a window advances by most of its
            # size (short dense lines made 2-line windows step by one line).
            keep = min(overlap, (e - s + 1) // 4)
            nxt = max(e + 1 - keep, s + 1)
            if self.long[j + 1] or self.tokens(nxt, j + 1) > self.target:
                nxt = j + 1
            i = nxt
        return out

    # ---------------------------------------------------------------- structure

    def region(
        self, start: int, end: int, children: Sequence[Definition], owner: Definition | None
    ) -> list[_Piece]:
        """Pieces of [start, end]: child definitions and the gaps between them."""
        pieces: list[_Piece] = []
        cursor = start
        for child in children:
            cs = max(child.start_line - 1, cursor)
            ce = min(child.end_line - 1, end)
            if ce < cs:
                continue
            if cs > cursor:
                pieces.extend(self.gap(cursor, cs - 1, owner))
            pieces.extend(self.unit(child, cs, ce))
            cursor = ce + 1
        if cursor <= end:
            pieces.extend(self.gap(cursor, end, owner))
        return self.merge(pieces, owner)

    def unit(self, d: Definition, start: int, end: int) -> list[_Piece]:
        start, end = self.trim(start, end)
        if start > end:
            return []
        if self.tokens(start, end) <= self.max and not any(self.long[start : end + 1]):
            return [_Piece(start, end, d)]
        if d.children:
            pieces = self.region(start, end, d.children, d)
        else:
            pieces = self.split_lines(start, end, d)
        for p in pieces:
            p.sealed = True
        return pieces

    def gap(self, start: int, end: int, owner: Definition | None) -> list[_Piece]:
        start, end = self.trim(start, end)
        if start > end:
            return []
        if self.tokens(start, end) <= self.max and not any(self.long[start : end + 1]):
            return [_Piece(start, end, owner)]
        return self.split_lines(start, end, owner)

    def merge(self, pieces: list[_Piece], owner: Definition | None) -> list[_Piece]:
        """Merge neighbours: whole pieces up to target, then each piece under min_tokens
        into its smaller neighbour up to max."""
        out: list[_Piece] = []
        for p in pieces:
            if out and _whole(out[-1]) and _whole(p):
                prev = out[-1]
                if self.tokens(prev.start, p.end) <= self.target:
                    out[-1] = self._joined(prev, p, owner)
                    continue
            out.append(p)
        i = 0
        while i < len(out):
            p = out[i]
            if p.text is None and len(out) > 1 and self.size(p) < self.opts.min_tokens:
                options: list[tuple[int, int]] = []
                for j in (i - 1, i + 1):
                    if 0 <= j < len(out) and out[j].text is None:
                        a, b = min(i, j), max(i, j)
                        if self.tokens(out[a].start, out[b].end) <= self.max:
                            options.append((self.size(out[j]), j))
                if options:
                    j = min(options)[1]
                    a, b = min(i, j), max(i, j)
                    out[a] = self._joined(out[a], out[b], owner)
                    del out[b]
                    i = a
                    continue
            i += 1
        return out

    def size(self, p: _Piece) -> int:
        return self.tokens(p.start, p.end)

    def sizes(self, pieces: Sequence[_Piece]) -> list[int]:
        """Word pieces of each piece's text (`FileChunks.tokens`)."""
        return [p.count if p.text is not None else self.size(p) for p in pieces]

    @staticmethod
    def _joined(a: _Piece, b: _Piece, owner: Definition | None) -> _Piece:
        return _Piece(
            a.start, b.end, a.owner if a.owner is b.owner else owner, sealed=a.sealed or b.sealed
        )

    def to_chunks(self, pieces: Sequence[_Piece], offset: int = 0) -> list[Chunk]:
        chunks: list[Chunk] = []
        for p in pieces:
            text = p.text if p.text is not None else "\n".join(self.lines[p.start : p.end + 1])
            d = p.owner
            chunks.append(
                Chunk(
                    start_line=p.start + 1 + offset,
                    end_line=p.end + 1 + offset,
                    text=text,
                    symbol=d.qualname if d is not None else None,
                    symbol_kind=d.kind if d is not None else None,
                    container=d.container if d is not None else None,
                )
            )
        return chunks


def _whole(p: _Piece) -> bool:
    return not p.sealed and p.text is None


def _cut_text(text: str, parts: int) -> list[str]:
    """`text` cut into about `parts` slices of equal length, at whitespace when near."""
    parts = max(parts, 1)
    n = len(text)
    if parts == 1 or n <= 1:
        return [text]
    size = n / parts
    cuts = [0]
    for k in range(1, parts):
        ideal = int(k * size)
        lo = max(cuts[-1] + 1, ideal - int(size * 0.2))
        cut = ideal
        for pos in range(ideal, lo - 1, -1):
            if text[pos - 1].isspace() and not text[pos].isspace():
                cut = pos
                break
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(n)
    return [text[a:b] for a, b in itertools.pairwise(cuts) if b > a]


def split_lines_of(text: str) -> list[str]:
    """The lines of a text as the chunker numbers them (split on `\\n`, no final empty line)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def count_lines(lines: Sequence[str], count_tokens: TokenCounter) -> list[int]:
    """Tokens per line, each counted with its newline; one batch call on distinct lines."""
    distinct = list(dict.fromkeys(lines))
    texts = [line + "\n" for line in distinct]
    try:
        numbers = count_tokens(texts)
    except (TypeError, ValueError):  # e.g. lone surrogates from a lenient decode
        numbers = count_tokens([t.encode("utf-8", "replace").decode("utf-8") for t in texts])
    counts = dict(zip(distinct, numbers, strict=True))
    return [counts[line] for line in lines]


def _definitions(
    language: str, text: str, lines: Sequence[str], budget_ms: int
) -> tuple[list[Definition] | ParsedSource | None, str | None]:
    """The file's definitions (code: with its parse), and why a code file was cut into
    line windows instead (None when it was not, or when that is the rule for it: no
    grammar, mostly errors)."""
    fam = family(language)
    if fam is Family.MARKDOWN:
        return markdown_sections(lines), None
    if fam is Family.RST:
        return rst_sections(lines), None
    if fam is Family.CODE:
        budget_s = budget_ms / 1000 if budget_ms > 0 else None
        try:
            return parse_source(language, text, budget_s=budget_s), None
        except ParseBudgetExceeded:
            logger.info("%s parse over its %d ms budget: line windows", language, budget_ms)
            return None, (f"syntax parse over its {budget_ms} ms budget "
                          "(chunk.parse_budget_ms): cut into line windows")
        except (ValueError, RuntimeError, RecursionError) as exc:
            logger.warning("parse failed for a %s file, using line windows: %s", language, exc)
            return None, f"syntax parse failed ({type(exc).__name__}): cut into line windows"
    return None, None


def chunk_file(path: str, text: str, opts: ChunkOptions, count_tokens: TokenCounter) -> FileChunks:
    """Chunks and symbols of one file.

    Args:
        path: repo-relative POSIX path (picks the language).
        text: the file's content (`\\n` line ends).
        opts: chunk sizes in tokens.
        count_tokens: the embedding model's word-piece counter.

    Returns:
        `FileChunks(language, chunks, symbols)`; no chunks for an empty or
        whitespace-only file. Never raises for odd content: a language without a
        grammar, a parse that is mostly errors, fails or runs over
        `opts.parse_budget_ms`, is cut into line windows (the last two say so in
        `FileChunks.windows_reason`).
    """
    language = detect_language(path, text)
    if not text.strip():
        return FileChunks(language, [], [])
    lines = split_lines_of(text)
    found, windows_reason = _definitions(language, text, lines, opts.parse_budget_ms)
    parsed = found if isinstance(found, ParsedSource) else None
    defs = parsed.definitions if parsed is not None else found
    assert not isinstance(defs, ParsedSource)
    cutter = _Cutter(lines, count_lines(lines, count_tokens), opts, count_tokens)
    last = len(lines) - 1
    if defs is None:
        pieces = cutter.windows(0, last)
    elif not defs and family(language) is not Family.CODE:
        pieces = cutter.windows(0, last)
    else:
        pieces = cutter.region(0, last, defs, None)
    symbols = [
        Symbol(name=d.name, kind=d.kind, line=d.line, end_line=d.end_line, container=d.container)
        for d in iter_definitions(defs or [])
    ]
    return FileChunks(language=language, chunks=cutter.to_chunks(pieces), symbols=symbols,
                      tokens=cutter.sizes(pieces), windows_reason=windows_reason,
                      parsed=parsed)


def split_chunk(chunk: Chunk, max_tokens: int, count_tokens: TokenCounter) -> list[Chunk]:
    """Re-split a chunk so that each part's text fits `max_tokens`.

    Cuts by lines into balanced parts (a single over-long line by characters); every
    part keeps the chunk's symbol, kind and container, and its lines are numbered in
    the file. A chunk that already fits is returned as is.
    """
    if count_tokens([chunk.text])[0] <= max_tokens:
        return [chunk]
    lines = chunk.text.split("\n")
    counts = count_lines(lines, count_tokens)
    budget = max(max_tokens, 1)
    parts: list[Chunk] = [chunk]
    for _ in range(8):  # the budget shrinks only if a counter is not additive over lines
        opts = ChunkOptions(max_tokens=budget, target_tokens=budget, min_tokens=0)
        cutter = _Cutter(lines, counts, opts, count_tokens)
        pieces = cutter.split_lines(0, len(lines) - 1, None)
        parts = [
            Chunk(
                start_line=c.start_line,
                end_line=c.end_line,
                text=c.text,
                symbol=chunk.symbol,
                symbol_kind=chunk.symbol_kind,
                container=chunk.container,
            )
            for c in cutter.to_chunks(pieces, offset=chunk.start_line - 1)
        ]
        if all(n <= max_tokens for n in count_tokens([p.text for p in parts])):
            break
        budget = max(budget * 3 // 4, 1)
    return parts
