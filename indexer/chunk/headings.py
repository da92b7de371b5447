"""Sections of a document by its headings: Markdown and reStructuredText.

`markdown_sections(lines)` (ATX `## Title` and setext headings, fenced code and YAML
front matter skipped) and `rst_sections(lines)` (underlined and over+underlined
titles, levels in order of first appearance, as in docutils) return a forest of
`indexer.chunk.syntax.Definition`s of kind `section`, the same shape tree-sitter
definitions have, so the chunker cuts documents and code alike.

Pure: no I/O, no state.

Invariants: a section spans from its heading (an RST overline included) to the line
before the next heading of the same or a higher level, trailing blank lines left
out; subsections are its children; qualified names join the titles of the enclosing
sections with `SECTION_SEPARATOR` (`Usage > Retries`); lines are 1-based.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctxd.indexer.chunk.syntax import Definition

__all__ = ["SECTION_SEPARATOR", "markdown_sections", "rst_sections"]

SECTION_SEPARATOR = " > "
"""Joins a section's title to those of the sections around it in its qualified name."""


@dataclass(frozen=True, slots=True)
class _Heading:
    level: int
    name: str
    start: int
    """0-based first line (the overline or the text line)."""
    line: int
    """0-based line of the heading text."""


def _sections(headings: Sequence[_Heading], lines: Sequence[str]) -> list[Definition]:
    """Nest headings by level into section definitions spanning to the next heading of
    the same or a higher level (trailing blank lines left out)."""

    def last_nonblank(start: int, end: int) -> int:
        while end > start and not lines[end].strip():
            end -= 1
        return end

    n = len(lines)
    ends: list[int] = []
    for i, h in enumerate(headings):
        end = n - 1
        for later in headings[i + 1 :]:
            if later.level <= h.level:
                end = later.start - 1
                break
        ends.append(last_nonblank(h.line, end))

    def build(lo: int, hi: int, parent: Definition | None) -> tuple[Definition, ...]:
        out: list[Definition] = []
        i = lo
        while i < hi:
            h = headings[i]
            j = i + 1
            while j < hi and headings[j].level > h.level:
                j += 1
            container = parent.qualname if parent is not None else None
            qualname = f"{container}{SECTION_SEPARATOR}{h.name}" if container else h.name
            d = Definition(
                name=h.name,
                kind="section",
                qualname=qualname,
                container=container,
                start_line=h.start + 1,
                line=h.line + 1,
                end_line=ends[i] + 1,
            )
            children = build(i + 1, j, d)
            out.append(
                Definition(
                    name=d.name,
                    kind=d.kind,
                    qualname=d.qualname,
                    container=d.container,
                    start_line=d.start_line,
                    line=d.line,
                    end_line=d.end_line,
                    children=children,
                )
            )
            i = j
        return tuple(out)

    return list(build(0, len(headings), None))


_MD_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_MD_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MD_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_MD_NOT_PARAGRAPH = re.compile(r"^(?: {4,}|\t| {0,3}(?:[-*+>]|\d+[.)])(?:\s|$)| {0,3}<)")
_MD_INLINE = re.compile(r"[*_`]+")


def _md_heading_text(raw: str) -> str:
    return _MD_INLINE.sub("", raw).strip()


def markdown_sections(lines: Sequence[str]) -> list[Definition]:
    """Sections of a Markdown file by ATX (`## Title`) and setext headings.

    Fenced code blocks and a leading YAML front matter block are skipped.
    """
    headings: list[_Heading] = []
    n = len(lines)
    i = 0
    if n and lines[0].strip() == "---":
        for j in range(1, n):
            if lines[j].strip() in ("---", "..."):
                i = j + 1
                break
    fence: str | None = None
    prev_paragraph = False
    while i < n:
        line = lines[i]
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
            i += 1
            prev_paragraph = False
            continue
        fence_match = _MD_FENCE.match(line)
        if fence_match:
            fence = fence_match.group(1)
            i += 1
            prev_paragraph = False
            continue
        atx = _MD_ATX.match(line)
        if atx:
            name = _md_heading_text(atx.group(2) or "")
            if name:
                headings.append(_Heading(len(atx.group(1)), name, i, i))
            prev_paragraph = False
            i += 1
            continue
        setext = _MD_SETEXT.match(line)
        if setext and prev_paragraph and len(setext.group(1)) >= 2:
            name = _md_heading_text(lines[i - 1])
            level = 1 if setext.group(1)[0] == "=" else 2
            if name:
                headings.append(_Heading(level, name, i - 1, i - 1))
            prev_paragraph = False
            i += 1
            continue
        prev_paragraph = bool(line.strip()) and not _MD_NOT_PARAGRAPH.match(line)
        i += 1
    return _sections(headings, lines)


_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+[ \t]*$")


def rst_sections(lines: Sequence[str]) -> list[Definition]:
    """Sections of a reStructuredText file by underlined (and over+underlined) titles.

    Levels follow the order in which adornment styles first appear, as in docutils.
    A title needs a blank line (or another title) above it and an adornment at least
    as long as the title (or at least 4 characters).
    """
    styles: list[tuple[str, bool]] = []
    headings: list[_Heading] = []
    n = len(lines)
    i = 0
    after_title = True  # start of file counts as "blank above"

    def level_of(style: tuple[str, bool]) -> int:
        if style not in styles:
            styles.append(style)
        return styles.index(style) + 1

    while i < n:
        line = lines[i]
        adorn = _RST_ADORNMENT.match(line)
        blank_above = i == 0 or not lines[i - 1].strip() or after_title
        if adorn and i + 2 < n and blank_above:
            title = lines[i + 1].strip()
            under = _RST_ADORNMENT.match(lines[i + 2])
            if (
                title
                and not _RST_ADORNMENT.match(lines[i + 1])
                and under
                and under.group(1) == adorn.group(1)
                and len(lines[i + 2].rstrip()) == len(line.rstrip())
            ):
                level = level_of((adorn.group(1), True))
                headings.append(_Heading(level, title, i, i + 1))
                i += 3
                after_title = True
                continue
        if (
            i + 1 < n
            and blank_above
            and line.strip()
            and not line[0].isspace()
            and not adorn
            and not line.startswith(".. ")
        ):
            under = _RST_ADORNMENT.match(lines[i + 1])
            title = line.rstrip()
            if under:
                length = len(lines[i + 1].rstrip())
                if length >= len(title) or length >= 4:
                    level = level_of((under.group(1), False))
                    headings.append(_Heading(level, title.strip(), i, i))
                    i += 2
                    after_title = True
                    continue
        after_title = False
        i += 1
    return _sections(headings, lines)
