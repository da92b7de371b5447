"""A page of the embedded lexical engine's answer: ranked files turned into `FileMatch`es.

`file_match(plan, hit, context_lines, content, kept)` gives one ranked file its line
matches (one `LineMatch` per matching line, sorted; 1-based character columns, end
exclusive) and its context `Block`s (windows of `context_lines`, merged when they overlap
or touch, cut from the whole text at once when there are many: `context_blocks`), from the
matches the ranking pass kept, or by evaluating the file again. `doc_of` makes a
candidate's `Doc` from its kept text.

Called by `search.lexical.engine.EmbeddedLexical.search` for the files of the page only.
Pure over the `Doc`s (a text not read yet is loaded through the `Plan`).
"""

from __future__ import annotations

from ctxd.search.lexical.eval import Doc, FileEval, Plan, Row, utf8
from ctxd.search.lexical.file_score import Hit, Shaped, shape
from ctxd.search.lexical.rank import Span, columns, merge_windows
from ctxd.search.lexical.texts import FileText
from ctxd.search.models import Block, FileMatch, LineMatch

__all__ = ["LINES_PER_WINDOW", "context_blocks", "doc_of", "file_match"]


LINES_PER_WINDOW = 16
"""A shown file with a context window per this many lines or fewer has its whole text split
into lines once, rather than a decode per window (measured: a window's decode costs about
as much as splitting 16 lines)."""


def context_blocks(doc: Doc, windows: list[tuple[int, int]]) -> tuple[Block, ...]:
    """The context blocks of `windows`: each window's lines as `Doc.lines_text` gives them."""
    text = doc.text
    if len(windows) * LINES_PER_WINDOW < doc.line_count or not (text and doc.clean):
        return tuple(Block(lo, doc.lines_text(lo, hi)) for lo, hi in windows)
    lines = text.split("\n")  # a clean text's bytes decode to the text itself
    if "\r" in text:
        return tuple(Block(lo, tuple(t.rstrip("\r") for t in lines[lo - 1:hi]))
                     for lo, hi in windows)
    return tuple(Block(lo, tuple(lines[lo - 1:hi])) for lo, hi in windows)


def doc_of(row: Row, f: FileText | None) -> Doc:
    """A candidate's Doc, from its kept text (None: not read)."""
    if f is None:
        return Doc(row, None, path_bytes=utf8(row.path))
    return Doc(row, f.text, _data=f.data, path_bytes=utf8(row.path), _clean=f.clean)


def file_match(
    plan: Plan,
    hit: Hit,
    context_lines: int,
    content: FileText | None,
    kept: dict[int, tuple[Doc, Shaped]],
) -> FileMatch:
    """One ranked file with line text, columns and context blocks: as the ranking pass
    kept it, or evaluated again (from `content` when the page's batch read it)."""
    row = hit.row
    if row.id in kept:
        doc, shaped = kept[row.id]
    else:
        doc = doc_of(row, content)
        if plan.needs_content:
            plan.load_text(doc)
        ev = FileEval(plan, doc)
        ev.eval(plan.root)
        spans: list[Span] = []
        ev.collect(plan.root, spans)
        shaped = shape(spans, doc)
    matches: list[LineMatch] = []
    blocks: tuple[Block, ...] = ()
    if shaped.content:
        by_line = shaped.content
        lines = sorted(by_line)
        windows = merge_windows(lines, context_lines, doc.line_count)
        blocks = context_blocks(doc, windows)
        starts = doc.starts
        k, count = 0, len(lines)
        # each matching line lies in its window (decoded with it), but one past the
        # file's last line (`line_count`), whose text is read alone
        for block, (lo, hi) in [*zip(blocks, windows, strict=True), (None, (0, 0))]:
            while k < count and (block is None or lines[k] <= hi):
                line = lines[k]
                k += 1
                text = doc.line_text(line) if block is None else block.lines[line - lo]
                base = starts[line - 1]
                pieces = by_line[line]
                width = len(text) + 1
                ranges: tuple[tuple[int, int], ...]
                if text.isascii():  # so are its bytes: columns are byte offsets, inlined
                    at = base - 1
                    if len(pieces) == 1:  # most lines: no list to build
                        s, e = pieces[0]
                        e -= at
                        ranges = ((s - at, e if e < width else width),)
                    else:
                        ranges = tuple([(s - at, e - at if e - at < width else width)
                                        for s, e in pieces])
                else:
                    raw = doc.line_bytes(line)
                    ranges = tuple(
                        (a, min(b, width))
                        for a, b in (columns(raw, s - base, e - base) for s, e in pieces)
                    )
                matches.append(LineMatch(line, text, ranges))
    return FileMatch(
        repository=row.repo,
        path=row.path,
        language=row.language,
        score=hit.score,
        matches=tuple(matches),
        blocks=blocks,
    )
