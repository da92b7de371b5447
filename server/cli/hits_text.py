"""Search results as text for people, laid out the way ripgrep and git grep print theirs.

Pure layout (no printing, no colour codes): a page of hits becomes styled lines, lists of
`(text, style)` segments that `server/cli/styled.py` writes with or without colour.

- Hits are grouped under a heading per file (files in the order of their best hit).
- Each hit starts with `path:LINE` (its first matching line, or its first line) so that
  terminals and editors can jump there, and names its symbol (function, class).
- Then its lines, ripgrep style: `LINE:text` for a matching line (the matched words
  highlighted), `LINE-text` for a context line (dimmed), `--` between separate runs;
  indentation is kept. A lexical hit shows its matching lines' own numbers and their
  context, never one range spanning the file.
- Scores and engines only when `verbose` (`ctxd search -v`).
- A hit whose text is also elsewhere (identical copies answer once, `search.copies`)
  names those places on a line of its own: `also in: PATH:LINE, ...`.

`vimgrep_lines` (`path:line:col:text`, one per match) and `file_lines` (`-l`) are the
plain forms for editors and scripts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxd.search.models import Hit

Where = Callable[[str, str], str]
"""How a file is named for people: (repository, path) -> the path printed
(`server/cli/paths.py`)."""

Segment = tuple[str, str]
"""(text, style name); style "" is plain. Names: heading, path, line, match, context,
symbol, separator, meta (`server/cli/styled.py` maps them to colours)."""
StyledLine = list[Segment]

MAX_COLUMNS = 240
"""Longer lines are cut there (a minified file's line would fill the screen)."""


@dataclass(frozen=True, slots=True)
class TextOptions:
    """How much of each hit to show."""

    before: int = 2
    """Context lines before each matching line (`-B`, `-C`)."""
    after: int = 2
    """Context lines after each matching line (`-A`, `-C`)."""
    max_matches: int = 5
    """Matching lines shown per hit (the rest are counted on its first line)."""
    verbose: bool = False
    """Show each hit's score, engines and line range (`-v`)."""


def known_lines(hit: Hit) -> dict[int, str]:
    """The hit's lines that the page carries, by line number: its context blocks (a
    lexical hit) or its snippet, and every matching line."""
    lines: dict[int, str] = {}
    if hit.blocks:
        for block in hit.blocks:
            lines.update((block.start_line + i, t) for i, t in enumerate(block.lines))
    elif hit.snippet:
        lines.update((hit.start_line + i, t) for i, t in enumerate(hit.snippet.split("\n")))
    lines.update((m.line, m.text) for m in hit.matches)
    return lines


def anchors(hit: Hit, lines: dict[int, str]) -> list[int]:
    """The lines a hit is shown around: its matching lines, else its first non-blank
    line."""
    if hit.matches:
        return sorted({m.line for m in hit.matches})
    first = next((n for n in sorted(lines) if lines[n].strip()), hit.start_line)
    return [first]


def hit_rows(hit: Hit, opts: TextOptions) -> list[tuple[int, bool] | None]:
    """(line number, is an anchor) for each line to print, in order; None between runs
    of lines that are not adjacent."""
    lines = known_lines(hit)
    shown = anchors(hit, lines)[: opts.max_matches]
    wanted = {n for a in shown for n in range(a - opts.before, a + opts.after + 1)
              if n in lines}
    rows: list[tuple[int, bool] | None] = []
    previous = None
    for n in sorted(wanted):
        if previous is not None and n != previous + 1:
            rows.append(None)
        rows.append((n, n in shown))
        previous = n
    return rows


def _cut(text: str) -> str:
    return text if len(text) <= MAX_COLUMNS else text[:MAX_COLUMNS] + " …"


def highlighted(text: str, ranges: Sequence[tuple[int, int]]) -> StyledLine:
    """`text` split into plain and `match` segments by 1-based, end-exclusive columns;
    cut at `MAX_COLUMNS`."""
    out: StyledLine = []
    body = text[:MAX_COLUMNS]
    at = 0
    for a, b in sorted(ranges):
        a, b = max(a - 1, at), min(b - 1, len(body))
        if a >= b:
            continue
        if a > at:
            out.append((body[at:a], ""))
        out.append((body[a:b], "match"))
        at = b
    if at < len(body):
        out.append((body[at:], ""))
    if len(text) > MAX_COLUMNS:
        out.append((" …", ""))
    return out


MAX_COPIES = 3
"""Places of identical copies named on a hit's `also in:` line (the rest are counted)."""


def copies_line(hit: Hit, where: Where) -> str:
    """`also in: PATH:LINE, PATH:LINE (+N more)`, or "" when the hit has no copies; each
    LINE is the copy's line that matches the hit's own `path:LINE` (the texts are the same,
    so it lies as far from the copy's start as that line from the hit's)."""
    if not hit.also_in:
        return ""
    shift = anchors(hit, known_lines(hit))[0] - hit.start_line

    def line(start: int, end: int) -> int:
        return start + shift if start + shift <= end else start

    named = [f"{where(c.repository, c.path)}:{line(c.start_line, c.end_line)}"
             for c in hit.also_in[:MAX_COPIES]]
    more = len(hit.also_in) - MAX_COPIES
    return "also in: " + ", ".join(named) + (f" (+{more} more)" if more > 0 else "")


def hit_text(hit: Hit, where: str, opts: TextOptions, copies: str = "") -> list[StyledLine]:
    """One hit: its `path:LINE  symbol` line, its `also in:` line (`copies`, when it has
    copies), then its numbered lines."""
    lines = known_lines(hit)
    first = anchors(hit, lines)
    head: StyledLine = [(where, "path"), (":", ""), (str(first[0]), "line")]
    if hit.symbol:
        head += [("  ", ""), (hit.symbol, "symbol")]
    more = len(first) - opts.max_matches
    if more > 0:
        head.append((f"  (+{more} more matching lines)", "meta"))
    if opts.verbose:
        engines = "+".join(s.value for s in hit.sources)
        head.append((f"  [lines {hit.start_line}-{hit.end_line}, score {hit.score:.3f}, "
                     f"{engines}]", "meta"))
    out = [head]
    if copies:
        out.append([(copies, "meta")])
    ranges = {m.line: m.ranges for m in hit.matches}
    for row in hit_rows(hit, opts):
        if row is None:
            out.append([("--", "separator")])
            continue
        n, is_anchor = row
        if is_anchor:
            out.append([(str(n), "line"), (":", ""), *highlighted(lines[n], ranges.get(n, ()))])
        else:
            out.append([(str(n), "line"), ("-", ""), (_cut(lines[n]), "context")])
    return out


def page_text(hits: Sequence[Hit], where: Where, opts: TextOptions) -> list[StyledLine]:
    """A page of hits grouped under file headings, a blank line between files."""
    by_file: dict[str, list[Hit]] = {}
    for h in hits:
        by_file.setdefault(where(h.repository, h.path), []).append(h)
    out: list[StyledLine] = []
    for path, group in by_file.items():
        if out:
            out.append([])
        out.append([(path, "heading")])
        for h in group:
            out.extend(hit_text(h, path, opts, copies_line(h, where)))
    return out


def vimgrep_lines(hits: Sequence[Hit], where: Where) -> list[str]:
    """`path:line:column:text`, one per match (as `rg --vimgrep`); a hit without
    matching lines gives its first line, column 1."""
    out = []
    for h in hits:
        path = where(h.repository, h.path)
        if not h.matches:
            lines = known_lines(h)
            n = anchors(h, lines)[0]
            out.append(f"{path}:{n}:1:{lines.get(n, '')}")
            continue
        for m in h.matches:
            out.extend(f"{path}:{m.line}:{a}:{m.text}" for a, _b in (m.ranges or ((1, 1),)))
    return out


def file_lines(hits: Sequence[Hit], where: Where) -> list[str]:
    """Each file with a hit, once, best first (`-l`)."""
    return list(dict.fromkeys(where(h.repository, h.path) for h in hits))
